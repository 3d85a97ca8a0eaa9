"""Faults as telemetry: counter timelines of a twin bundle's NICs and switch ports, with faults and noise in them.

:func:`write_faults` reads a bundle's Fabric (any bundle with links: a twin's, or a real one), writes one
``telemetry/<device>.om`` per device (OpenMetrics with timestamps, the metrics of
:data:`unifab.health.series.METRICS`) and records each fault in ``truth.json`` under ``"faults"`` in DESIGN's
ground-truth format (kind, root cause entity, start, the jobs it hurts).

Fault kinds: a flapping link (both ends count link-downs), a dirty optic (one end receives uncorrected errors,
rising), lossless drops on one NIC, a dead-ish host (every NIC erroring and flapping), a leaf port whose lossless
egress queue drops (headroom too small on that hop: its queue's drop counter rises and the NIC it feeds counts
out-of-sequence packets; the root cause is the port), and the kinds of
:mod:`unifab.twin.faults_extra` (dead leaf, host and NIC, an optic whose DOM alarms, GPU Xids, NCCL errors from a
bad link, a PFC storm from a stuck receiver), and the NCCL RAS reports of the jobs a dead host or a GPU off the bus
stops (:mod:`unifab.twin.ras_files`). Faults never share a host or a link end (a GPU or NIC fault may
share a host with another one).
Background noise everywhere else is what a detector must not report: benign pause time, a single
flap on some link, a few single-interval error blips (one of them a few drops in a switch port's lossless queue),
a NIC whose driver reloads (every counter reset), a 64-bit counter that wraps, and a host whose scrapes are missed
for a while (a gap); :func:`faults_extra.noise` adds its own. Every linked end also has a link-state gauge and
healthy congestion-control counters (ECN marks, CNPs).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from unifab import layout
from unifab.collect.bundle import load_bundle
from unifab.errors import UsageError
from unifab.health.openmetrics import Sample, dump
from unifab.model import Endpoint, Fabric, Link, Nic, host_id, port_id
from unifab.twin import faults_extra, ib_faults, ras_files
from unifab.twin.files import write_text
from unifab.twin.scheduler_files import START_EPOCH

__all__ = [
    "DEFAULT_DURATION_S",
    "FAULT_KINDS",
    "MAX_DURATION_S",
    "MIN_DURATION_S",
    "TELEMETRY_START",
    "check_duration",
    "write_faults",
]

TELEMETRY_START = START_EPOCH + 3600  # an hour after the twin's jobs started
DEFAULT_DURATION_S = 3600.0  # the timelines' span; an InfiniBand twin's perfquery rounds span ib_faults.ROUNDS
MIN_DURATION_S = 600.0  # room for a fault to start after the baseline and be seen over several samples
MAX_DURATION_S = 86400.0  # a day: 2,881 samples per series at the 30 s step
FAULT_KINDS = ("link-flap", "optic-dirty", "lossless-drops", "host-dead", *faults_extra.KINDS, "queue-drops")
PRIO = "3"  # the RoCE priority the twin's QoS makes lossless
_RDMA = {
    "out_of_sequence": "out_of_sequence",
    "packet_seq_err": "packet_seq_err",
    "local_ack_timeout_err": "local_ack_timeout_err",
    "ecn_marked": "np_ecn_marked_roce_packets",
    "cnp_sent": "np_cnp_sent",
    "cnp_handled": "rp_cnp_handled",
}


@dataclass(slots=True)
class _Counter:
    """One series as the twin writes it: a start value, an increment per interval, and what goes wrong."""

    metric: str
    labels: tuple[tuple[str, str], ...]
    start: int
    increments: list[int]
    width: int = 64
    resets: set[int] = field(default_factory=set)  # sample indices where the counter restarts from 0
    stop: int | None = None  # samples from this index on are not written (the device or NIC died)

    def values(self) -> list[int]:
        out, value = [], self.start
        for i in range(len(self.increments) + 1):
            if i in self.resets:
                value = 0
            out.append(value % 2**self.width)
            if i < len(self.increments):
                value += self.increments[i]
        return out


class _Timelines:
    def __init__(self, fabric: Fabric, rng: random.Random, samples: int, step_s: float) -> None:
        self.fabric, self.rng, self.samples, self.step = fabric, rng, samples, step_s
        self.devices: dict[str, dict[str, _Counter]] = {}  # device -> key -> counter
        self.missing: dict[str, set[int]] = {}  # device -> sample indices not scraped

    def counter(self, device: str, metric: str, labels: dict[str, str], start: int = 0, width: int = 64) -> _Counter:
        key = metric + repr(sorted(labels.items()))
        per = self.devices.setdefault(device, {})
        if key not in per:
            full = tuple(sorted({"instance": device, **labels}.items()))
            per[key] = _Counter(metric, full, start, [0] * (self.samples - 1), width)
        return per[key]

    def nic(self, nic: Nic, counter: str) -> _Counter:
        if counter in _RDMA:
            return self.counter(
                nic.host, f"unifab_rdma_{_RDMA[counter]}_total", {"device": nic.rdma_dev or nic.netdev, "port": "1"}
            )
        if counter == "oper_up":
            return self.counter(nic.host, "node_network_up", {"device": nic.netdev})
        if counter == "pause_rx_us":
            return self.counter(
                nic.host, "unifab_nic_rx_pause_duration_us_total", {"device": nic.netdev, "priority": PRIO}
            )
        if counter == "carrier_changes":
            return self.counter(nic.host, "node_network_carrier_changes_total", {"device": nic.netdev}, width=32)
        if counter == "pause_tx_us":
            return self.counter(
                nic.host, "unifab_nic_tx_pause_duration_us_total", {"device": nic.netdev, "priority": PRIO}
            )
        return self.counter(nic.host, f"unifab_nic_rx_{counter}_total", {"device": nic.netdev})

    def port(self, end: Endpoint, counter: str) -> _Counter:
        names = {
            "link_down": "unifab_port_link_down_total",
            "fec_uncorrectable": "unifab_port_fec_uncorrectable_total",
            "crc_errors": "unifab_port_in_errors_total",
            "pause_tx_us": "unifab_port_tx_pause_duration_us_total",
            "pause_rx_us": "unifab_port_rx_pause_duration_us_total",
            "queue_bytes": "unifab_port_queue_occupancy_bytes",  # a gauge: SAI_QUEUE_STAT_CURR_OCCUPANCY_BYTES
            "pfcwd_storms": "unifab_port_pfcwd_storms_total",  # PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED
            "queue_drops": "unifab_port_lossless_drops_total",  # SAI_QUEUE_STAT_DROPPED_PACKETS of the RoCE queue
            "oper_up": "unifab_port_oper_up",
        }
        labels = {"interface": end.port, **({"priority": PRIO} if counter.startswith("pause_") else {})}
        if counter in ("queue_bytes", "pfcwd_storms", "queue_drops"):
            labels["queue"] = PRIO
        return self.counter(end.node, names[counter], labels)

    def end(self, end: Endpoint, counter: str) -> _Counter:
        """The counter of ``counter``'s kind at a cable end: a NIC's own name for it, or the switch port's."""
        nic = self.fabric.nic_at(end)
        if nic is not None:
            alias = {"link_down": "carrier_changes", "fec_uncorrectable": "symbol_errors"}.get(counter, counter)
            return self.nic(nic, alias)
        return self.port(end, counter)

    def flap(self, end: Endpoint, at: int) -> None:
        """One down/up at sample interval ``at``: carrier_changes counts 2, a link-down counter 1."""
        c = self.end(end, "link_down")
        c.increments[at] += 2 if c.metric == "node_network_carrier_changes_total" else 1


