"""Scoring root causes and impacted jobs against a twin's truth (``truth.json`` ``"faults"``), for any method.

A method's answer is a list of predictions (a root cause entity id and when it was raised): unifab's incidents,
or the alerts and blamed links of :mod:`unifab.health.baselines`. Two ways to match a prediction with a fault:

* **exact**: the prediction names the fault's root cause (``link:a--b`` for a bad cable, ``switch:leaf3`` for a
  dead leaf): what an operator can act on without a second investigation;
* **located**: it names the root or a part of it (:func:`members`): for a link its ends and optics; for an optic
  its end and link; for a NIC its link, the link's optics and the leaf port; for a host its NICs, GPUs, links and
  their optics and leaf ports; for a switch its ports, links and their optics. An alert on the leaf port of a
  flapping cable is located, and so is every port alert of a dead leaf; the far ends' NICs are not (they are
  symptoms elsewhere).

Precision is the share of distinct predictions that match a fault, recall the share of faults some prediction
matches, F1 their harmonic mean. Time to incident: for each fault found, the earliest matching prediction's
time minus the fault's start. Jobs: a prediction names the jobs running on the hosts its entity touches
(:func:`hosts_of`); unifab's incidents name their own (``Incident.jobs``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from unifab.health.baselines import Prediction
from unifab.model import Endpoint, Fabric, Link

__all__ = ["EMPTY", "Entities", "JobScore", "RootScore", "epoch", "jobs_named", "score_jobs", "score_roots"]


def epoch(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Entities:
    """Entity ids of a Fabric resolved to its parts: the cable ends, links and hosts an id stands for."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.link_of: dict[Endpoint, Link] = {}
        self.links: dict[str, Link] = {}
        self.by_node: dict[str, list[Link]] = {}
        for link in fabric.links:
            self.links[link.id] = link
            self.link_of.setdefault(link.a, link)
            self.link_of.setdefault(link.b, link)
            for node in {link.a.node, link.b.node}:
                self.by_node.setdefault(node, []).append(link)
        self.ends: dict[str, Endpoint] = {}
        for host in fabric.hosts.values():
            for nic in host.nics.values():
                self.ends[nic.id] = nic.endpoint
        for switch in fabric.switches.values():
            for port in switch.ports.values():
                self.ends[port.id] = port.endpoint

    def end_id(self, end: Endpoint) -> str:
        nic = self.fabric.nic_at(end)
        return nic.id if nic is not None else f"port:{end.node}:{end.port}"

    def _link_parts(self, link: Link) -> set[str]:
        return {link.id, self.end_id(link.a), self.end_id(link.b)} | {
            f"optic:{e.node}:{e.port}" for e in (link.a, link.b)
        }

    def members(self, root: str) -> set[str]:
        """The root and its parts (see the module)."""
        kind, _, rest = root.partition(":")
        out = {root}
        if kind == "link" and root in self.links:
            out |= self._link_parts(self.links[root])
        elif kind == "optic":
            node, _, port = rest.partition(":")
            end = Endpoint(node, port)
            out.add(self.end_id(end))
            if (link := self.link_of.get(end)) is not None:
                out.add(link.id)
        elif kind in ("nic", "port") and root in self.ends:
            if (link := self.link_of.get(self.ends[root])) is not None:
                out |= self._link_parts(link)
        elif kind == "host" and (host := self.fabric.hosts.get(rest)) is not None:
            for link in self.by_node.get(rest, []):
                out |= self._link_parts(link)
            out |= {g.id for g in host.gpus.values()} | {n.id for n in host.nics.values()}
        elif kind == "switch" and (switch := self.fabric.switches.get(rest)) is not None:
            for link in self.by_node.get(rest, []):  # its links and optics; the far ends' NICs are symptoms
                out |= {link.id} | {f"optic:{e.node}:{e.port}" for e in (link.a, link.b)}
            out |= {p.id for p in switch.ports.values()}
        return out

    def hosts_of(self, entity: str) -> set[str]:
        """The hosts an entity touches: its own, or the hosts at the ends of its links."""
        kind, _, rest = entity.partition(":")
        node = rest.partition(":")[0]
        if kind in ("host", "nic", "gpu") or (kind == "optic" and node in self.fabric.hosts):
            return {node}
        if kind == "link" and entity in self.links:
            ends = (self.links[entity].a, self.links[entity].b)
            return {e.node for e in ends if e.node in self.fabric.hosts}
        if kind in ("optic", "port"):
            end = self.ends.get(entity) if kind == "port" else Endpoint(node, rest.partition(":")[2])
            found = self.link_of.get(end) if end is not None else None
            return {e.node for e in (found.a, found.b) if e.node in self.fabric.hosts} if found else set()
        if kind == "switch":
            return {
                e.node for link in self.by_node.get(node, []) for e in (link.a, link.b) if e.node in self.fabric.hosts
            }
        return set()

    def jobs_of(self, entity: str) -> set[str]:
        hosts = self.hosts_of(entity)
        return {j.id for j in self.fabric.jobs.values() if hosts.intersection(j.hosts)}


