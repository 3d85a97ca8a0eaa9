"""Counter series per entity and the increments between their samples.

A series is one counter of one entity (``nic:gpu001:mlx5_0``, ``port:leaf03:Ethernet12``) over time, held as two
parallel columns (timestamps, values). Series come from the bundle's ``telemetry/*.om`` files
(:func:`read_bundle`) or from a Prometheus-compatible TSDB (:mod:`unifab.health.prometheus`); both go through
:func:`build_store`, which maps a metric (:data:`METRICS`) and its labels to the entity of the Fabric.

Counters lie in three ways, and :func:`intervals` undoes each without inventing data:

* **reset** (driver reload, ``perfquery -R``, a reboot): the value drops; the increment is the new value (what
  was counted since the reset), never a negative rate;
* **wrap** (a 32-bit ``carrier_changes`` or a 64-bit hardware counter passing its maximum): the value drops from
  near the top of its width to near zero; the increment is what it counted across the top;
* **saturate** (IB PMA error counters: 16-bit ``symbol_error``, 8-bit ``link_downed``): it sticks at its maximum;
  the step onto it is a lower bound, and while it stays there the increment is unknown (``None``).

A **gap** (a missed scrape: more than :data:`GAP_FACTOR` times the series' usual step between two samples) is
marked on the interval; an increment across it stays one increment over the whole gap (never spread into
samples that do not exist), and a drop across a gap is unknown, since the reset could have come at any moment.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

from unifab import layout
from unifab.errors import ParseError
from unifab.health.openmetrics import Sample, parse
from unifab.model import Endpoint, Fabric, Nic, nic_id, port_id
from unifab.sources import SourcePath

__all__ = [
    "GAP_FACTOR",
    "METRICS",
    "Interval",
    "MetricSpec",
    "Series",
    "SeriesStore",
    "build_store",
    "changes",
    "gap_count",
    "intervals",
    "read_bundle",
]

GAP_FACTOR = 1.5  # an interval this many times the usual step (or longer) is a gap
_WRAP_SHARE = 0.25  # a drop from the top quarter of the width to the bottom quarter is a wrap, not a reset

NETDEV, RDMA, INTERFACE = "netdev", "rdma", "interface"  # what the port label of a metric names


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """What one metric counts, on which end, and how its counter behaves at the top of its width."""

    counter: str  # unifab's name for it: carrier_changes, link_down, symbol_errors, ...
    port: str  # NETDEV (label ``device`` = host netdev), RDMA (``device`` = RDMA device), INTERFACE (switch port)
    width: int  # bits
    saturates: bool = False  # sticks at its maximum instead of wrapping (IB PMA error counters)
    qualifier: str = ""  # a label that splits the counter (``priority``), part of the series' identity
    gauge: bool = False  # a state (1 up, 0 down), not a counter: never read through :func:`intervals`


# Sample names (counters end in _total). node_* are node_exporter's own (netclass and infiniband collectors);
# unifab_* name what node_exporter does not export (ethtool -S, RDMA hw_counters) and switch port counters
# (SONiC COUNTERS_DB SAI_PORT_STAT_*, EOS interface counters), as docs/health.md lists them.
METRICS: dict[str, MetricSpec] = {
    "node_network_carrier_changes_total": MetricSpec("carrier_changes", NETDEV, 32),
    "unifab_nic_link_down_total": MetricSpec("link_down", NETDEV, 64),  # ethtool link_down_events_phy
    "unifab_nic_rx_symbol_errors_total": MetricSpec("symbol_errors", NETDEV, 64),  # rx_symbol_err_phy: not corrected
    "unifab_nic_rx_crc_errors_total": MetricSpec("crc_errors", NETDEV, 64),  # rx_crc_errors_phy
    # pre-FEC BER: bits FEC corrected and bits received (mlx5 rx_corrected_bits_phy, rx_bits_phy)
    "unifab_nic_rx_corrected_bits_total": MetricSpec("corrected_bits", NETDEV, 64),
    "unifab_nic_rx_bits_total": MetricSpec("rx_bits", NETDEV, 64),
    "unifab_nic_tx_pause_duration_us_total": MetricSpec("pause_tx_us", NETDEV, 64, qualifier="priority"),
    "unifab_rdma_out_of_sequence_total": MetricSpec("out_of_sequence", RDMA, 64),
    "unifab_rdma_packet_seq_err_total": MetricSpec("packet_seq_err", RDMA, 64),
    "unifab_rdma_local_ack_timeout_err_total": MetricSpec("local_ack_timeout_err", RDMA, 64),
    "node_infiniband_link_downed_total": MetricSpec("link_down", RDMA, 8, saturates=True),
    "node_infiniband_symbol_error_total": MetricSpec("symbol_errors", RDMA, 16, saturates=True),
    "unifab_port_link_down_total": MetricSpec("link_down", INTERFACE, 64),
    "unifab_port_fec_uncorrectable_total": MetricSpec("fec_uncorrectable", INTERFACE, 64),
    "unifab_port_in_errors_total": MetricSpec("crc_errors", INTERFACE, 64),  # SAI_PORT_STAT_IF_IN_ERRORS
    "unifab_port_tx_pause_duration_us_total": MetricSpec("pause_tx_us", INTERFACE, 64, qualifier="priority"),
    # congestion control: pause received (ethtool rx_prio<N>_pause_duration), ECN marks and CNPs (RDMA hw_counters)
    "unifab_nic_rx_pause_duration_us_total": MetricSpec("pause_rx_us", NETDEV, 64, qualifier="priority"),
    # a switch port paused by its peer (SAI_PORT_STAT_PFC_<N>_RX_PAUSE_DURATION_US): evidence, judged by no detector
    "unifab_port_rx_pause_duration_us_total": MetricSpec("pause_rx_us", INTERFACE, 64, qualifier="priority"),
    # SONiC's PFC watchdog: storms detected on a queue (PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED): its peer paused it
    # past the detection time, the watchdog dropped or forwarded the queue's traffic, then restored it
    "unifab_port_pfcwd_storms_total": MetricSpec("pfcwd_storms", INTERFACE, 64, qualifier="queue"),
    # packets a switch port dropped in an egress queue that carries a PFC-enabled (lossless) priority: buffer
    # discards where PFC should have paused the sender (SONiC SAI_QUEUE_STAT_DROPPED_PACKETS, EOS ``show interfaces
    # counters queue detail`` droppedPackets); the reader keeps the lossless queues only (the port's pfc_enabled)
    "unifab_port_lossless_drops_total": MetricSpec("queue_drops", INTERFACE, 64, qualifier="queue"),
    # packets a switch port dropped at ingress in a lossless priority group (SONiC SAI_INGRESS_PRIORITY_GROUP_STAT_
    # DROPPED_PACKETS): the PG's headroom overflowed before the pause took effect
    "unifab_port_lossless_pg_drops_total": MetricSpec("pg_drops", INTERFACE, 64, qualifier="pg"),
    "unifab_rdma_np_ecn_marked_roce_packets_total": MetricSpec("ecn_marked", RDMA, 64),
    "unifab_rdma_np_cnp_sent_total": MetricSpec("cnp_sent", RDMA, 64),
    "unifab_rdma_rp_cnp_handled_total": MetricSpec("cnp_handled", RDMA, 64),
    # link state gauges: node_exporter netclass node_network_up (operstate up), a switch port's oper status
    "node_network_up": MetricSpec("oper_up", NETDEV, 64, gauge=True),
    "unifab_port_oper_up": MetricSpec("oper_up", INTERFACE, 64, gauge=True),
}
PORT_LABELS = {NETDEV: "device", RDMA: "device", INTERFACE: "interface"}
NODE_LABELS = ("instance", "host", "hostname", "switch")  # the first one present names the device
_INSTANCE_PORT = re.compile(r":[0-9]{1,5}$")


@dataclass(frozen=True, slots=True)
class Interval:
    """What a counter counted between two successive samples."""

    start: float
    end: float
    delta: float | None  # None: unknown (a drop across a gap, a counter stuck at its maximum)
    gap: bool = False  # longer than the series' usual step: samples are missing in between
    event: str = ""  # "" | "reset" | "wrap" | "saturated"

    @property
    def rate(self) -> float | None:
        """Per second over the interval (None when the increment is unknown)."""
        if self.delta is None or self.end <= self.start:
            return None
        return self.delta / (self.end - self.start)


@dataclass(slots=True)
class Series:
    """One counter of one entity: columns of timestamps (seconds) and values, in time order."""

    entity: str
    endpoint: Endpoint  # (host, netdev) for a NIC, (switch, port) for a switch port
    counter: str
    qualifier: str
    spec: MetricSpec
    metric: str
    times: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.entity, self.counter, self.qualifier)

    def step(self) -> float:
        """The usual time between samples (the median), 0 for fewer than two samples."""
        diffs = [b - a for a, b in zip(self.times, self.times[1:], strict=False) if b > a]
        return statistics.median(diffs) if diffs else 0.0


def changes(series: Series) -> bool:
    """Whether the counter moved at all (most error counters never do: nothing to look at)."""
    return bool(series.values) and min(series.values) != max(series.values)


def gap_count(series: Series) -> int:
    """Intervals with missing samples, counted from the timestamps alone."""
    usual = series.step()
    return sum(1 for a, b in itertools.pairwise(series.times) if usual > 0 and b - a >= GAP_FACTOR * usual)


def intervals(series: Series, step: float | None = None) -> list[Interval]:
    """The increment of every interval between two samples: resets, wraps, saturation and gaps as the module says."""
    usual = series.step() if step is None else step
    modulus = 2**series.spec.width
    top = modulus - 1
    out: list[Interval] = []
    points = list(zip(series.times, series.values, strict=True))
    for (t0, v0), (t1, v1) in itertools.pairwise(points):
        gap = usual > 0 and (t1 - t0) >= GAP_FACTOR * usual
        if series.spec.saturates and v0 >= top and v1 >= top:
            out.append(Interval(t0, t1, None, gap, "saturated"))
        elif v1 >= v0:
            event = "saturated" if series.spec.saturates and v1 >= top else ""
            out.append(Interval(t0, t1, v1 - v0, gap, event))
        elif gap:
            out.append(Interval(t0, t1, None, gap, "reset"))
        elif not series.spec.saturates and v0 >= modulus * (1 - _WRAP_SHARE) and v1 < modulus * _WRAP_SHARE:
            out.append(Interval(t0, t1, v1 + modulus - v0, gap, "wrap"))
        else:
            out.append(Interval(t0, t1, v1, gap, "reset"))
    return out


@dataclass(slots=True)
class SeriesStore:
    """Every series read, by (entity, counter, qualifier), and what could not be read."""

    series: dict[tuple[str, str, str], Series] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    files: int = 0

    def __len__(self) -> int:
        return len(self.series)

    def of(self, counter: str) -> list[Series]:
        return [s for s in self.series.values() if s.counter == counter]

    def span(self) -> tuple[float, float] | None:
        """The first and last sample time over every series."""
        times = [t for s in self.series.values() for t in (s.times[:1] + s.times[-1:])]
        return (min(times), max(times)) if times else None


def _node(labels: dict[str, str]) -> str | None:
    for name in NODE_LABELS:
        if labels.get(name):
            return _INSTANCE_PORT.sub("", labels[name])
    return None


def _resolve(
    spec: MetricSpec, node: str, port: str, fabric: Fabric, rdma: dict[tuple[str, str], Nic]
) -> tuple[str, Endpoint]:
    """The entity and the cable end a sample belongs to, through the Fabric (names it does not know stay as read)."""
    if spec.port == INTERFACE:
        return port_id(node, port), Endpoint(node, port)
    if spec.port == RDMA:
        nic = rdma.get((node, port))
        return (nic.id, nic.endpoint) if nic is not None else (nic_id(node, port), Endpoint(node, port))
    host = fabric.hosts.get(node)
    found = host.nics.get(port) if host is not None else None
    return (found.id, found.endpoint) if found is not None else (nic_id(node, port), Endpoint(node, port))


def build_store(samples: Iterable[tuple[Sample, str]], fabric: Fabric, store: SeriesStore | None = None) -> SeriesStore:
    """Series from ``(sample, where it was read)`` pairs: known metrics only, each sample put on its entity.

    A sample without a timestamp, a device label (``instance``, ``host``, ``hostname`` or ``switch``) or the metric's
    port label cannot join a series; each such metric and file is one problem. Samples are sorted by time; of two
    with the same timestamp the later one read wins.
    """
    store = store if store is not None else SeriesStore()
    rdma = {(h.name, n.rdma_dev): n for h in fabric.hosts.values() for n in h.nics.values() if n.rdma_dev}
    refused: set[str] = set()
    touched: set[tuple[str, str, str]] = set()
    placed: dict[tuple[str, tuple[tuple[str, str], ...]], Series | None] = {}  # a file repeats every series
    for sample, where in samples:
        head = (sample.name, sample.labels)
        series = placed.get(head, _UNPLACED)
        if series is _UNPLACED:
            series = placed[head] = _place(sample, where, fabric, rdma, store, refused)
        if series is None:
            continue
        if sample.timestamp is None:
            refused.add(f"{where}: {sample.name} samples without a timestamp cannot be put on a series")
            continue
        series.times.append(sample.timestamp)
        series.values.append(sample.value)
        touched.add(series.key)
    for key in touched:
        _order(store.series[key])
    store.problems.extend(sorted(refused))
    return store


_UNPLACED = Series("", Endpoint("", ""), "", "", MetricSpec("", NETDEV, 64), "")


def _place(
    sample: Sample, where: str, fabric: Fabric, rdma: dict[tuple[str, str], Nic], store: SeriesStore, refused: set[str]
) -> Series | None:
    """The series a metric and its labels belong to (created on first sight), None for what is not one."""
    spec = METRICS.get(sample.name)
    if spec is None:
        return None
    labels = dict(sample.labels)
    node, port = _node(labels), labels.get(PORT_LABELS[spec.port])
    if not node or not port:
        what = "device label" if not node else f"{PORT_LABELS[spec.port]!r} label"
        refused.add(f"{where}: {sample.name} samples without a {what} cannot be put on a series")
        return None
    entity, endpoint = _resolve(spec, node, port, fabric, rdma)
    qualifier = labels.get(spec.qualifier, "") if spec.qualifier else ""
    key = (entity, spec.counter, qualifier)
    series = store.series.get(key)
    if series is None:
        series = store.series[key] = Series(entity, endpoint, spec.counter, qualifier, spec, sample.name)
    return series


def _order(series: Series) -> None:
    if all(a < b for a, b in zip(series.times, series.times[1:], strict=False)):
        return
    latest: dict[float, float] = {}
    for t, v in zip(series.times, series.values, strict=True):
        latest[t] = v
    series.times = sorted(latest)
    series.values = [latest[t] for t in series.times]


def read_bundle(root: SourcePath, fabric: Fabric) -> SeriesStore:
    """The series of every ``telemetry/*.om`` file of a bundle; a file that cannot be read is a problem, not a stop."""
    store = SeriesStore()
    directory = root / layout.TELEMETRY_DIR
    if not directory.is_dir():
        return store
    for path in sorted(directory.walk_files()):
        if not path.name.endswith(layout.TELEMETRY_SUFFIX):
            continue
        where = f"{layout.TELEMETRY_DIR}/{path.relative_to(directory)}"
        if where.startswith(layout.DCGM_DIR + "/"):  # GPU events, read by health.events (no NIC or port counter)
            continue
        try:
            samples = parse(path.read_text(), where)
        except (ParseError, OSError, UnicodeDecodeError) as exc:
            store.problems.append(f"{where}: {exc}")
            continue
        store.files += 1
        build_store(((s, where) for s in samples), fabric, store)
    return store
