"""Counter series from successive snapshots of the files a bundle already collects (``telemetry/rounds/``).

A site without node_exporter or switch exporters runs the collector every few minutes; each run is one *round*,
written under the time it started::

    telemetry/rounds/<unix time>/hosts/<host>/...        the host's own relative paths (docs/bundle.md)
    telemetry/rounds/<unix time>/switches/<switch>/...   the switch's

The round name is ``1764547200`` or, with a fraction, ``1764547200.5``; any other directory there is one problem
naming it and is not read. Only the files present are read, with the bundle's own parsers: a round missing a
device (or one NIC's files) is a gap for that device, not an error; a file that does not parse costs that file in
that round (one problem naming it, through :class:`unifab.collect.problems.Problems` as collect reports it).

What is read per round, and the health counter it becomes (the same names and entity ids as
:data:`unifab.health.series.METRICS`, so the same detectors judge them):

=====================================================  ==================================================
host ``cmd/ethtool-S/<netdev>.txt``                    ``link_down_events_phy`` -> link_down,
                                                       ``rx_symbol_err_phy`` -> symbol_errors,
                                                       ``rx_crc_errors_phy`` -> crc_errors,
                                                       ``rx_corrected_bits_phy`` -> corrected_bits,
                                                       ``rx_bits_phy`` -> rx_bits (pre-FEC BER),
                                                       ``{tx,rx}_prio<N>_pause_duration`` -> pause_{tx,rx}_us
host ``sys/class/net/<netdev>/carrier_changes``        carrier_changes (32-bit: wraps)
host ``sys/class/net/<netdev>/operstate``              oper_up (gauge: ``up`` is 1)
host ``sys/class/infiniband/<dev>/ports/1/hw_counters/``  out_of_sequence, packet_seq_err, local_ack_timeout_err,
                                                       np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled
host ``cmd/rdma-statistic.txt``                        the same names, for a device without the sysfs tree
SONiC ``sonic/counters_db.json``                       ``SAI_PORT_STAT_IF_IN_ERRORS`` -> crc_errors,
                                                       ``..._IF_IN_FEC_NOT_CORRECTABLE_FRAMES`` -> fec_uncorrectable,
                                                       ``SAI_PORT_STAT_PFC_<N>_TX_PAUSE_DURATION_US`` -> pause_tx_us,
                                                       ``PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED`` -> pfcwd_storms,
                                                       ``SAI_QUEUE_STAT_DROPPED_PACKETS`` of a lossless queue ->
                                                       queue_drops, ``SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_
                                                       PACKETS`` of a lossless priority group -> pg_drops
SONiC ``sonic/state_db.json``                          ``PORT_TABLE`` oper status -> oper_up
EOS ``eos/show-interfaces.json``                       ``linkStatusChanges`` -> carrier_changes (2 per flap),
                                                       ``totalInErrors`` -> crc_errors,
                                                       ``lineProtocolStatus`` -> oper_up
EOS ``eos/show-interfaces-counters-queue-detail.json``  unicast ``droppedPackets`` (summed over drop precedences)
                                                       of a lossless traffic class -> queue_drops
=====================================================  ==================================================

A *lossless* queue is one a PFC-enabled priority of the port (the bundle's own QoS of that switch, ``pfc_enabled``)
is queued in (``tc_to_queue``; the priority itself where the map does not say), a lossless priority group one it is
buffered in at ingress (``tc_to_pg``): drops there are buffer discards
PFC should have prevented (headroom too small, PFC off at the sender's end of the hop). Drops in a lossy queue are
TCP's business, not a symptom; a port whose QoS the bundle does not hold has no lossless queue to judge.

Not in any of these files: a SONiC port's link-down count (COUNTERS_DB has none), an EOS port's uncorrected FEC
and PFC pause time (``show interfaces`` has neither; the PFC and ECN counters EOS gives are frame counts, which say
that pause or marking happened but not for how long, so no detector's share can be computed from them).

Counter widths: ethtool -S, hw_counters and the switch counters are 64-bit, ``carrier_changes`` 32-bit;
:func:`unifab.health.series.intervals` handles resets and wraps. A series ``telemetry/*.om`` already gives is
kept from the telemetry (as for ``ib/perfquery`` rounds). Reads are bounded: at most :data:`MAX_ROUNDS` rounds
(the latest), each file through the Source's own size limit.

DOM (``cmd/ethtool-m/<netdev>.txt``) in a round is not a series: each round's reading is a dated module reading
(:func:`unifab.health.events.read_events`), and HEALTH-OPTICS judges a module's readings in time order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TypeVar

import orjson

from unifab import layout
from unifab.collect.problems import Problems
from unifab.errors import ParseError, ParseProblems
from unifab.health.openmetrics import Sample
from unifab.health.series import INTERFACE, MetricSpec, Series, SeriesStore, build_store
from unifab.model import Endpoint, Fabric, port_id
from unifab.parse.host import ethtool_stats, hw_counters, rdma_statistic
from unifab.parse.switch import sonic_counters_db, sonic_state_db
from unifab.parse.switch.eos_json.counters import queue_counters_from
from unifab.parse.switch.eos_json.interfaces import interfaces_from
from unifab.sources import SourcePath

__all__ = [
    "EOS_INTERFACES",
    "EOS_QUEUES",
    "MAX_ROUNDS",
    "ROUNDS_DIR",
    "SONIC_COUNTERS",
    "SONIC_STATE",
    "read_rounds",
    "round_dirs",
    "round_time",
]

ROUNDS_DIR = f"{layout.TELEMETRY_DIR}/rounds"
MAX_ROUNDS = 10_000  # a week of rounds a minute apart; older ones are left out (one problem says so)
SONIC_COUNTERS = "sonic/counters_db.json"
SONIC_STATE = "sonic/state_db.json"
EOS_INTERFACES = "eos/show-interfaces.json"
EOS_QUEUES = "eos/show-interfaces-counters-queue-detail.json"

_ROUND = re.compile(r"[0-9]{1,12}(\.[0-9]{1,9})?")
_PRIO_PAUSE = re.compile(r"(tx|rx)_prio([0-7])_pause_duration")
# ethtool -S name -> health metric (the labels are added per NIC)
_ETHTOOL = {
    "link_down_events_phy": "unifab_nic_link_down_total",
    "rx_symbol_err_phy": "unifab_nic_rx_symbol_errors_total",
    "rx_crc_errors_phy": "unifab_nic_rx_crc_errors_total",
    "rx_corrected_bits_phy": "unifab_nic_rx_corrected_bits_total",
    "rx_bits_phy": "unifab_nic_rx_bits_total",
}
_HW = {
    "out_of_sequence": "unifab_rdma_out_of_sequence_total",
    "packet_seq_err": "unifab_rdma_packet_seq_err_total",
    "local_ack_timeout_err": "unifab_rdma_local_ack_timeout_err_total",
    "np_ecn_marked_roce_packets": "unifab_rdma_np_ecn_marked_roce_packets_total",
    "np_cnp_sent": "unifab_rdma_np_cnp_sent_total",
    "rp_cnp_handled": "unifab_rdma_rp_cnp_handled_total",
}
_SAI_PFC_TX = re.compile(r"SAI_PORT_STAT_PFC_([0-7])_TX_PAUSE_DURATION_US")
# EOS counts every status change (down and up) like carrier_changes; no METRICS name exports it
_EOS_CHANGES = MetricSpec("carrier_changes", INTERFACE, 64)

T = TypeVar("T")


def round_time(name: str) -> float | None:
    """The time a round directory is named by (``1764547200`` or ``1764547200.5``), None for any other name."""
    return float(name) if _ROUND.fullmatch(name) else None


def round_dirs(root: SourcePath, problems: list[str]) -> list[tuple[float, SourcePath]]:
    """The bundle's rounds, oldest first, as (time, directory): at most the latest :data:`MAX_ROUNDS`; a
    directory there that is not a round is one problem in ``problems`` and is not read."""
    directory = root / ROUNDS_DIR
    if not directory.is_dir():
        return []
    out: list[tuple[float, SourcePath]] = []
    for path in sorted(directory.iterdir()):
        when = round_time(path.name) if path.is_dir() else None
        if when is None:
            problems.append(
                f"{ROUNDS_DIR}/{path.name}: expected a round directory named <unix time> "
                "(e.g. 1764547200 or 1764547200.5); not read"
            )
            continue
        out.append((when, path))
    out.sort(key=lambda r: r[0])
    if len(out) > MAX_ROUNDS:
        problems.append(f"{ROUNDS_DIR}: {len(out)} rounds; only the latest {MAX_ROUNDS} were read")
        out = out[-MAX_ROUNDS:]
    return out


def _dirs(path: SourcePath) -> list[SourcePath]:
    return sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []


class _Round:
    """One device directory of one round: its files parsed, each one bad file a problem."""

    def __init__(self, problems: Problems, device: SourcePath, when: float, fabric: Fabric) -> None:
        self.problems, self.dir, self.when, self.device = problems, device, when, device.name
        self.samples: list[Sample] = []
        self.switch = fabric.switches.get(device.name)

    def lossless(self, port: str, pgs: bool = False) -> frozenset[int]:
        """The egress queues (``pgs``: the ingress priority groups) of ``port`` that carry a PFC-enabled priority
        (see the module); none when the bundle does not hold the port's QoS."""
        found = self.switch.ports.get(port) if self.switch is not None else None
        qos = found.qos if found is not None else None
        if qos is None:
            return frozenset()
        index = qos.tc_to_pg if pgs else qos.tc_to_queue
        return frozenset(index.get(p, p) for p in qos.pfc_enabled)

    def parse(self, rel: str, parser: Callable[[str, str, ParseProblems], T]) -> T | None:
        path = self.dir / rel
        if not path.is_file():
            return None
        return self.problems.parse_file_partial(path, parser, device=self.device)

    def add(self, metric: str, labels: dict[str, str], value: float) -> None:
        full = tuple(sorted({"instance": self.device, **labels}.items()))
        self.samples.append(Sample(metric, full, value, self.when))

    def word(self, rel: str) -> str | None:
        """A one-value sysfs file (``carrier_changes``, ``operstate``)."""
        path = self.dir / rel
        if not path.is_file():
            return None
        try:
            return path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.unreadable(path, f"cannot read: {exc}", device=self.device)
            return None


