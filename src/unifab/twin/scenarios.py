"""Misconfigurations the twin can inject, each recorded as ground truth in the checks' own terms.

A scenario picks its targets with the generator's seeded RNG, mutates the cluster state and returns
one truth entry per misconfiguration: the check that must find it, its subject, the side that is
wrong and the canonical ids of the links it affects.

Targets never overlap: switch-wide scenarios (a shared DSCP map, a WRED profile) each take whole
leaves first, and every per-link scenario takes links no other scenario touched, on the remaining
leaves. So each injection stands for exactly one root cause, and every kind stays a small minority
that the fabric's majority (its baseline) shows up against.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from unifab.errors import UsageError
from unifab.model import Endpoint, link_id
from unifab.twin.cluster import ROCE_DSCP, ROCE_PRIO, Cluster, TwinNic, TwinPort, TwinSwitch

Truth = dict[str, Any]


@dataclass(frozen=True, slots=True)
class HostLink:
    nic: TwinNic
    leaf: TwinSwitch
    port: TwinPort

    @property
    def id(self) -> str:
        return link_id(Endpoint(self.nic.host, self.nic.netdev), Endpoint(self.leaf.name, self.port.name))

    def subject(self) -> dict[str, str]:
        return {"kind": "link", "a": f"{self.nic.host}:{self.nic.netdev}", "b": f"{self.leaf.name}:{self.port.name}"}


@dataclass(frozen=True, slots=True)
class Uplink:
    """A leaf port cabled to a spine port, both ends as twin ports."""

    leaf: TwinSwitch
    leaf_port: TwinPort
    spine: TwinSwitch
    spine_port: TwinPort

    @property
    def id(self) -> str:
        return link_id(Endpoint(self.leaf.name, self.leaf_port.name), Endpoint(self.spine.name, self.spine_port.name))

    def subject(self) -> dict[str, str]:
        return {
            "kind": "link",
            "a": f"{self.leaf.name}:{self.leaf_port.name}",
            "b": f"{self.spine.name}:{self.spine_port.name}",
        }


def uplinks(cluster: Cluster) -> list[Uplink]:
    out = []
    for leaf in cluster.leaves():
        for port in leaf.ports.values():
            spine = cluster.switches.get(port.peer_node)
            if spine is not None and spine.role == "spine":
                out.append(Uplink(leaf, port, spine, spine.ports[port.peer_port]))
    return out


def host_links(cluster: Cluster) -> list[HostLink]:
    nics = {(n.host, n.netdev): n for nics in cluster.hosts.values() for n in nics}
    return [
        HostLink(nics[(p.peer_node, p.peer_port)], leaf, p)
        for leaf in cluster.leaves()
        for p in cluster.host_ports(leaf)
    ]


class Picker:
    """Hands out leaves and links so that no two injections share a target."""

    def __init__(self, cluster: Cluster, rng: random.Random) -> None:
        self.rng = rng
        self.cluster = cluster
        self.links = host_links(cluster)
        self.used_links: set[str] = set()
        self.used_leaves: set[str] = set()
        self.uplinks = uplinks(cluster)
        self.used_uplinks: set[str] = set()
        self.skipped: list[dict[str, str]] = []

    def _skip(self, scenario: str, why: str) -> list[Any]:
        self.skipped.append({"scenario": scenario, "why": why})
        return []

    def per_link_count(self) -> int:
        """Instances of a per-link scenario: one, plus one per 64 hosts."""
        return 1 + len(self.links) // 512

    def leaves(self, scenario: str) -> list[TwinSwitch]:
        free = [leaf for leaf in self.cluster.leaves() if leaf.name not in self.used_leaves]
        want = max(1, len(self.cluster.leaves()) // 16)
        if len(free) <= want:
            raise UsageError(f"the cluster is too small to inject {scenario!r} beside the other scenarios")
        chosen = self.rng.sample(free, want)
        self.used_leaves.update(leaf.name for leaf in chosen)
        return chosen

    def links_for(self, scenario: str, where: Callable[[HostLink], bool] | None = None) -> list[HostLink]:
        """Free host links (``where`` narrows them, e.g. to leaves whose OS can express the setting)."""
        free = [
            lk
            for lk in self.links
            if lk.id not in self.used_links and lk.leaf.name not in self.used_leaves and (where is None or where(lk))
        ]
        want = self.per_link_count()
        if not free and where is not None:
            return self._skip(scenario, "no switch in this cluster runs an OS that can express it")
        if len(free) < want:
            raise UsageError(f"the cluster is too small to inject {scenario!r} beside the other scenarios")
        chosen = self.rng.sample(free, want)
        self.used_links.update(lk.id for lk in chosen)
        return chosen

    def uplinks_for(self, scenario: str, where: Callable[[Uplink], bool] | None = None) -> list[Uplink]:
        free = [up for up in self.uplinks if up.id not in self.used_uplinks and (where is None or where(up))]
        want = 1 + len(self.uplinks) // 512
        if not free and where is not None:
            return self._skip(scenario, "no switch link in this cluster runs an OS that can express it")
        if len(free) < want:
            raise UsageError(f"the cluster is too small to inject {scenario!r} beside the other scenarios")
        chosen = self.rng.sample(free, want)
        self.used_uplinks.update(up.id for up in chosen)
        return chosen

    def links_on(self, leaf: TwinSwitch) -> list[HostLink]:
        return [lk for lk in self.links if lk.leaf is leaf]


def _truth(check: str, lk: HostLink, side: str, detail: str) -> Truth:
    return {"check": check, "subject": lk.subject(), "entities": [lk.id], "side": side, "detail": detail}


def _switch_truth(check: str, pick: Picker, leaf: TwinSwitch, config: str, detail: str) -> Truth:
    return {
        "check": check,
        "subject": {"kind": "switch", "id": f"switch:{leaf.name}", "config": config},
        "entities": sorted(lk.id for lk in pick.links_on(leaf)),
        "side": "switch",
        "detail": detail,
    }


def _either(pick: Picker) -> bool:
    return pick.rng.random() < 0.5


def dscp_lossy(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-DSCP-MAP: a leaf's DSCP map sends RoCE DSCP 26 to lossy TC 1."""
    out = []
    for leaf in pick.leaves("dscp-lossy"):
        leaf.dscp_to_tc[ROCE_DSCP] = 1
        detail = f"DSCP {ROCE_DSCP} mapped to lossy TC 1 on {leaf.name}"
        out.append(_switch_truth("QOS-DSCP-MAP", pick, leaf, "DSCP_TO_TC_MAP|ROCE", detail))
    return out