@dataclass(frozen=True, slots=True)
class RootScore:
    predictions: int
    correct: int  # predictions that match a fault
    faults: int
    found: int  # faults some prediction matches
    latencies: tuple[float, ...]  # seconds from each found fault's start to its first matching prediction
    missed: tuple[str, ...]  # roots of faults nothing matched
    wrong: tuple[str, ...]  # predictions that match no fault (first few)

    @property
    def precision(self) -> float:
        return self.correct / self.predictions if self.predictions else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.faults if self.faults else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def median_latency(self) -> float | None:
        return statistics.median(self.latencies) if self.latencies else None

    def add(self, other: RootScore) -> RootScore:
        """Pooled over runs (micro-averaged)."""
        return RootScore(
            self.predictions + other.predictions,
            self.correct + other.correct,
            self.faults + other.faults,
            self.found + other.found,
            self.latencies + other.latencies,
            self.missed + other.missed,
            self.wrong + other.wrong,
        )


EMPTY = RootScore(0, 0, 0, 0, (), (), ())


def score_roots(
    predictions: Sequence[Prediction], faults: Sequence[Mapping[str, Any]], entities: Entities, *, exact: bool
) -> RootScore:
    """Match distinct predicted roots with the faults (exactly, or located on them: the module)."""
    first: dict[str, float] = {}
    for p in predictions:
        first[p.root] = min(p.time, first.get(p.root, p.time))
    targets = [({f["root_cause"]["id"]} if exact else entities.members(f["root_cause"]["id"]), f) for f in faults]
    correct = [r for r in first if any(r in t for t, _ in targets)]
    latencies, missed = [], []
    for t, fault in targets:
        times = [first[r] for r in t if r in first]
        if times:
            latencies.append(max(0.0, min(times) - epoch(fault["start"])))
        else:
            missed.append(fault["root_cause"]["id"])
    wrong = sorted(r for r in first if r not in set(correct))
    return RootScore(
        len(first),
        len(correct),
        len(faults),
        len(faults) - len(missed),
        tuple(latencies),
        tuple(missed),
        tuple(wrong[:20]),
    )


@dataclass(frozen=True, slots=True)
class JobScore:
    named: frozenset[str]
    truth: frozenset[str]

    @property
    def missed(self) -> frozenset[str]:
        return self.truth - self.named

    @property
    def unaffected(self) -> frozenset[str]:
        return self.named - self.truth

    @property
    def precision(self) -> float:
        return len(self.named & self.truth) / len(self.named) if self.named else 1.0

    @property
    def recall(self) -> float:
        return len(self.named & self.truth) / len(self.truth) if self.truth else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def score_jobs(named: Iterable[str], faults: Sequence[Mapping[str, Any]]) -> JobScore:
    return JobScore(frozenset(named), frozenset(j for f in faults for j in f["jobs"]))


def jobs_named(predictions: Iterable[Prediction], entities: Entities) -> set[str]:
    """The jobs a baseline's predictions name: those on the hosts their entities touch."""
    return {j for p in predictions for j in entities.jobs_of(p.root)}