def _host(r: _Round) -> None:
    ethtool_dir = r.dir / layout.ETHTOOL_S_DIR
    if ethtool_dir.is_dir():
        for path in sorted(p for p in ethtool_dir.iterdir() if p.is_file() and p.name.endswith(".txt")):
            netdev = path.name.removesuffix(".txt")
            stats = r.parse(f"{layout.ETHTOOL_S_DIR}/{path.name}", ethtool_stats.parse)
            for name, value in ethtool_stats.canonical(stats or {}).items():
                if name in _ETHTOOL:
                    r.add(_ETHTOOL[name], {"device": netdev}, value)
                elif m := _PRIO_PAUSE.fullmatch(name):
                    metric = f"unifab_nic_{m[1]}_pause_duration_us_total"
                    r.add(metric, {"device": netdev, "priority": m[2]}, value)
    for net in _dirs(r.dir / layout.SYS_NET):
        base = f"{layout.SYS_NET}/{net.name}"
        changes = r.word(f"{base}/carrier_changes")
        if changes is not None:
            if changes.isdigit():
                r.add("node_network_carrier_changes_total", {"device": net.name}, int(changes))
            else:
                r.problems.unreadable(
                    r.dir / f"{base}/carrier_changes", f"expected a number, got {changes[:30]!r}", device=r.device
                )
        state = r.word(f"{base}/operstate")
        if state:
            r.add("node_network_up", {"device": net.name}, 1 if state == "up" else 0)
    seen: set[str] = set()
    for dev in _dirs(r.dir / layout.SYS_IB):
        hw_dir = dev / "ports" / str(layout.PORT) / "hw_counters"
        if not hw_dir.is_dir():
            continue
        files = [p for p in hw_dir.iterdir() if p.is_file()]
        tree = r.problems.parse_tree(dev, files, hw_counters.parse_tree, device=r.device)
        ports = tree.devices[0].ports if tree and tree.devices else ()
        for port in ports:
            if port.port == layout.PORT:
                seen.add(dev.name)
                for name, value in port.hw_counters.items():
                    if name in _HW:
                        r.add(_HW[name], {"device": dev.name, "port": str(layout.PORT)}, value)
    statistic = r.parse(layout.RDMA_STATISTIC, rdma_statistic.parse)
    for link in statistic.links if statistic else ():
        if link.port == layout.PORT and link.dev not in seen:  # the sysfs tree wins where both are there
            for name, value in link.counters.items():
                if name in _HW:
                    r.add(_HW[name], {"device": link.dev, "port": str(layout.PORT)}, value)


