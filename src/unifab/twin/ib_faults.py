"""Faults on an InfiniBand twin as successive ``perfquery`` rounds (``ib/perfquery/<unix time>.txt``).

Each round holds, for every cabled HCA port and switch port, ``perfquery <lid> <port>`` (the PortCounters,
narrow and saturating) followed by ``perfquery -x <lid> <port>`` (the 64-bit PortCountersExtended: data and
packets only, as the simulator's PMA reports them), in the format :mod:`unifab.parse.ib.perfquery` reads and
:mod:`unifab.health.ib_series` turns into series. Faults, recorded in ``truth.json`` as
:func:`unifab.twin.faults.write_faults` records its own:

* ``ib-link-flap``: LinkDownedCounter rises at both ends, every few rounds (root: the ``link``);
* ``ib-marginal-link``: one end receives symbol errors by the thousand per round (the 16-bit SymbolErrorCounter
  saturates at 65535 within the run), port receive errors, and retrains (LinkErrorRecoveryCounter) (root: the
  receiving end's ``optic``);
* ``ib-slow-receiver``: an HCA drains slowly: its leaf port waits for credits (XmitWait share high, data low) and
  the spine ports feeding that leaf wait too, the congestion spreading upstream (root: the ``nic``).

On a mixed fabric (:func:`write_mixed_bundle`) the IB silo's rounds cover the Ethernet telemetry's hour and hold
half the faults (rounded down); :func:`unifab.twin.faults.write_faults` writes the Ethernet part on
:func:`ethernet_part`.

Noise that must stay quiet: a single link-down on one link, single symbol-error and discard blips, one
interval in which a port waits, and a ``perfquery -R`` on one port (its PortCounters drop to 0, the extended ones
do not).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from unifab import layout
from unifab.errors import UsageError
from unifab.model import Endpoint, Fabric, Link
from unifab.parse.ib.perfquery import COUNTER_BITS
from unifab.twin.files import write_text
from unifab.twin.ib_files import PERF_FIELDS

__all__ = [
    "IB_FAULT_KINDS",
    "STEP_S",
    "all_ib",
    "ethernet_part",
    "ib_links",
    "mixed",
    "write_ib_bundle",
    "write_ib_faults",
    "write_mixed_bundle",
]

IB_FAULT_KINDS = ("ib-link-flap", "ib-marginal-link", "ib-slow-receiver")
STEP_S = 60.0  # perfquery rounds run from one host over every port: minutes apart, not seconds
ROUNDS = 31
EXTENDED = ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts")


@dataclass(slots=True)
class _Port:
    end: Endpoint
    lid: int
    num: int
    hca: bool
    n: int = ROUNDS  # rounds in the run
    inc: dict[str, list[int]] = field(default_factory=dict)  # counter -> increment per round (round 0: the start)
    resets: set[int] = field(default_factory=set)  # rounds after a perfquery -R (PortCounters restart at 0)

    def add(self, counter: str, at: int, amount: int) -> None:
        self.inc.setdefault(counter, [0] * self.n)[at] += amount


def _lid_port(fabric: Fabric, end: Endpoint) -> tuple[int, int, bool] | None:
    nic = fabric.nic_at(end)
    if nic is not None:
        if nic.ib is None or nic.ib.lid is None:
            return None
        return nic.ib.lid, nic.ib.port_num or 1, True
    switch = fabric.switches.get(end.node)
    if switch is None or switch.lid is None or not end.port.isdigit():
        return None
    return switch.lid, int(end.port), False


def ib_links(fabric: Fabric) -> list[Link]:
    """The links both of whose ends have a LID (perfquery can read them)."""
    return [lk for lk in fabric.links if _lid_port(fabric, lk.a) and _lid_port(fabric, lk.b)]


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Rounds:
    def __init__(
        self, fabric: Fabric, links: list[Link], rng: random.Random, start: float, rounds: int = ROUNDS
    ) -> None:
        self.fabric, self.rng, self.n = fabric, rng, rounds
        self.times = [start + i * STEP_S for i in range(rounds)]
        self.ports: dict[Endpoint, _Port] = {}
        self.peer: dict[Endpoint, Endpoint] = {}
        self.links = links
        for lk in links:
            for near, far in ((lk.a, lk.b), (lk.b, lk.a)):
                found = _lid_port(fabric, near)
                assert found is not None
                self.ports[near] = _Port(near, *found, rounds)
                self.peer[near] = far
        for p in self.ports.values():  # traffic: words per round, and a little credit wait
            p.inc["PortXmitData"] = [rng.randrange(10**6, 10**7) for _ in range(self.n)]
            p.inc["PortRcvData"] = [rng.randrange(10**6, 10**7) for _ in range(self.n)]
            p.inc["PortXmitPkts"] = [d // 1024 for d in p.inc["PortXmitData"]]
            p.inc["PortRcvPkts"] = [d // 1024 for d in p.inc["PortRcvData"]]
            p.inc["PortXmitWait"] = [d * rng.randrange(0, 3) // 100 for d in p.inc["PortXmitData"]]
            p.inc["PortXmitData"][0] = rng.randrange(0, 10**9)
        self.used: set[Endpoint] = set()
        self.used_hosts: set[str] = set()

    def _hosts(self, ends: list[Endpoint]) -> set[str]:
        return {e.node for e in ends if e.node in self.fabric.hosts}

    def _free(self, links: list[Link]) -> list[Link]:
        return [
            lk
            for lk in links
            if lk.a not in self.used and lk.b not in self.used and not self._hosts([lk.a, lk.b]) & self.used_hosts
        ]

    def _take(self, ends: list[Endpoint]) -> None:
        self.used.update(ends)
        self.used_hosts |= self._hosts(ends)

    def _truth(self, kind: str, root_kind: str, root: str, at: int, hosts: set[str]) -> dict[str, Any]:
        jobs = sorted(j.id for j in self.fabric.jobs.values() if hosts.intersection(j.hosts))
        return {
            "kind": kind,
            "root_cause": {"kind": root_kind, "id": root},
            "start": _iso(self.times[at - 1]),  # the start of the first interval with the fault's increments
            "jobs": jobs,
            "hosts": sorted(hosts),
        }

    def fault(self, kind: str) -> dict[str, Any] | None:
        rng, at = self.rng, self.rng.randrange(2, self.n // 3)
        if kind == "ib-slow-receiver":
            return self._slow_receiver(at)
        free = self._free(self.links)
        if not free:
            return None
        link = rng.choice(free)
        self._take([link.a, link.b])
        hosts = self._hosts([link.a, link.b])
        if kind == "ib-link-flap":
            for i in range(at, self.n, 3):
                self.ports[link.a].add("LinkDownedCounter", i, 1)
                self.ports[link.b].add("LinkDownedCounter", i, 1)
            return self._truth(kind, "link", link.id, at, hosts)
        end = rng.choice((link.a, link.b))  # ib-marginal-link: this end receives the errors
        port = self.ports[end]
        for i in range(at, self.n):
            port.add("SymbolErrorCounter", i, rng.randrange(3000, 9000))  # saturates at 65535 within the run
            port.add("PortRcvErrors", i, rng.randrange(1, 20))
            if (i - at) % 2 == 0:
                port.add("LinkErrorRecoveryCounter", i, 1)
        return self._truth(kind, "optic", f"optic:{end.node}:{end.port}", at, hosts)

    def _slow_receiver(self, at: int) -> dict[str, Any] | None:
        rng = self.rng
        hca_links = [lk for lk in self._free(self.links) if self.ports[lk.a].hca != self.ports[lk.b].hca]
        for link in rng.sample(hca_links, len(hca_links)):
            hca = link.a if self.ports[link.a].hca else link.b
            leaf = self.peer[hca]
            feeders = [
                e
                for e, p in self.ports.items()
                if not p.hca and self.peer[e].node == leaf.node and e not in self.used and e.node != leaf.node
            ]
            if not feeders:
                continue
            victims = rng.sample(feeders, min(2, len(feeders)))
            self._take([hca, leaf, *victims])
            for i in range(at, self.n):
                _starve(self.ports[leaf], i, rng.uniform(0.75, 0.95))
                for v in victims:
                    _starve(self.ports[v], i, rng.uniform(0.55, 0.7))
            nic = self.fabric.nic_at(hca)
            assert nic is not None
            return self._truth("ib-slow-receiver", "nic", nic.id, at, {hca.node})
        return None

    def host_dead(self, host: str, t: float) -> None:
        """An Ethernet fault took ``host`` whole (every NIC erroring and flapping from time ``t``): its HCAs do too,
        and the leaf ports facing them see the flaps (the first round counting them ends after ``t``)."""
        at = math.ceil((t - self.times[0]) / STEP_S) + 1
        if not 1 <= at < self.n:
            return
        hcas = [e for e, p in self.ports.items() if p.hca and e.node == host]
        self._take([*hcas, *(self.peer[e] for e in hcas)])
        for end in hcas:
            for i in range(at, self.n):
                self.ports[end].add("SymbolErrorCounter", i, self.rng.randrange(20, 200))
            for i in range(at, self.n, 3):
                self.ports[end].add("LinkDownedCounter", i, 1)
                self.ports[self.peer[end]].add("LinkDownedCounter", i, 1)

    def noise(self) -> None:
        rng = self.rng
        free = self._free(self.links)
        if not free:
            return
        flap = rng.choice(free)
        at = rng.randrange(1, self.n)
        self.ports[flap.a].add("LinkDownedCounter", at, 1)
        self.ports[flap.b].add("LinkDownedCounter", at, 1)
        quiet = [e for e in self.ports if e not in self.used]
        for _ in range(max(3, len(quiet) // 20)):
            end = rng.choice(quiet)
            self.ports[end].add(rng.choice(("SymbolErrorCounter", "PortRcvErrors")), rng.randrange(1, self.n), 2)
        switch_ports = [e for e in quiet if not self.ports[e].hca]
        if switch_ports:
            self.ports[rng.choice(switch_ports)].add("PortXmitDiscards", rng.randrange(1, self.n), 3)
            _starve(self.ports[rng.choice(switch_ports)], rng.randrange(1, self.n), 0.9)  # one burst
        reset = self.ports[rng.choice(quiet)]
        reset.resets.add(rng.randrange(2, self.n))

    def write(self, bundle: Path) -> None:
        values: dict[Endpoint, list[dict[str, int]]] = {e: _values(p) for e, p in self.ports.items()}
        order = sorted(self.ports.values(), key=lambda p: (p.lid, p.num))
        for i, t in enumerate(self.times):
            lines: list[str] = []
            for p in order:
                row = values[p.end][i]
                cap = "0x1200" if p.hca else "0x1300"
                lines.append(f"# Port counters: Lid {p.lid} port {p.num} (CapMask: {cap})")
                lines.append(f"{'PortSelect:':.<33}{p.num}")
                lines.append(f"{'CounterSelect:':.<33}0x0000")
                for name in PERF_FIELDS:
                    value = "0x00" if name == "CounterSelect2" else str(row.get(name, 0))
                    lines.append(f"{name + ':':.<33}{value}")
                lines.append(f"# Port extended counters: Lid {p.lid} port {p.num} (CapMask: {cap} CapMask2: 0x0000000)")
                lines.append(f"{'PortSelect:':.<33}{p.num}")
                lines.append(f"{'CounterSelect:':.<33}0x0000")
                for name in EXTENDED:
                    lines.append(f"{name + ':':.<33}{row['x' + name]}")
                for name in ("Unicast", "Multicast"):
                    lines.append(f"{f'Port{name}XmitPkts:':.<33}0")
                    lines.append(f"{f'Port{name}RcvPkts:':.<33}0")
            write_text(bundle / "ib" / "perfquery" / f"{int(t)}.txt", "\n".join(lines) + "\n")


def _starve(port: _Port, at: int, share: float) -> None:
    """One round in which the port mostly waited: its data falls, its wait ticks make up ``share``."""
    data = port.inc["PortXmitData"]
    data[at] = max(1, data[at] // 10)
    port.inc["PortXmitWait"][at] = int(data[at] * share / (1 - share))


def _values(port: _Port) -> list[dict[str, int]]:
    """Per round the PortCounters (saturating at their width, restarting after a reset) and the extended ones."""
    out: list[dict[str, int]] = []
    basic: dict[str, int] = {}
    extended: dict[str, int] = {}
    for i in range(port.n):
        if i in port.resets:
            basic = {}
        row: dict[str, int] = {}
        for name, inc in port.inc.items():
            top = 2 ** COUNTER_BITS.get(name, 32) - 1
            basic[name] = min(top, basic.get(name, 0) + inc[i])
            row[name] = basic[name]
            if name in EXTENDED:
                extended[name] = extended.get(name, 0) + inc[i]
                row["x" + name] = extended[name]
        out.append(row)
    return out


def write_ib_faults(
    bundle: Path, fabric: Fabric, n_faults: int, seed: int, start: float, rounds: int = ROUNDS
) -> list[dict[str, Any]]:
    """``ib/perfquery/<t>.txt`` rounds of every IB link of ``fabric`` with ``n_faults`` faults (kinds cycled in
    :data:`IB_FAULT_KINDS` order) and noise; returns the faults' truth entries (fewer than ``n_faults`` when the fabric
    has no free place for one: :func:`write_ib_bundle` says so)."""
    rng = random.Random(seed)
    timeline = _Rounds(fabric, ib_links(fabric), rng, start, rounds)
    faults: list[dict[str, Any]] = []
    for i in range(n_faults):
        entry = timeline.fault(IB_FAULT_KINDS[i % len(IB_FAULT_KINDS)])
        if entry is None:
            break
        faults.append(entry)
    timeline.noise()
    timeline.write(bundle)
    return faults


def _place(rounds: _Rounds, n_faults: int) -> list[dict[str, Any]]:
    """``n_faults`` faults, kinds cycled in :data:`IB_FAULT_KINDS` order, a kind with no free place left out."""
    faults: list[dict[str, Any]] = []
    for i in range(n_faults):
        entry = None
        for k in range(len(IB_FAULT_KINDS)):
            entry = rounds.fault(IB_FAULT_KINDS[(i + k) % len(IB_FAULT_KINDS)])
            if entry is not None:
                break
        if entry is None:
            break
        faults.append(entry)
    return faults


def all_ib(fabric: Fabric) -> bool:
    """Every link of ``fabric`` is an InfiniBand one (``--fabric ib``): its faults are perfquery rounds."""
    return bool(fabric.links) and len(ib_links(fabric)) == len(fabric.links)


# Set while write_mixed_bundle runs write_faults again for the Ethernet part of a mixed fabric
_ETHERNET_PASS: ContextVar[bool] = ContextVar("unifab_twin_ethernet_pass", default=False)


def mixed(fabric: Fabric) -> bool:
    """InfiniBand links beside Ethernet ones (``--fabric mixed``), outside the Ethernet pass of
    :func:`write_mixed_bundle`: the IB silo's counters are perfquery rounds, the rest telemetry."""
    return not _ETHERNET_PASS.get() and bool(ib_links(fabric)) and not all_ib(fabric)