def ecn_thresh(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-ECN-THRESH: a leaf's WRED profile has min and max thresholds swapped."""
    out = []
    for leaf in pick.leaves("ecn-thresh"):
        leaf.ecn_min_bytes, leaf.ecn_max_bytes = leaf.ecn_max_bytes, leaf.ecn_min_bytes
        detail = "WRED min and max thresholds swapped"
        out.append(_switch_truth("QOS-ECN-THRESH", pick, leaf, "WRED_PROFILE|ROCE_LOSSLESS", detail))
    return out


def pfc_mismatch(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-PFC-MISMATCH: PFC off on a NIC, or on priorities 3,4 on its switch port."""
    out = []
    for lk in pick.links_for("pfc-mismatch"):
        if _either(pick):
            lk.nic.pfc = set()
            out.append(_truth("QOS-PFC-MISMATCH", lk, "nic", "PFC disabled on the NIC"))
        else:
            lk.port.pfc = {ROCE_PRIO, ROCE_PRIO + 1}
            out.append(_truth("QOS-PFC-MISMATCH", lk, "switch", "switch port enables PFC on 3,4"))
    return out


def pfc_lossy(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-PFC-LOSSY-ROCE: PFC off on both ends of a link."""
    out = []
    for lk in pick.links_for("pfc-lossy"):
        lk.nic.pfc = set()
        lk.port.pfc = set()
        out.append(_truth("QOS-PFC-LOSSY-ROCE", lk, "both", "PFC off on both ends of the link"))
    return out


def trust_pcp(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-TRUST: a NIC trusts PCP, or a switch port has no DSCP map bound."""
    out = []
    for lk in pick.links_for("trust-pcp"):
        if _either(pick):
            lk.nic.trust = "pcp"
            out.append(_truth("QOS-TRUST", lk, "nic", "NIC trusts PCP"))
        else:
            lk.port.trusts_dscp = False
            out.append(_truth("QOS-TRUST", lk, "switch", "no DSCP map bound on the switch port"))
    return out


def job_tc(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-JOB-TC: a job's hosts lose the NIC TOS override and its ranks ask NCCL for the wrong class (or none)."""
    job = pick.rng.choice(cluster.jobs)
    for nic in (nic for host in job.hosts for nic in cluster.hosts[host]):
        nic.tclass = None  # runs before tc-override, which may still put an override on one of these NICs
    if _either(pick):
        del job.env["NCCL_IB_TC"]
        detail = "NCCL_IB_TC unset"
    else:
        job.env["NCCL_IB_TC"] = "96"
        detail = "NCCL_IB_TC=96 (DSCP 24)"
    job_id = f"job:slurm:{job.job_id}"
    return [
        {
            "check": "QOS-JOB-TC",
            "subject": {"kind": "job", "id": job_id},
            "entities": [job_id],
            "side": "job",
            "detail": detail,
        }
    ]


def tc_override(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-TC-OVERRIDE: a NIC's traffic_class override sends RoCE as DSCP 24."""
    out = []
    for lk in pick.links_for("tc-override"):
        lk.nic.tclass = 96
        out.append(_truth("QOS-TC-OVERRIDE", lk, "nic", "traffic_class override 96 (DSCP 24)"))
    return out


def ecn_off(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-ECN-OFF: no WRED/ECN profile on a switch port's RoCE queue."""
    out = []
    for lk in pick.links_for("ecn-off"):
        lk.port.roce_queue_ecn = False
        out.append(_truth("QOS-ECN-OFF", lk, "switch", "no WRED/ECN profile on the switch's RoCE queue"))
    return out


def dcqcn_off(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-DCQCN-OFF: a NIC's roce_np or roce_rp is off on the RoCE priority."""
    out = []
    for lk in pick.links_for("dcqcn-off"):
        point = pick.rng.choice(("roce_np", "roce_rp"))
        (lk.nic.np_enabled if point == "roce_np" else lk.nic.rp_enabled).discard(ROCE_PRIO)
        out.append(_truth("QOS-DCQCN-OFF", lk, "nic", f"NIC {point} disabled on the RoCE priority"))
    return out


def cnp_not_strict(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-CNP: a switch port schedules the CNP queue DWRR instead of strict."""
    out = []
    for lk in pick.links_for("cnp-not-strict"):
        lk.port.cnp_queue_strict = False
        out.append(_truth("QOS-CNP", lk, "switch", "CNP queue scheduled DWRR instead of strict"))
    return out


def pfcwd_off(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-PFCWD: no PFC watchdog on a switch port."""
    out = []
    for lk in pick.links_for("pfcwd-off"):
        lk.port.pfcwd = False
        out.append(_truth("QOS-PFCWD", lk, "switch", "no PFC watchdog on the port"))
    return out


def cable_len(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-CABLE-LEN: NIC or switch configured for a 1 m cable on a 3 m one."""
    out = []
    for lk in pick.links_for("cable-len"):
        if _either(pick) or lk.leaf.os == "eos":  # EOS has no cable-length setting to get wrong
            lk.nic.cable_len_m = 1
            out.append(_truth("QOS-CABLE-LEN", lk, "nic", "NIC cable length 1 m on a 3 m cable"))
        else:
            lk.port.configured_cable_m = 1
            out.append(_truth("QOS-CABLE-LEN", lk, "switch", "switch CABLE_LENGTH 1 m on a 3 m cable"))
    return out


def headroom_short(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-HEADROOM: a switch port's lossless PG gets a quarter of the xoff its cable needs."""
    out = []
    # only SONiC configs carry PG buffer profiles; EOS and NVUE size headroom on the platform
    for lk in pick.links_for("headroom-short", where=lambda lk: lk.leaf.os == "sonic"):
        lk.port.headroom_short = True
        out.append(_truth("QOS-HEADROOM", lk, "switch", "lossless PG xoff cut to a quarter"))
    return out


def mtu_mismatch(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-MTU: switch port MTU 1500 under a 9000 NIC, or a NIC at 1500."""
    out = []
    for lk in pick.links_for("mtu-mismatch"):
        if _either(pick):
            lk.port.mtu = 1500
            out.append(_truth("QOS-MTU", lk, "switch", "switch port MTU 1500 below the NIC's 9000"))
        else:
            lk.nic.mtu = 1500
            out.append(_truth("QOS-MTU", lk, "nic", "NIC MTU 1500 in a 9000 fabric"))
    return out


def _uplink_truth(check: str, up: Uplink, side: str, detail: str) -> Truth:
    device = up.leaf.name if side == "leaf" else up.spine.name
    return {
        "check": check,
        "subject": up.subject(),
        "entities": [up.id],
        "side": "switch",
        "device": device,
        "detail": detail,
    }


def _uplink_end(pick: Picker, up: Uplink) -> tuple[str, TwinPort]:
    return ("leaf", up.leaf_port) if _either(pick) else ("spine", up.spine_port)


def _uplink_scenario(
    name: str,
    check: str,
    doc: str,
    breaks: Callable[[TwinPort], str],
    where: Callable[[Uplink], bool] | None = None,
) -> Callable[[Cluster, Picker], list[Truth]]:
    """A scenario that breaks one end (leaf or spine, at random) of leaf-spine links; ``breaks`` says how."""

    def scenario(cluster: Cluster, pick: Picker) -> list[Truth]:
        out = []
        for up in pick.uplinks_for(name, where):
            side, port = _uplink_end(pick, up)
            out.append(_uplink_truth(check, up, side, f"{side} end {breaks(port)}"))
        return out

    scenario.__doc__ = f"{check}: one end of a leaf-spine link {doc}."
    return scenario


def _set(port: TwinPort, field: str, value: object, said: str) -> str:
    setattr(port, field, value)
    return said


uplink_speed = _uplink_scenario(
    "uplink-speed", "LINK-SPEED", "set to 200G", lambda p: _set(p, "speed_mbps", 200_000, "at 200G")
)
# FEC is read from SONiC PORT.fec; the EOS and NVUE readers do not carry it yet
uplink_fec = _uplink_scenario(
    "uplink-fec",
    "LINK-FEC",
    "with FEC off",
    lambda p: _set(p, "fec", "none", "with FEC none"),
    where=lambda up: up.leaf.os == up.spine.os == "sonic",
)
uplink_mtu = _uplink_scenario("uplink-mtu", "QOS-MTU", "at MTU 1500", lambda p: _set(p, "mtu", 1500, "at MTU 1500"))
uplink_ecn = _uplink_scenario(
    "uplink-ecn",
    "QOS-ECN-OFF",
    "without ECN marking on the RoCE queue",
    lambda p: _set(p, "roce_queue_ecn", False, "without ECN on the RoCE queue"),
)
uplink_pfc = _uplink_scenario(
    "uplink-pfc", "QOS-PFC-MISMATCH", "with PFC off", lambda p: _set(p, "pfc", set(), "with PFC off")
)


# Switch-wide scenarios come first so per-link ones avoid their leaves (see Picker).
SCENARIOS: dict[str, Callable[[Cluster, Picker], list[Truth]]] = {
    "dscp-lossy": dscp_lossy,
    "ecn-thresh": ecn_thresh,
    "job-tc": job_tc,
    "pfc-mismatch": pfc_mismatch,
    "pfc-lossy": pfc_lossy,
    "trust-pcp": trust_pcp,
    "tc-override": tc_override,
    "ecn-off": ecn_off,
    "dcqcn-off": dcqcn_off,
    "cnp-not-strict": cnp_not_strict,
    "pfcwd-off": pfcwd_off,
    "cable-len": cable_len,
    "headroom-short": headroom_short,
    "mtu-mismatch": mtu_mismatch,
    "uplink-speed": uplink_speed,
    "uplink-fec": uplink_fec,
    "uplink-mtu": uplink_mtu,
    "uplink-pfc": uplink_pfc,
    "uplink-ecn": uplink_ecn,
}
V1_SCENARIOS = ("pfc-mismatch", "dscp-lossy", "ecn-off", "mtu-mismatch")
