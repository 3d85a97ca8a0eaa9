"""A twin bundle's ``telemetry/<device>.om`` timelines rewritten as collection rounds (``telemetry/rounds/``).

Each sample time becomes one round, ``telemetry/rounds/<unix time>/``, holding per device the files the
collector would have written at that moment, in the devices' real formats (the layout and the counter mapping
are :mod:`unifab.health.snapshot_series`'s):

* a host: ``cmd/ethtool-S/<netdev>.txt`` as ``ethtool -S`` prints it, ``sys/class/net/<netdev>/carrier_changes``
  and ``operstate``, ``sys/class/infiniband/<dev>/ports/1/hw_counters/<name>``;
* a SONiC switch: ``sonic/counters_db.json`` (the flat COUNTERS_DB dump: port and queue name maps,
  ``SAI_PORT_STAT_*`` hashes, a queue's ``SAI_QUEUE_STAT_DROPPED_PACKETS`` and PFC watchdog fields) and
  ``sonic/state_db.json`` (``PORT_TABLE|<port>`` oper status);
* an EOS switch: ``eos/show-interfaces.json`` (eAPI ``show interfaces``: ``linkStatusChanges`` counts a down and
  an up per flap, ``totalInErrors``, ``lineProtocolStatus``) and
  ``eos/show-interfaces-counters-queue-detail.json`` (a port's unicast drops by traffic class).

A device missing from a sample time (a missed scrape, a device or NIC that died) is missing from that round.
What no such file holds is left out: a SONiC port's link-down count, an EOS port's uncorrected FEC frames and
PFC pause time; an NVUE switch's series are not written (no NVUE counters file is read by health).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson

from unifab import layout
from unifab.collect.bundle import load_bundle
from unifab.health.openmetrics import Sample, parse
from unifab.parse.host import ethtool_stats
from unifab.twin.files import write_text

__all__ = ["round_name", "write_rounds"]

_ETHTOOL = {
    "unifab_nic_link_down_total": "link_down_events_phy",
    "unifab_nic_rx_symbol_errors_total": "rx_symbol_err_phy",
    "unifab_nic_rx_crc_errors_total": "rx_crc_errors_phy",
}
_PAUSE = {"unifab_nic_tx_pause_duration_us_total": "tx", "unifab_nic_rx_pause_duration_us_total": "rx"}
_RDMA_PREFIX, _RDMA_SUFFIX = "unifab_rdma_", "_total"
_SAI = {
    "unifab_port_in_errors_total": "SAI_PORT_STAT_IF_IN_ERRORS",
    "unifab_port_fec_uncorrectable_total": "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES",
}
_PORT_OID = 0x1000000000001  # the first port oid, as SONiC's mock COUNTERS_DB numbers them
_QUEUE_OID = 0x15000000000001  # and the first queue oid


def round_name(when: float) -> str:
    """A round directory's name: whole seconds as an integer, else with the fraction (``1764547200.5``)."""
    return str(int(when)) if when == int(when) else repr(when)


def _int(value: float) -> int:
    return int(value) % 2**64


def _host_files(samples: list[Sample]) -> dict[str, str]:
    stats: dict[str, dict[str, int]] = defaultdict(dict)
    files: dict[str, str] = {}
    for s in samples:
        labels = dict(s.labels)
        dev = labels.get("device", "")
        if s.name in _ETHTOOL:
            stats[dev][_ETHTOOL[s.name]] = _int(s.value)
        elif s.name in _PAUSE:
            stats[dev][f"{_PAUSE[s.name]}_prio{labels.get('priority', '0')}_pause_duration"] = _int(s.value)
        elif s.name == "node_network_carrier_changes_total":
            files[f"{layout.SYS_NET}/{dev}/carrier_changes"] = f"{int(s.value) % 2**32}\n"
        elif s.name == "node_network_up":
            files[f"{layout.SYS_NET}/{dev}/operstate"] = "up\n" if s.value else "down\n"
        elif s.name.startswith(_RDMA_PREFIX) and s.name.endswith(_RDMA_SUFFIX):
            name = s.name.removeprefix(_RDMA_PREFIX).removesuffix(_RDMA_SUFFIX)
            files[f"{layout.SYS_IB}/{dev}/ports/{layout.PORT}/hw_counters/{name}"] = f"{_int(s.value)}\n"
    for dev, counters in stats.items():
        files[f"{layout.ETHTOOL_S_DIR}/{dev}.txt"] = ethtool_stats.dump(dict(sorted(counters.items())))
    return files


def _by_port(samples: list[Sample]) -> dict[str, dict[str, Sample]]:
    out: dict[str, dict[str, Sample]] = defaultdict(dict)
    for s in samples:
        labels = dict(s.labels)
        out[labels.get("interface", "")][s.name] = s
    return out


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"