def _sonic(r: _Round) -> None:
    counters = r.parse(SONIC_COUNTERS, sonic_counters_db.parse)
    for name, port in sorted(counters.ports.items()) if counters else ():
        labels = {"interface": name}
        if port.in_errors is not None:
            r.add("unifab_port_in_errors_total", labels, port.in_errors)
        if port.fec_uncorrectable_frames is not None:
            r.add("unifab_port_fec_uncorrectable_total", labels, port.fec_uncorrectable_frames)
        for field, value in port.counters.items():
            if m := _SAI_PFC_TX.fullmatch(field):
                r.add("unifab_port_tx_pause_duration_us_total", {**labels, "priority": m[1]}, value)
        lossless = r.lossless(name)
        for index, queue in sorted(port.queues.items()):
            if queue.pfcwd is not None and queue.pfcwd.deadlock_detected is not None:
                r.add("unifab_port_pfcwd_storms_total", {**labels, "queue": str(index)}, queue.pfcwd.deadlock_detected)
            if index in lossless and queue.dropped_packets is not None:
                r.add("unifab_port_lossless_drops_total", {**labels, "queue": str(index)}, queue.dropped_packets)
        lossless_pgs = r.lossless(name, pgs=True)
        for index, pg in sorted(port.priority_groups.items()):
            if index in lossless_pgs and pg.dropped_packets is not None:
                r.add("unifab_port_lossless_pg_drops_total", {**labels, "pg": str(index)}, pg.dropped_packets)
    state = r.parse(SONIC_STATE, sonic_state_db.parse)
    for name, st in sorted(state.ports.items()) if state else ():
        if st.oper_status:
            r.add("unifab_port_oper_up", {"interface": name}, 1 if st.oper_status == "up" else 0)


