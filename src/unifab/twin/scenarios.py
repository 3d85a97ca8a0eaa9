"""Misconfigurations the twin can inject, each recorded as ground truth in the checks' own terms.

A scenario picks its targets with the generator's seeded RNG, mutates the cluster state and returns
one truth entry per misconfiguration: the check that must find it, its subject, the side that is
wrong and the canonical ids of the links it affects.

Targets never overlap: switch-wide scenarios (a shared DSCP map, a WRED profile) each take whole
leaves first, and every per-link scenario takes links no other scenario touched, on the remaining
leaves. So each injection stands for exactly one root cause, and every kind stays a small minority
that the fabric's majority (its baseline) shows up against.

:data:`NEEDS` says which scenarios need a NIC vendor, driver stack or switch OS the cluster may not have
(:class:`~unifab.twin.scenario_needs.Needs`); the generator skips those where it has none.
"""

from __future__ import annotations

from collections.abc import Callable

from unifab.model import port_id
from unifab.twin.cluster import PARTIAL_MARK_MODES, QOS_MAP, ROCE_DSCP, ROCE_PRIO, Cluster, TwinPort, TwinSwitch
from unifab.twin.host_scenarios import HOST_NEEDS, HOST_SCENARIOS
from unifab.twin.picker import CANNOT_EXPRESS, HostLink, Picker, Truth, Uplink, link_truth
from unifab.twin.scenario_needs import Needs
from unifab.twin.topology_scenarios import NCCL_AND_LINK_SCENARIOS, TOPOLOGY_SCENARIOS

__all__ = ["NEEDS", "SCENARIOS", "V1_SCENARIOS", "HostLink", "Needs", "Picker", "Truth", "Uplink"]


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


def _per_priority_dcqcn(lk: HostLink) -> bool:
    """The NIC can turn DCQCN off on one priority: MLNX_OFED's ``ecn/roce_*/enable/<prio>`` (upstream mlx5 has
    only the firmware's priority mask; bnxt_re's CC is one device-wide state, see :func:`bnxt_dcqcn_off`)."""
    return lk.nic.ofed_sysfs


def _has_cable_setting(lk: HostLink) -> bool:
    """An mlx5 NIC (``mlnx_qos --cable_len``) or a SONiC/NVUE switch port (its CABLE_LENGTH / PFC profile)."""
    return lk.nic.vendor == "mlx5" or lk.leaf.os != "eos"