def ethernet_part(fabric: Fabric) -> Fabric:
    """In the Ethernet pass of :func:`write_mixed_bundle`: ``fabric`` without its IB silo (links, switches and
    hosts' HCAs of fabric kind ``ib``), so the telemetry and its faults stay on Ethernet; else ``fabric`` itself."""
    if not _ETHERNET_PASS.get():
        return fabric
    hosts = {
        name: replace(h, nics={k: n for k, n in h.nics.items() if n.fabric != "ib"}) for name, h in fabric.hosts.items()
    }
    return replace(
        fabric,
        hosts=hosts,
        switches={name: s for name, s in fabric.switches.items() if s.fabric != "ib"},
        links=[lk for lk in fabric.links if fabric.link_fabric(lk) != "ib"],
    )


def write_mixed_bundle(
    bundle: Path,
    fabric: Fabric,
    n_faults: int,
    seed: int,
    start: float,
    duration_s: float,
    ethernet: Callable[[int], list[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """A mixed fabric's faults: ``ethernet(n)`` (write_faults again, on :func:`ethernet_part`) writes the Ethernet
    telemetry with the first half of the faults (rounded up), then perfquery rounds of the IB silo over the same
    ``duration_s`` hold the other half, on hosts no Ethernet fault took (an Ethernet ``host-dead`` host's HCAs err
    and flap with its NICs). ``truth.json``: ``faults`` holds both, ``telemetry`` the Ethernet run's,
    ``ib_telemetry`` the rounds'."""
    n_ib = n_faults // 2
    token = _ETHERNET_PASS.set(True)
    try:
        faults = ethernet(n_faults - n_ib)
    finally:
        _ETHERNET_PASS.reset(token)
    rounds = _Rounds(fabric, ib_links(fabric), random.Random(f"ib:{seed}"), start, int(duration_s // STEP_S) + 1)
    rounds.used_hosts |= {h for f in faults for h in f.get("hosts", ())}
    for f in faults:
        if f["kind"] == "host-dead":
            rounds.host_dead(f["root_cause"]["id"].removeprefix("host:"), _epoch(f["start"]))
    ib = _place(rounds, n_ib)
    if len(ib) < n_ib:
        raise UsageError(f"{bundle}: too small for {n_ib} InfiniBand faults beside {len(faults)} Ethernet ones")
    rounds.noise()
    rounds.write(bundle)
    path = bundle / layout.TRUTH
    truth: dict[str, Any] = orjson.loads(path.read_bytes())
    truth["faults"] = [*faults, *ib]
    truth["ib_telemetry"] = _telemetry(start, rounds.n, seed)
    path.write_bytes(orjson.dumps(truth, option=orjson.OPT_INDENT_2) + b"\n")
    return [*faults, *ib]


def _epoch(iso: str) -> float:
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def _telemetry(start: float, rounds: int, seed: int) -> dict[str, Any]:
    return {"start": _iso(start), "step_s": STEP_S, "samples": rounds, "seed": seed, "format": "perfquery"}


def write_ib_bundle(
    bundle: Path, fabric: Fabric, n_faults: int, seed: int, start: float, rounds: int = ROUNDS
) -> list[dict[str, Any]]:
    """:func:`write_ib_faults`, then ``truth.json``'s ``faults`` and ``telemetry`` (as write_faults records
    them). Raises :class:`~unifab.errors.UsageError` when the fabric cannot hold the faults apart."""
    faults = write_ib_faults(bundle, fabric, n_faults, seed, start, rounds)
    if len(faults) < n_faults:
        raise UsageError(f"{bundle}: too small for {n_faults} InfiniBand faults that share no host or link")
    path = bundle / layout.TRUTH
    truth: dict[str, Any] = orjson.loads(path.read_bytes()) if path.is_file() else {}
    truth["faults"] = faults
    truth["telemetry"] = _telemetry(start, rounds, seed)
    path.write_bytes(orjson.dumps(truth, option=orjson.OPT_INDENT_2) + b"\n")
    return faults