def _eos_reply(read: Callable[[object, str, str, ParseProblems], T]) -> Callable[[str, str, ParseProblems], T]:
    """A file parser for one EOS ``| json`` reply, read in part by ``read`` (an ``eos_json`` ``*_from``)."""

    def parse(text: str, source: str, problems: ParseProblems) -> T:
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ParseError(source, f"JSON ({exc})") from None
        return read(obj, source, "", problems)

    return parse


_eos_parse = _eos_reply(interfaces_from)
_eos_queues_parse = _eos_reply(queue_counters_from)


def _eos(r: _Round, changes: dict[tuple[str, str], list[tuple[float, int]]]) -> None:
    from unifab.parse.switch.eos_json.records import EosInterfaces, EosQueueCounters

    queues = r.parse(EOS_QUEUES, _eos_queues_parse)
    for name, counters in sorted(queues.interfaces.items()) if isinstance(queues, EosQueueCounters) else ():
        lossless = r.lossless(name)
        for tc, dropped in sorted(counters.unicast_dropped.items()):
            if tc in lossless:
                r.add("unifab_port_lossless_drops_total", {"interface": name, "queue": str(tc)}, dropped)
    reply = r.parse(EOS_INTERFACES, _eos_parse)
    if not isinstance(reply, EosInterfaces):
        return
    for name, status in sorted(reply.interfaces.items()):
        labels = {"interface": name}
        if "linkStatusChanges" in status.counters:
            changes.setdefault((r.device, name), []).append((r.when, status.counters["linkStatusChanges"]))
        if "totalInErrors" in status.counters:
            r.add("unifab_port_in_errors_total", labels, status.counters["totalInErrors"])
        if status.line_protocol_status:
            r.add("unifab_port_oper_up", labels, 1 if status.line_protocol_status == "up" else 0)


def _samples(
    root: SourcePath, fabric: Fabric, store: SeriesStore, changes: dict[tuple[str, str], list[tuple[float, int]]]
) -> Iterator[tuple[Sample, str]]:
    problems = Problems(root)
    for when, path in round_dirs(root, store.problems):
        store.files += 1
        rel = f"{ROUNDS_DIR}/{path.name}"
        for host in _dirs(path / layout.HOSTS):
            r = _Round(problems, host, when, fabric)
            _host(r)
            yield from ((s, f"{rel}/{layout.HOSTS}/{host.name}") for s in r.samples)
        for switch in _dirs(path / layout.SWITCHES):
            r = _Round(problems, switch, when, fabric)
            _sonic(r)
            _eos(r, changes)
            yield from ((s, f"{rel}/{layout.SWITCHES}/{switch.name}") for s in r.samples)
    store.problems.extend(f.message for f in problems.findings)


def read_rounds(root: SourcePath, fabric: Fabric, store: SeriesStore | None = None) -> SeriesStore:
    """``telemetry/rounds/*`` of a bundle into ``store`` (the one ``telemetry/*.om`` filled): a series ``store``
    already holds is kept (one problem counts them)."""
    store = store if store is not None else SeriesStore()
    ours = SeriesStore()
    changes: dict[tuple[str, str], list[tuple[float, int]]] = {}
    build_store(_samples(root, fabric, ours, changes), fabric, ours)
    for (switch, port), points in sorted(changes.items()):
        series = Series(port_id(switch, port), Endpoint(switch, port), _EOS_CHANGES.counter, "", _EOS_CHANGES, "eos")
        latest = dict(points)
        series.times = sorted(latest)
        series.values = [float(latest[t]) for t in series.times]
        ours.series.setdefault(series.key, series)
    doubled = 0
    for key, series in ours.series.items():
        if key in store.series:
            doubled += 1
        else:
            store.series[key] = series
    store.problems.extend(ours.problems)
    store.files += ours.files
    if doubled:
        store.problems.append(
            f"{ROUNDS_DIR}: {doubled} counter series also read from telemetry/; the telemetry's were kept"
        )
    return store