def _baseline(t: _Timelines, ends: list[Endpoint]) -> None:
    rng = t.rng
    for end in ends:
        nic = t.fabric.nic_at(end)
        names = (
            (
                "carrier_changes",
                "symbol_errors",
                "crc_errors",
                "out_of_sequence",
                "packet_seq_err",
                "local_ack_timeout_err",
            )
            if nic is not None
            else ("link_down", "fec_uncorrectable", "crc_errors")
        )
        for name in names:
            c = t.end(end, name)
            c.start = rng.randrange(2, 40, 2) if name == "carrier_changes" else rng.randrange(0, 60)
        pause = t.end(end, "pause_tx_us")
        pause.start = rng.randrange(0, 10**9)
        pause.increments = [int(rng.uniform(0.0, 0.03) * t.step * 1e6) for _ in pause.increments]
        t.end(end, "oper_up").start = 1
        if nic is not None:  # healthy congestion control: a little pause received, ECN marks and CNPs now and then
            rx = t.nic(nic, "pause_rx_us")
            rx.increments = [int(rng.uniform(0.0, 0.03) * t.step * 1e6) for _ in rx.increments]
            for name in ("ecn_marked", "cnp_sent", "cnp_handled"):
                c = t.nic(nic, name)
                c.start = rng.randrange(0, 10**6)
                c.increments = [rng.randrange(0, 50) if rng.random() < 0.3 else 0 for _ in c.increments]


