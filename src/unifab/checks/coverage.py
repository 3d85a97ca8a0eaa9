"""Per check: the link tiers it judges and, for the buffer checks, the buffer model and formula it applies.

Data for the catalog (``docs/checks.md``, :mod:`unifab.checks.catalog`), beside the registry's prose; a test fails
when a registered check has no entry. Each entry is read off the check's code: ``CheckContext.nic_links`` are the
host↔leaf cables, ``CheckContext.port_links`` every switch↔switch cable, and no check tells leaf↔spine from
spine↔super-spine (a switch link is judged the same whatever its ends' roles), so a check over ``port_links``
covers both. ``n/a``: the check judges a device, a host's insides, a job or an input file, not a link.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COVERAGE", "EVERY_TIER", "HOST_LEAF", "LEAF_SPINE", "NOT_A_LINK", "SPINE_SUPER", "TIERS", "Coverage"]

HOST_LEAF = "host↔leaf"
LEAF_SPINE = "leaf↔spine"
SPINE_SUPER = "spine↔super-spine"
NOT_A_LINK = "n/a"
TIERS = (HOST_LEAF, LEAF_SPINE, SPINE_SUPER, NOT_A_LINK)
EVERY_TIER = (HOST_LEAF, LEAF_SPINE, SPINE_SUPER)
_SWITCH_LINKS = (LEAF_SPINE, SPINE_SUPER)
_NONE = (NOT_A_LINK,)


@dataclass(frozen=True, slots=True)
class Coverage:
    """``tiers``: the link tiers the check judges (or ``("n/a",)``); ``scope``: what on them, when not the
    whole link; ``buffer``: the buffer model and formula a headroom/buffer check applies, per platform."""

    tiers: tuple[str, ...]
    scope: str = ""
    buffer: str = ""

    def __post_init__(self) -> None:
        if not self.tiers or not set(self.tiers) <= set(TIERS) or (NOT_A_LINK in self.tiers and len(self.tiers) > 1):
            raise ValueError(f"tiers are some of {', '.join(EVERY_TIER)}, or n/a alone; got {self.tiers}")


_HEADROOM_BUFFER = (
    "Switch, SONiC on Spectrum, by the switch's buffer model (DEVICE_METADATA buffer_model, else inferred from "
    "its PGs): traditional — a static PG profile's xoff and size against its HwSKU's pg_profile_lookup.ini row "
    "for the port speed and the cable rounded up to the table's bucket (tables shipped for the common Mellanox "
    "SKUs), else sonic-swss buffer_headroom_mellanox.lua at small_packet_percentage 100; dynamic — static "
    "profiles against the same Lua with the switch's LOSSLESS_TRAFFIC_PATTERN (small_packet_percentage 100 when "
    "not collected), and profiles the switch computes itself are not judged. Table rows are exact, the Lua is "
    "allowed 1 KB; a profile short of the requirement but above the Lua at 50 % is a WARNING unless the switch's "
    "own pattern was collected (dynamic model). A lossless PG without a BUFFER_PG entry is reported. Switch whose "
    "ASIC is not known to be Spectrum: the 802.1Qbb lower bound, 2 × MTU + the cable round trip + the pause "
    "response. Cable: CABLE_LENGTH, else the plan, else 5 m (the evidence says which). EOS and NVUE ports: not "
    "judged (the platform sizes PG buffers from the cable; the configuration holds none). NIC, mlx5 only: each "
    "lossless receive buffer the driver owns against xoff + max_mtu + one cell, with the driver's calculate_xoff "
    "= (301 + 2.16 × cable_len) × speed + 2.72 × MTU (cable_len from mlnx_qos, 7 m when unknown; max_mtu the "
    "netdev's maxmtu but at least 9216, ConnectX's 9978 when not collected); unknown buffer ownership is graded "
    "WARNING. Broadcom Thor NICs: not judged (niccli prints no receive buffers; the firmware sizes headroom)."
)

COVERAGE: dict[str, Coverage] = {
    # --- QoS classification and PFC (checks.qos, checks.uplink_qos) ---
    "QOS-TRUST": Coverage(EVERY_TIER, "NIC and leaf port trust on host links; each end of a switch link"),
    "QOS-PFC-MISMATCH": Coverage(EVERY_TIER, "the two ends' PFC priorities on every link"),
    "QOS-PFC-LOSSY-ROCE": Coverage((HOST_LEAF,), "NIC and leaf port agreeing on PFC off for the RoCE priority"),
    "QOS-DSCP-MAP": Coverage(EVERY_TIER, "NIC and leaf maps on host links; each switch link end's map"),
    "QOS-TC-OVERRIDE": Coverage((HOST_LEAF,), "the NIC end (its traffic_class override)"),
    "QOS-GLOBAL-PAUSE": Coverage((HOST_LEAF,), "the NIC end (802.3x pause on a link that runs PFC)"),
    "QOS-PFCWD": Coverage(EVERY_TIER, "the switch ports: the leaf port toward each NIC, both ends of switch links"),
    # --- congestion control (checks.congestion) ---
    "QOS-ECN-OFF": Coverage(EVERY_TIER, "the switch egress RoCE queue: toward each NIC, both ends of switch links"),
    "QOS-ECN-THRESH": Coverage(
        (HOST_LEAF,), "the leaf egress RoCE queue toward each NIC; WRED profiles only spine ports use are not judged"
    ),
    "QOS-ECN-COLOR": Coverage(EVERY_TIER, "every switch egress RoCE queue, one finding per switch WRED profile"),
    "QOS-WRED-DROP": Coverage(EVERY_TIER, "every lossless switch egress RoCE queue, one finding per WRED profile"),
    "QOS-DCQCN-OFF": Coverage((HOST_LEAF,), "the NIC end (its notification and reaction points)"),
    "QOS-CNP": Coverage(EVERY_TIER, "the switch CNP queue: toward each NIC, both ends of switch links"),
    # --- buffers (checks.headroom, checks.headroom_uplinks) ---
    "QOS-HEADROOM": Coverage(
        EVERY_TIER,
        "both ends of host links (leaf PG, NIC receive buffer); each end's PGs on switch links",
        _HEADROOM_BUFFER,
    ),
    # --- links (checks.link) ---
    "LINK-SPEED": Coverage(_SWITCH_LINKS, "the two ends of a switch link (host link speed: TOPO-DEGRADED)"),
    "LINK-FEC": Coverage(_SWITCH_LINKS, "the two ends of a switch link"),
    "QOS-MTU": Coverage(
        EVERY_TIER, "leaf port ≥ NIC and NIC not below the fabric on host links; equal ends on switch links"
    ),
    "QOS-CABLE-LEN": Coverage(
        (HOST_LEAF,),
        "the NIC's and the leaf port's configured cable length against the plan (uplink cables: QOS-HEADROOM)",
        "SONiC traditional buffer model: the pg_profile_lookup.ini bucket the cable rounds up to (5 m for 3 m) is "
        "right too, and the switch fix writes that bucket, the only lengths buffermgrd has a lossless profile "
        "for; elsewhere the planned length rounded up to whole metres (without a plan the two ends must agree).",
    ),
    # --- jobs (checks.jobs) ---
    "QOS-JOB-TC": Coverage(_NONE, "a job's NCCL_IB_TC, against the class its hosts' leaf ports give that DSCP"),
    # --- cabling (checks.topology*) ---
    "TOPO-MISSING": Coverage(EVERY_TIER, "planned cables against LLDP (RoCE) or ibnetdiscover (InfiniBand)"),
    "TOPO-UNVERIFIED": Coverage(EVERY_TIER, "planned cables whose far end was not collected"),
    "TOPO-UNEXPECTED": Coverage(EVERY_TIER, "discovered cables the plan does not have"),
    "TOPO-MISWIRED": Coverage(EVERY_TIER, "planned cables LLDP sees elsewhere"),
    "TOPO-RAIL": Coverage((HOST_LEAF,), "a NIC's rail against its leaf's"),
    "TOPO-PCIE-AFFINITY": Coverage(_NONE, "inside a host: each GPU's closest NIC"),
    "TOPO-NCCL-HCA": Coverage(_NONE, "a job's NCCL_IB_HCA against its hosts' rail NICs"),
    "TOPO-DEGRADED": Coverage(
        EVERY_TIER, "a link's speed against links of its kind (host or switch) on its switch, else fabric-wide"
    ),
    "TOPO-UPLINKS": Coverage((LEAF_SPINE,), "a leaf's uplinks up against the plan's"),
    "COVERAGE": Coverage(_NONE, "planned devices not collected (the finding lists the links left unchecked)"),
    # --- host facts (checks.host, checks.host_pcie, checks.host_qos) ---
    "HOST-GID": Coverage(_NONE, "a NIC's GID table"),
    "HOST-ROCE-MTU": Coverage(_NONE, "a NIC's RoCE active MTU against its netdev MTU"),
    "HOST-PEERMEM": Coverage(_NONE, "a host's kernel modules"),
    "HOST-PCIE-DOWNGRADED": Coverage(_NONE, "a NIC's or GPU's PCIe link inside the host"),
    "HOST-ACS": Coverage(_NONE, "PCIe bridges inside the host"),
    "QOS-DCBX": Coverage((HOST_LEAF,), "the NIC end (who owns its QoS: OS or firmware DCBX)"),
    "QOS-ETS": Coverage((HOST_LEAF,), "the NIC's ETS and the leaf port's RoCE queue toward it"),
    # --- fleet versions (checks.fleet) ---
    "FLEET-FIRMWARE": Coverage(_NONE, "NIC and optic firmware across the fleet"),
    "FLEET-DRIVER": Coverage(_NONE, "host drivers, CUDA and NCCL across the fleet"),
    "FLEET-OS": Coverage(_NONE, "switch OS images across the fleet"),
    # --- InfiniBand (checks.ib) ---
    "IB-SM": Coverage(_NONE, "the subnet managers of an InfiniBand subnet"),
    "IB-DUPLICATE": Coverage(_NONE, "node and port GUIDs and LIDs of an InfiniBand subnet"),
    "IB-COUNTERS": Coverage(EVERY_TIER, "every InfiniBand port, HCA and switch, on its own"),
    "IB-MTU": Coverage((HOST_LEAF,), "each HCA port (the host end), against the MTU most HCA ports run"),
    "IB-SL": Coverage(_NONE, "a job's NCCL_IB_SL"),
    # --- the host gate (checks.gate_catalog, judged by unifab agent gate) ---
    "GATE-NO-RDMA": Coverage(_NONE, "the host's RDMA devices"),
    "GATE-NIC-DOWN": Coverage(_NONE, "the host's RDMA ports"),
    "GATE-NIC-QOS": Coverage(_NONE, "the host's NICs against the intent"),
    "GATE-JOB-ENV": Coverage(_NONE, "a job's NCCL environment"),
    "GATE-JOB-HCA": Coverage(_NONE, "a job's NCCL_IB_HCA on this host"),
    "GATE-JOB-GID": Coverage(_NONE, "a job's NCCL_IB_GID_INDEX on this host"),
    "GATE-JOB-IFNAME": Coverage(_NONE, "a job's NCCL_SOCKET_IFNAME on this host"),
    # --- input (the collector) ---
    "INPUT-UNREADABLE": Coverage(_NONE, "a collected file"),
    "INPUT-PARTIAL": Coverage(_NONE, "a collected file"),
    "INPUT-MISSING": Coverage(_NONE, "a device's files"),
    "INPUT-STALE": Coverage(_NONE, "a switch's last collect"),
}