def _sonic_files(samples: list[Sample], oids: dict[str, str]) -> dict[str, str]:
    ports = _by_port(samples)
    counters: dict[str, dict[str, str]] = {}
    state: dict[str, dict[str, str]] = {}
    queues: dict[str, str] = {}  # COUNTERS_QUEUE_NAME_MAP: "<port>:<queue>" -> oid
    for port, metrics in ports.items():
        fields: dict[str, str] = {}
        for name, s in metrics.items():
            if name in _SAI:
                fields[_SAI[name]] = str(_int(s.value))
            elif name == "unifab_port_tx_pause_duration_us_total":
                prio = dict(s.labels).get("priority", "0")
                fields[f"SAI_PORT_STAT_PFC_{prio}_TX_PAUSE_DURATION_US"] = str(_int(s.value))
            elif name in ("unifab_port_pfcwd_storms_total", "unifab_port_lossless_drops_total"):
                key = f"{port}:{dict(s.labels).get('queue', '0')}"  # the queue's hash holds both
                queue_oid = oids.setdefault(key, f"oid:{_QUEUE_OID + len(oids):#x}")
                queues[key] = queue_oid
                value = str(_int(s.value))
                queue = counters.setdefault(f"COUNTERS:{queue_oid}", {})
                if name == "unifab_port_lossless_drops_total":
                    queue["SAI_QUEUE_STAT_DROPPED_PACKETS"] = value
                else:  # orchagent's PFC watchdog fields
                    queue["PFC_WD_STATUS"] = "operational"
                    queue["PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"] = value
                    queue["PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED"] = value
            elif name == "unifab_port_oper_up":
                state[f"PORT_TABLE|{port}"] = {"netdev_oper_status": "up" if s.value else "down"}
        if fields or any(k.startswith(f"{port}:") for k in queues):
            oid = oids.setdefault(port, f"oid:{_PORT_OID + len(oids):#x}")
            counters[f"COUNTERS:{oid}"] = fields
    out: dict[str, str] = {}
    if counters:
        names = {p: o for p, o in oids.items() if f"COUNTERS:{o}" in counters and ":" not in p}
        doc: dict[str, Any] = {"COUNTERS_PORT_NAME_MAP": names, **counters}
        if queues:
            doc["COUNTERS_QUEUE_NAME_MAP"] = queues
        out["sonic/counters_db.json"] = _json(doc)
    if state:
        out["sonic/state_db.json"] = _json(state)
    return out


def _eos_files(samples: list[Sample]) -> dict[str, str]:
    interfaces: dict[str, Any] = {}
    for port, metrics in _by_port(samples).items():
        counters: dict[str, Any] = {}
        entry: dict[str, Any] = {"name": port}
        if (s := metrics.get("unifab_port_link_down_total")) is not None:
            counters["linkStatusChanges"] = 2 * _int(s.value)  # a down and an up per link-down event
        if (s := metrics.get("unifab_port_in_errors_total")) is not None:
            counters["totalInErrors"] = _int(s.value)
            counters["inputErrorsDetail"] = {"fcsErrors": _int(s.value), "symbolErrors": 0, "runtFrames": 0}
        if (s := metrics.get("unifab_port_oper_up")) is not None:
            entry["lineProtocolStatus"] = "up" if s.value else "down"
            entry["interfaceStatus"] = "connected" if s.value else "notconnect"
        if counters or len(entry) > 1:
            if counters:
                entry["interfaceCounters"] = counters
            interfaces[port] = entry
    out = {"eos/show-interfaces.json": _json({"interfaces": interfaces})} if interfaces else {}
    queues = _eos_queue_detail(samples)
    if queues:
        out["eos/show-interfaces-counters-queue-detail.json"] = _json(queues)
    return out


def _eos_queue_detail(samples: list[Sample]) -> dict[str, Any]:
    """``show interfaces counters queue detail | json``: a port's unicast drops by traffic class (one drop
    precedence, as a switch without WRED colours counts them)."""
    interfaces: dict[str, Any] = {}
    for s in samples:
        if s.name == "unifab_port_lossless_drops_total":
            labels = dict(s.labels)
            classes = interfaces.setdefault(labels.get("interface", ""), {"ucastQueues": {"trafficClasses": {}}})
            drops = {"DP0": {"droppedPackets": _int(s.value)}}
            classes["ucastQueues"]["trafficClasses"][f"TC{labels.get('queue', '0')}"] = {"dropPrecedences": drops}
    return {"egressQueueCounters": {"interfaces": interfaces}} if interfaces else {}


def write_rounds(bundle: Path) -> list[Path]:
    """Write ``telemetry/rounds/`` from every ``telemetry/*.om`` of ``bundle``; returns the files written.

    The ``.om`` files are left as they are (removing them is the caller's choice).
    """
    fabric = load_bundle(bundle)
    telemetry = bundle / layout.TELEMETRY_DIR
    written: list[Path] = []
    for om in sorted(telemetry.glob(f"*{layout.TELEMETRY_SUFFIX}")):
        device = om.name.removesuffix(layout.TELEMETRY_SUFFIX)
        by_time: dict[float, list[Sample]] = defaultdict(list)
        for s in parse(om.read_text(), str(om)):
            if s.timestamp is not None:
                by_time[s.timestamp].append(s)
        switch = fabric.switches.get(device)
        oids: dict[str, str] = {}  # one oid per port for every round, as a switch keeps them
        for when, samples in sorted(by_time.items()):
            if device in fabric.hosts:
                base, files = f"{layout.HOSTS}/{device}", _host_files(samples)
            elif switch is not None and switch.os == "sonic":
                base, files = f"{layout.SWITCHES}/{device}", _sonic_files(samples, oids)
            elif switch is not None and switch.os == "eos":
                base, files = f"{layout.SWITCHES}/{device}", _eos_files(samples)
            else:
                continue
            root = telemetry / "rounds" / round_name(when) / base
            for rel, text in sorted(files.items()):
                write_text(root / rel, text)
                written.append(root / rel)
    return written