def _jobs(fabric: Fabric, hosts: set[str]) -> list[str]:
    return sorted(j.id for j in fabric.jobs.values() if hosts.intersection(j.hosts))


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Injector:
    def __init__(self, t: _Timelines, times: list[float]) -> None:
        self.t, self.times, self.rng = t, times, t.rng
        self.used_hosts: set[str] = set()
        self.used_ends: set[Endpoint] = set()
        self.touched_hosts: set[str] = set()  # a NIC or GPU of the host is in a fault: no whole-host fault here
        self.kernel: dict[str, list[tuple[float, str]]] = {}  # host -> (time, kernel log message)
        self.nccl: list[tuple[float, str]] = []  # (time, NCCL log line without its time stamp)
        self.modules: dict[tuple[str, str], str] = {}  # (host, netdev) -> an ethtool -m text to write instead
        fabric = t.fabric
        self.host_links = [lk for lk in fabric.links if fabric.nic_at(lk.a) or fabric.nic_at(lk.b)]
        self.switch_links = [lk for lk in fabric.links if lk not in self.host_links]

    def _hosts_of(self, link: Link) -> set[str]:
        return {e.node for e in (link.a, link.b) if e.node in self.t.fabric.hosts}

    def _free_link(self, links: list[Link]) -> Link | None:
        free = [
            lk
            for lk in links
            if lk.a not in self.used_ends and lk.b not in self.used_ends and not self._hosts_of(lk) & self.used_hosts
        ]
        return self.rng.choice(free) if free else None

    def _start(self) -> int:
        n = len(self.times) - 1
        return self.rng.randrange(n // 10, max(n // 10 + 1, n * 6 // 10))

    def _reserve(self, link: Link) -> None:
        self.used_ends.update((link.a, link.b))
        self.used_hosts.update(self._hosts_of(link))

    def fault(self, kind: str) -> dict[str, Any] | None:
        t, rng, n = self.t, self.rng, len(self.times) - 1
        at = self._start()
        if kind == "link-flap":
            link = self._free_link(self.switch_links if rng.random() < 0.4 and self.switch_links else self.host_links)
            if link is None:
                return None
            self._reserve(link)
            for i in range(at, n, rng.randrange(2, 5)):
                t.flap(link.a, i)
                t.flap(link.b, i)
            return self._truth(kind, "link", link.id, at, self._hosts_of(link))
        if kind == "optic-dirty":
            link = self._free_link(self.host_links + self.switch_links)
            if link is None:
                return None
            self._reserve(link)
            end = rng.choice((link.a, link.b))
            errors, crc = t.end(end, "fec_uncorrectable"), t.end(end, "crc_errors")
            for k, i in enumerate(range(at, n)):
                errors.increments[i] += rng.randrange(5, 20) * (1 + k // 4)
                crc.increments[i] += rng.randrange(1, 5)
            return self._truth(kind, "optic", f"optic:{end.node}:{end.port}", at, self._hosts_of(link))
        if kind == "queue-drops":
            return self._queue_drops(at)
        if kind in faults_extra.KINDS:
            return faults_extra.inject(self, kind, at)
        busy = self.used_hosts | self.touched_hosts
        hosts = sorted(h for h in t.fabric.hosts if h not in busy and t.fabric.hosts[h].nics)
        if not hosts:
            return None
        host = t.fabric.hosts[rng.choice(hosts)]
        self.used_hosts.add(host.name)
        if kind == "lossless-drops":
            nic = rng.choice(sorted(host.nics.values(), key=lambda x: x.netdev))
            self.used_ends.add(nic.endpoint)
            oos, pse = t.nic(nic, "out_of_sequence"), t.nic(nic, "packet_seq_err")
            for i in range(at, n):
                if rng.random() < 0.8 or i == at:
                    oos.increments[i] += rng.randrange(10, 100)
                    pse.increments[i] += rng.randrange(5, 50)
            return self._truth(kind, "nic", nic.id, at, {host.name})
        # host-dead: every NIC erroring and flapping, the leaf ports facing it see the flaps
        peers = {
            lk.a if lk.b.node == host.name else lk.b for lk in self.host_links if host.name in (lk.a.node, lk.b.node)
        }
        self.used_ends.update(peers)
        for nic in host.nics.values():
            self.used_ends.add(nic.endpoint)
            errors = t.nic(nic, "symbol_errors")
            for i in range(at, n):
                errors.increments[i] += rng.randrange(20, 200)
            for i in range(at, n, 3):
                t.flap(nic.endpoint, i)
        for peer in peers:
            for i in range(at, n, 3):
                t.flap(peer, i)
        return self._truth(kind, "host", host_id(host.name), at, {host.name})

    def _queue_drops(self, at: int) -> dict[str, Any] | None:
        """A leaf port drops in its lossless queue (too little headroom for its cable, so the pause comes too late):
        the queue's drop counter rises and the NIC it feeds sees the gaps as out-of-sequence packets."""
        t, rng, n = self.t, self.rng, len(self.times) - 1
        link = self._free_link([lk for lk in self.host_links if {lk.a.node, lk.b.node} & set(t.fabric.switches)])
        if link is None:
            return None
        self._reserve(link)
        port, far = (link.a, link.b) if link.a.node in t.fabric.switches else (link.b, link.a)
        nic = t.fabric.nic_at(far)
        drops = t.port(port, "queue_drops")
        oos = t.nic(nic, "out_of_sequence") if nic is not None else None
        for i in range(at, n):
            if rng.random() < 0.8 or i == at:
                dropped = rng.randrange(20, 200)
                drops.increments[i] += dropped
                if oos is not None:  # one gap per burst of drops, roughly
                    oos.increments[i] += max(1, dropped // rng.randrange(2, 6))
        return self._truth("queue-drops", "port", port_id(port.node, port.port), at, self._hosts_of(link))

    def _truth(self, kind: str, root_kind: str, root: str, at: int, hosts: set[str]) -> dict[str, Any]:
        return {
            "kind": kind,
            "root_cause": {"kind": root_kind, "id": root},
            "start": _iso(self.times[at]),
            "jobs": _jobs(self.t.fabric, hosts),
            "hosts": sorted(hosts),
        }

    def noise(self) -> None:
        """What must not become an incident: single events, a driver reload, a wrap, missed scrapes."""
        t, rng, n = self.t, self.rng, len(self.times) - 1
        free = [lk for lk in self.t.fabric.links if lk.a not in self.used_ends and lk.b not in self.used_ends]
        if not free:
            return
        flap = rng.choice(free)
        at = rng.randrange(n)
        t.flap(flap.a, at)
        t.flap(flap.b, at)
        for _ in range(max(3, len(free) // 20)):
            pick = rng.choice(free)
            end = rng.choice((pick.a, pick.b))
            t.end(end, rng.choice(("fec_uncorrectable", "crc_errors"))).increments[rng.randrange(n)] += rng.randrange(
                1, 6
            )
        nics = [
            n_
            for h in sorted(t.fabric.hosts)
            for n_ in t.fabric.hosts[h].nics.values()
            if n_.endpoint not in self.used_ends
        ]
        if nics:
            blip = rng.choice(nics)
            t.nic(blip, "out_of_sequence").increments[rng.randrange(n)] += rng.randrange(1, 4)
            reload = rng.choice(nics)
            at = rng.randrange(1, n)
            for c in t.devices.get(reload.host, {}).values():
                ours = ("device", reload.netdev) in c.labels or ("device", reload.rdma_dev or "") in c.labels
                if ours and c.metric.endswith("_total"):  # a reload restarts counters, not the link state
                    c.resets.add(at)
            wrap = t.nic(rng.choice(nics), "pause_tx_us")
            wrap.start = 2**64 - sum(wrap.increments[: n // 2]) - 1
        alive = sorted(h for h in t.fabric.hosts if h not in t.missing and h not in self.used_hosts)
        if alive:  # a host that keeps reporting, so the missed scrapes are a gap and not the end of a dead host
            missed = rng.choice(alive)
            at = rng.randrange(1, n - 2)
            t.missing[missed] = {at, at + 1}
        faults_extra.noise(self)
        ports = [e for lk in free for e in (lk.a, lk.b) if e.node in t.fabric.switches and e not in self.used_ends]
        if ports:  # a lossless queue that drops a few packets once (a burst as a job starts): not a fault
            t.port(rng.choice(ports), "queue_drops").increments[rng.randrange(n)] += rng.randrange(1, 6)


def check_duration(duration_s: float) -> None:
    """A :class:`~unifab.errors.UsageError` for a timeline span outside 10 minutes to a day."""
    if not MIN_DURATION_S <= duration_s <= MAX_DURATION_S:  # also false for nan
        raise UsageError(
            f"--duration {duration_s:g}s: expected {MIN_DURATION_S:g}s to {MAX_DURATION_S:g}s (10 minutes to a day)"
        )


def write_faults(
    bundle: Path,
    n_faults: int,
    seed: int = 0,
    *,
    start: float = TELEMETRY_START,
    duration_s: float | None = None,
    step_s: float = 30.0,
    progress: Callable[[int], None] | None = None,
    kinds: Sequence[str] = FAULT_KINDS,
) -> list[dict[str, Any]]:
    """Write ``telemetry/<device>.om`` for every device with a link, with ``n_faults`` faults (kinds cycled in
    ``kinds`` order, default :data:`FAULT_KINDS`; places and times from ``seed``) and noise; record them in
    ``truth.json``. ``duration_s``: the span of the timelines (default :data:`DEFAULT_DURATION_S`; an InfiniBand
    fabric's perfquery rounds, a minute apart, default to ``ib_faults.ROUNDS`` of them).

    Returns the faults' truth entries. Raises :class:`~unifab.errors.UsageError` for a bundle without links, one
    too small to hold the faults apart, or a duration outside :data:`MIN_DURATION_S` to :data:`MAX_DURATION_S`.
    """
    if n_faults < 0:
        raise UsageError(f"--faults {n_faults}: expected 0 or more")
    if duration_s is not None:
        check_duration(duration_s)
    unknown = sorted(set(kinds) - set(FAULT_KINDS))
    if unknown or not kinds:
        raise UsageError(f"fault kinds {unknown or '(none)'}: expected some of {', '.join(FAULT_KINDS)}")
    faults_extra.restore_originals(bundle)  # the modules an earlier run alarmed, as they were
    fabric = load_bundle(bundle)
    if not fabric.links:
        raise UsageError(f"{bundle}: no links (LLDP or plan): there is nothing to put telemetry on")
    if ib_faults.all_ib(fabric):  # an InfiniBand fabric: its counters are perfquery rounds (ib/perfquery/)
        rounds = ib_faults.ROUNDS if duration_s is None else int(duration_s // ib_faults.STEP_S) + 1
        return ib_faults.write_ib_bundle(bundle, fabric, n_faults, seed, start, rounds)
    if duration_s is None:
        duration_s = DEFAULT_DURATION_S
    if ib_faults.mixed(fabric):  # the Ethernet part's telemetry (this function once more), the IB silo's rounds

        def ethernet(n: int) -> list[dict[str, Any]]:
            again = {"start": start, "duration_s": duration_s, "step_s": step_s}
            return write_faults(bundle, n, seed, **again, progress=progress, kinds=kinds)

        return ib_faults.write_mixed_bundle(bundle, fabric, n_faults, seed, start, duration_s, ethernet)
    fabric = ib_faults.ethernet_part(fabric)  # in that second run: the Ethernet links, switches and NICs only
    rng = random.Random(seed)
    samples = int(duration_s // step_s) + 1
    times = [start + i * step_s for i in range(samples)]
    t = _Timelines(fabric, rng, samples, step_s)
    _baseline(t, sorted({e for lk in fabric.links for e in (lk.a, lk.b)}))
    injector = _Injector(t, times)
    faults = []
    for i in range(n_faults):
        entry = injector.fault(kinds[i % len(kinds)])
        if entry is None:
            raise UsageError(f"{bundle}: too small for {n_faults} faults that share no host or link")
        faults.append(entry)
    injector.noise()
    faults_extra.write_logs(injector, bundle)
    ras_files.write_reports(bundle, fabric, faults, times[0], times[-1], seed)
    for device, counters in sorted(t.devices.items()):
        skip = t.missing.get(device, set())
        out = [
            Sample(c.metric, c.labels, v, times[i])
            for c in counters.values()
            for i, v in enumerate(c.values())
            if i not in skip and (c.stop is None or i < c.stop)
        ]
        counter_families = {c.metric.removesuffix("_total") for c in counters.values() if c.metric.endswith("_total")}
        write_text(bundle / layout.TELEMETRY_DIR / f"{device}{layout.TELEMETRY_SUFFIX}", dump(out, counter_families))
        if progress:
            progress(1)
    truth_path = bundle / layout.TRUTH
    truth: dict[str, Any] = orjson.loads(truth_path.read_bytes()) if truth_path.is_file() else {}
    truth["faults"] = faults
    truth["telemetry"] = {"start": _iso(start), "step_s": step_s, "samples": samples, "seed": seed}
    truth_path.write_bytes(orjson.dumps(truth, option=orjson.OPT_INDENT_2) + b"\n")
    return faults