def dscp_lossy(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-DSCP-MAP: a leaf's DSCP map sends RoCE DSCP 26 to lossy TC 1."""
    out = []
    for leaf in pick.leaves("dscp-lossy"):
        leaf.dscp_to_tc[ROCE_DSCP] = 1
        detail = f"DSCP {ROCE_DSCP} mapped to lossy TC 1 on {leaf.name}"
        out.append(_switch_truth("QOS-DSCP-MAP", pick, leaf, "DSCP_TO_TC_MAP|ROCE", detail))
    return out


def spine_dscp_lossy(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-DSCP-MAP: a spine's DSCP map sends RoCE DSCP 26 to lossy TC 1 (every flow crossing it is dropped under
    congestion). The spine's uplinks are taken whole, so no other uplink scenario lands on them."""
    taken = pick.whole_spine("spine-dscp-lossy", why="no spine is left whose uplinks are all free")
    if taken is None:
        return []
    spine, ups = taken
    spine.dscp_to_tc[ROCE_DSCP] = 1
    return [
        {
            "check": "QOS-DSCP-MAP",
            "subject": {"kind": "switch", "id": f"switch:{spine.name}", "config": f"DSCP_TO_TC_MAP|{QOS_MAP}"},
            "entities": sorted(up.id for up in ups),
            "side": "switch",
            "device": spine.name,
            "detail": f"DSCP {ROCE_DSCP} mapped to lossy TC 1 on spine {spine.name}",
        }
    ]


def ecn_colour(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-ECN-COLOR and QOS-WRED-DROP: a SONiC spine's RoCE WRED profile marks ECN on yellow and/or red only
    (SAI ``ecn_mark_mode`` ecn_yellow, ecn_red or ecn_yellow_red), so green RoCE packets are never marked; its
    ``wred_green_enable`` stays true, so past the thresholds they are WRED-dropped on a lossless queue instead.

    A spine, taken whole: the profile is shared by every port, and a spine's uplinks are the links no leaf-side
    scenario reaches (the leaf-side scenarios have leaves of their own).
    """
    taken = pick.whole_spine(
        "ecn-colour", lambda s: s.os == "sonic", "no SONiC spine is left whose uplinks are all free"
    )
    if taken is None:
        return []
    spine, ups = taken
    mode = pick.rng.choice(PARTIAL_MARK_MODES)
    spine.ecn_mark_mode = mode
    base = {
        "subject": {"kind": "switch", "id": f"switch:{spine.name}", "config": f"WRED_PROFILE|{QOS_MAP}_Q{ROCE_PRIO}"},
        "entities": sorted(up.id for up in ups),
        "side": "switch",
        "device": spine.name,
    }
    return [
        {"check": "QOS-ECN-COLOR", **base, "detail": f"RoCE WRED profile ecn {mode}: green never marked"},
        {"check": "QOS-WRED-DROP", **base, "detail": f"ecn {mode} with wred_green_enable true: green dropped"},
    ]


def ecn_thresh(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-ECN-THRESH: a leaf's WRED profile has min and max thresholds swapped."""
    out = []
    for leaf in pick.leaves("ecn-thresh"):
        leaf.ecn_min_bytes, leaf.ecn_max_bytes = leaf.ecn_max_bytes, leaf.ecn_min_bytes
        detail = "WRED min and max thresholds swapped"
        out.append(_switch_truth("QOS-ECN-THRESH", pick, leaf, f"WRED_PROFILE|{QOS_MAP}_Q{ROCE_PRIO}", detail))
    return out


def pfc_mismatch(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-PFC-MISMATCH: PFC off on a NIC, or on priorities 3,4 on its switch port."""
    out = []
    for lk in pick.links_for("pfc-mismatch"):
        if _either(pick):
            lk.nic.pfc = set()
            out.append(link_truth("QOS-PFC-MISMATCH", lk, "nic", "PFC disabled on the NIC"))
        else:
            lk.port.pfc = {ROCE_PRIO, ROCE_PRIO + 1}
            out.append(link_truth("QOS-PFC-MISMATCH", lk, "switch", "switch port enables PFC on 3,4"))
    return out


def trust_pcp(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-TRUST: a NIC trusts PCP, or a switch port has no DSCP map bound."""
    out = []
    for lk in pick.links_for("trust-pcp"):
        if _either(pick):
            lk.nic.trust = "pcp"
            out.append(link_truth("QOS-TRUST", lk, "nic", "NIC trusts PCP"))
        else:
            lk.port.trusts_dscp = False
            out.append(link_truth("QOS-TRUST", lk, "switch", "no DSCP map bound on the switch port"))
    return out


def job_tc(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-JOB-TC: a job's hosts lose the NIC TOS override and its ranks ask NCCL for the wrong class (or none)."""
    job = pick.rng.choice(cluster.jobs)
    pick.used_jobs.add(job.job_id)
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


def dcqcn_off(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-DCQCN-OFF: an MLNX_OFED NIC's roce_np or roce_rp is off on the RoCE priority."""
    out = []
    # upstream mlx5 cc_params has no per-priority enable: DCQCN is on for every priority or none
    for lk in pick.links_for("dcqcn-off", _per_priority_dcqcn, "no free link left with an MLNX_OFED NIC"):
        point = pick.rng.choice(("roce_np", "roce_rp"))
        (lk.nic.np_enabled if point == "roce_np" else lk.nic.rp_enabled).discard(ROCE_PRIO)
        out.append(link_truth("QOS-DCQCN-OFF", lk, "nic", f"NIC {point} disabled on the RoCE priority"))
    return out


def bnxt_dcqcn_off(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-DCQCN-OFF: a Broadcom Thor NIC's bnxt_re congestion control is off, device-wide: ``ecn_enable`` 0 (no
    reaction or notification point) or ``ecn_marking`` 0 (RoCE leaves non-ECT, so no switch can mark it and no
    CNP ever comes back). ``cc_mode`` stays 1: 0 is DCQCN-D, a DCQCN variant, not off.

    The twin NIC has no bnxt fields: ``np_enabled`` without the RoCE priority renders ``ecn_enable`` 0 and
    ``rp_enabled`` without it ``ecn_marking`` 0 (:func:`unifab.twin.host_nic_vendor_files.nic_bnxt_cc`).
    """
    out = []
    why = "no free link left with a Broadcom bnxt NIC"
    for lk in pick.links_for("bnxt-dcqcn-off", lambda lk: lk.nic.vendor == "bnxt", why):
        if _either(pick):
            lk.nic.np_enabled.discard(ROCE_PRIO)
            out.append(link_truth("QOS-DCQCN-OFF", lk, "nic", "bnxt_re cc/ecn_enable 0"))
        else:
            lk.nic.rp_enabled.discard(ROCE_PRIO)
            out.append(link_truth("QOS-DCQCN-OFF", lk, "nic", "bnxt_re cc/ecn_marking 0 (RoCE sent non-ECT)"))
    return out


def cable_len(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-CABLE-LEN: NIC or switch configured for a 1 m cable on a 3 m one.

    Only mlx5 NICs have a cable-length setting (Broadcom Thor has none), and EOS sizes headroom for the
    platform's cable, so a link between a Broadcom NIC and an EOS leaf cannot get this wrong.
    """
    out = []
    why = "no free link left with a cable-length setting on either end"
    for lk in pick.links_for("cable-len", _has_cable_setting, why):
        nic_side = lk.nic.vendor == "mlx5" and (lk.leaf.os == "eos" or _either(pick))
        if nic_side:
            lk.nic.cable_len_m = 1
            out.append(link_truth("QOS-CABLE-LEN", lk, "nic", "NIC cable length 1 m on a 3 m cable"))
        else:
            lk.port.configured_cable_m = 1
            out.append(link_truth("QOS-CABLE-LEN", lk, "switch", "switch CABLE_LENGTH 1 m on a 3 m cable"))
    return out


def mtu_mismatch(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-MTU: switch port MTU 1500 under a 9000 NIC, or a NIC at 1500."""
    out = []
    for lk in pick.links_for("mtu-mismatch"):
        if _either(pick):
            lk.port.mtu = 1500
            out.append(link_truth("QOS-MTU", lk, "switch", "switch port MTU 1500 below the NIC's 9000"))
        else:
            lk.nic.mtu = 1500
            out.append(link_truth("QOS-MTU", lk, "nic", "NIC MTU 1500 in a 9000 fabric"))
    return out


def _link_scenario(
    name: str,
    check: str,
    side: str,
    doc: str,
    breaks: Callable[[HostLink], str],
    where: Callable[[HostLink], bool] | None = None,
    why: str = CANNOT_EXPRESS,
) -> Callable[[Cluster, Picker], list[Truth]]:
    """A scenario that breaks host links one way; ``breaks`` changes the link and says how.

    ``where`` keeps the links whose devices can express the change; ``why`` says so when none can.
    """

    def scenario(cluster: Cluster, pick: Picker) -> list[Truth]:
        return [link_truth(check, lk, side, breaks(lk)) for lk in pick.links_for(name, where, why)]

    scenario.__doc__ = f"{check}: {doc}"
    return scenario


def _setting(target: object, field: str, value: object, said: str) -> str:
    setattr(target, field, value)
    return said


def _pfc_off_both_ends(lk: HostLink) -> str:
    lk.nic.pfc = set()
    lk.port.pfc = set()
    return "PFC off on both ends of the link"


pfc_lossy = _link_scenario(
    "pfc-lossy", "QOS-PFC-LOSSY-ROCE", "both", "PFC off on both ends of a link.", _pfc_off_both_ends
)
tc_override = _link_scenario(
    "tc-override",
    "QOS-TC-OVERRIDE",
    "nic",
    "a NIC's traffic_class override sends RoCE as DSCP 24.",
    lambda lk: _setting(lk.nic, "tclass", 96, "traffic_class override 96 (DSCP 24)"),
    # the override is MLNX_OFED sysfs: upstream mlx5 and Broadcom have no traffic_class file
    where=lambda lk: lk.nic.ofed_sysfs,
    why="no free link left with an MLNX_OFED NIC",
)
ecn_off = _link_scenario(
    "ecn-off",
    "QOS-ECN-OFF",
    "switch",
    "no WRED/ECN profile on a switch port's RoCE queue.",
    lambda lk: _setting(lk.port, "roce_queue_ecn", False, "no WRED/ECN profile on the switch's RoCE queue"),
)
cnp_not_strict = _link_scenario(
    "cnp-not-strict",
    "QOS-CNP",
    "switch",
    "a switch port schedules the CNP queue DWRR instead of strict.",
    lambda lk: _setting(lk.port, "cnp_queue_strict", False, "CNP queue scheduled DWRR instead of strict"),
)


def ets_switch(cluster: Cluster, pick: Picker) -> list[Truth]:
    """QOS-ETS: a leaf port toward a NIC schedules the RoCE queue DWRR with weight 0 (SONiC: bound to a weight-0
    DWRR scheduler; EOS: ``tx-queue 3 / bandwidth percent 0``; NVUE: a port egress-scheduler profile with the RoCE
    traffic class at ``bw-percent 0``), so RoCE is served only when no other queue has traffic.

    The finding is the port's (``port:<leaf>:<port>``), not the link's: the NIC end is not part of it.
    """
    out = []
    for lk in pick.links_for("ets-switch"):
        lk.port.roce_queue_weight = 0
        ident = port_id(lk.leaf.name, lk.port.name)
        out.append(
            {
                "check": "QOS-ETS",
                "subject": {"kind": "port", "id": ident},
                "entities": [ident],
                "side": "switch",
                "device": lk.leaf.name,
                "detail": "RoCE queue DWRR weight 0 on the switch port: no guaranteed bandwidth",
            }
        )
    return out


pfcwd_off = _link_scenario(
    "pfcwd-off",
    "QOS-PFCWD",
    "switch",
    "no PFC watchdog on a switch port.",
    lambda lk: _setting(lk.port, "pfcwd", False, "no PFC watchdog on the port"),
)
# only SONiC configs carry PG buffer profiles; EOS and NVUE size headroom on the platform
headroom_short = _link_scenario(
    "headroom-short",
    "QOS-HEADROOM",
    "switch",
    "a switch port's lossless PG gets a quarter of the xoff its cable needs.",
    lambda lk: _setting(lk.port, "headroom_short", True, "lossless PG xoff cut to a quarter"),
    where=lambda lk: lk.leaf.os == "sonic",
    why="no free link left on a SONiC leaf",
)
global_pause = _link_scenario(
    "global-pause",
    "QOS-GLOBAL-PAUSE",
    "nic",
    "a NIC with 802.3x rx/tx pause on beside PFC.",
    lambda lk: _setting(lk.nic, "global_pause", True, "ethtool -A rx on tx on"),
)


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
    why: str = CANNOT_EXPRESS,
) -> Callable[[Cluster, Picker], list[Truth]]:
    """A scenario that breaks one end (leaf or spine, at random) of leaf-spine links; ``breaks`` says how."""

    def scenario(cluster: Cluster, pick: Picker) -> list[Truth]:
        out = []
        for up in pick.uplinks_for(name, where, why):
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
    why="no free leaf-spine link left with SONiC on both ends",
)
uplink_mtu = _uplink_scenario("uplink-mtu", "QOS-MTU", "at MTU 1500", lambda p: _set(p, "mtu", 1500, "at MTU 1500"))
uplink_ecn = _uplink_scenario(
    "uplink-ecn",
    "QOS-ECN-OFF",
    "without ECN marking on the RoCE queue",
    lambda p: _set(p, "roce_queue_ecn", False, "without ECN on the RoCE queue"),
)
uplink_trust = _uplink_scenario(
    "uplink-trust",
    "QOS-TRUST",
    "bound to no DSCP map (trusting nothing)",
    lambda p: _set(p, "trusts_dscp", False, "bound to no DSCP map"),
)
uplink_cnp = _uplink_scenario(
    "uplink-cnp",
    "QOS-CNP",
    "with its CNP queue scheduled DWRR",
    lambda p: _set(p, "cnp_queue_strict", False, "with the CNP queue on DWRR"),
)
uplink_pfcwd = _uplink_scenario(
    "uplink-pfcwd",
    "QOS-PFCWD",
    "without the PFC watchdog",
    lambda p: _set(p, "pfcwd", False, "without the PFC watchdog"),
)
uplink_pfc = _uplink_scenario(
    "uplink-pfc", "QOS-PFC-MISMATCH", "with PFC off", lambda p: _set(p, "pfc", set(), "with PFC off")
)
# the 30 m uplink cables need the largest headroom; only SONiC configs carry PG buffer profiles
uplink_headroom = _uplink_scenario(
    "uplink-headroom",
    "QOS-HEADROOM",
    "with a quarter of the lossless PG xoff its cable needs",
    lambda p: _set(p, "headroom_short", True, "with the lossless PG xoff cut to a quarter"),
    where=lambda up: up.leaf.os == up.spine.os == "sonic",
    why="no free leaf-spine link left with SONiC on both ends",
)


# Switch-wide scenarios come first so per-link ones avoid their leaves (see Picker).
SCENARIOS: dict[str, Callable[[Cluster, Picker], list[Truth]]] = {
    "dscp-lossy": dscp_lossy,
    "spine-dscp-lossy": spine_dscp_lossy,
    "ecn-colour": ecn_colour,
    "ecn-thresh": ecn_thresh,
    "job-tc": job_tc,
    "pfc-mismatch": pfc_mismatch,
    "pfc-lossy": pfc_lossy,
    "trust-pcp": trust_pcp,
    "tc-override": tc_override,
    "ecn-off": ecn_off,
    "dcqcn-off": dcqcn_off,
    "bnxt-dcqcn-off": bnxt_dcqcn_off,
    "cnp-not-strict": cnp_not_strict,
    "pfcwd-off": pfcwd_off,
    "cable-len": cable_len,
    "headroom-short": headroom_short,
    "global-pause": global_pause,
    "mtu-mismatch": mtu_mismatch,
    "uplink-speed": uplink_speed,
    "uplink-fec": uplink_fec,
    "uplink-mtu": uplink_mtu,
    "uplink-pfc": uplink_pfc,
    "uplink-headroom": uplink_headroom,
    "uplink-ecn": uplink_ecn,
    "uplink-trust": uplink_trust,
    "uplink-cnp": uplink_cnp,
    "uplink-pfcwd": uplink_pfcwd,
    # last of the QoS ones, so the seeded picks of the scenarios before it stay as they were
    "ets-switch": ets_switch,
}
V1_SCENARIOS = ("pfc-mismatch", "dscp-lossy", "ecn-off", "mtu-mismatch")
# Host facts (PCIe, GIDs, RoCE MTU, DCBX, ETS, ACS, peer memory) take free NIC links and free hosts next.
SCENARIOS.update(HOST_SCENARIOS)
# Cabling scenarios (miswire, missing-cable, rail-swap) take free host links after all the others, then
# the ones that break what NCCL assumes and the links' capacity (affinity, nccl-hca, degraded-link, uplink-down).
SCENARIOS.update(TOPOLOGY_SCENARIOS)
SCENARIOS.update(NCCL_AND_LINK_SCENARIOS)

_SONIC = frozenset({"sonic"})
# Scenarios a cluster may have no device for (the rest need only links, leaves, hosts or jobs): the generator
# skips them there, saying which kind of device is missing. Each matches the devices the scenario's own picks
# narrow to (``where``), so with these met a scenario always finds one, unless other scenarios took them all.
NEEDS: dict[str, Needs] = {
    "tc-override": Needs(
        "no NIC in this cluster runs MLNX_OFED (the traffic_class override)",
        nic_vendor=frozenset({"mlx5"}),
        nic_driver=frozenset({"ofed"}),
    ),
    "dcqcn-off": Needs(
        "no NIC in this cluster has a per-priority DCQCN enable (MLNX_OFED ecn/roce_*/enable)",
        nic_vendor=frozenset({"mlx5"}),
        nic_driver=frozenset({"ofed"}),
    ),
    "bnxt-dcqcn-off": Needs(
        "no NIC in this cluster is a Broadcom bnxt (bnxt_re CC configfs)", nic_vendor=frozenset({"bnxt"})
    ),
    "cable-len": Needs(
        "no link in this cluster has a cable-length setting on either end (an mlx5 NIC, a SONiC or NVUE leaf)",
        nic_vendor=frozenset({"mlx5"}),
        otherwise=Needs("no SONiC or NVUE leaf", leaf_os=frozenset({"sonic", "nvue"})),
    ),
    "headroom-short": Needs("no leaf in this cluster runs SONiC (PG buffer profiles)", leaf_os=_SONIC),
    "ecn-colour": Needs("no spine in this cluster runs SONiC (WRED_PROFILE ecn mark mode)", spine_os=_SONIC),
    "uplink-fec": Needs("no leaf-spine link in this cluster has SONiC on both ends (PORT.fec)", uplink_os=_SONIC),
    "uplink-headroom": Needs(
        "no leaf-spine link in this cluster has SONiC on both ends (PG buffer profiles)", uplink_os=_SONIC
    ),
    **HOST_NEEDS,
}
