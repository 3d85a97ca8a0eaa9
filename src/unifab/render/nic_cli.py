"""A finding's NIC-side fix in the NIC's own language: MLNX_OFED ConnectX, upstream mlx5, or Broadcom Thor.

:func:`for_nic` picks the dialect from what the bundle reader found (:attr:`NicQos.source`: the MLNX_OFED
``ecn/`` sysfs tree, the upstream debugfs ``cc_params``, or ``niccli`` + ``bnxt_re`` configfs), the same
split the host script makes at run time (``command -v mlnx_qos``, ``[ -d .../ecn ]``, the driver). A NIC
without that marker falls back to its driver: ``bnxt_en`` is Broadcom, anything else MLNX_OFED.

Every method returns the commands in order. Where a dialect has no such setting it returns a ``#`` comment
saying so (and the nearest real setting when there is one), never an invented command. Names are
validated before they reach a command (:func:`unifab.render.host_script.netdev`); :func:`nic_fix` turns a
rejected name into a comment so that one odd NIC does not stop a fabric-wide check.

A safe procedure (:class:`NicFixes`): a setting that toggles the port's link (a PFC change: mlx5's
``setpfc`` calls ``mlx5_toggle_port_link`` when the bitmap changes, bnxt_en re-negotiates; a receive-buffer
change, which also moves mlx5 to driver-owned buffers) is preceded by draining the node in the scheduler
(``scontrol update NodeName=<host> State=DRAIN Reason=...``, then a wait until Slurm reports it
``drained``) and followed by resuming it. Where the NIC's DCBX is firmware controlled (``mlnx_qos``
"DCBX mode: Firmware controlled", when the bundle carries it) the switch's DCBX TLVs override what the OS
sets, so the fix says so and first hands DCBX to the OS (``mlnx_qos -d os``), or names the switch-side /
firmware setting where the stack has no runtime switch.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from unifab.errors import UsageError
from unifab.model import Fix, Nic
from unifab.render import host_script as hs
from unifab.render import nic_bnxt, nic_mlx5
from unifab.render.scheduler import drain_argvs, resume_argvs

__all__ = [
    "BNXT",
    "DIALECTS",
    "OFED",
    "UPSTREAM",
    "Bnxt",
    "Commands",
    "Mlx5Ofed",
    "Mlx5Upstream",
    "NicCli",
    "NicFixes",
    "dcbx_of",
    "dialect_of",
    "drained",
    "for_nic",
    "nic_fix",
]

OFED = "mlnx_ofed"
UPSTREAM = "mlx5_upstream"
BNXT = "bnxt"
DIALECTS = (OFED, UPSTREAM, BNXT)

Commands = tuple[str, ...]


class NicCli(Protocol):
    """The NIC-side settings the checks fix, for one NIC port."""

    @property
    def dialect(self) -> str: ...
    @property
    def netdev(self) -> str: ...

    def trust(self, mode: str, roce_dscp: int | None, roce_prio: int | None) -> Commands: ...
    def pfc(self, priorities: Iterable[int]) -> Commands: ...
    def dscp2prio(self, dscp: int, prio: int) -> Commands: ...
    def dcqcn_enable(self, points: Sequence[str], prio: int) -> Commands: ...
    def cnp(self, dscp: int, prio: int) -> Commands: ...
    def traffic_class(self, tclass: int) -> Commands: ...
    def cable_len(self, metres: int) -> Commands: ...
    def buffer_size(self, sizes: Sequence[int]) -> Commands: ...
    def mtu(self, value: int) -> Commands: ...
    def global_pause_off(self) -> Commands: ...


def _comment(text: str) -> str:
    return "# " + " ".join(text.split())  # one line, whatever the text holds


@dataclass(frozen=True, slots=True)
class _Port:
    netdev: str
    rdma_dev: str | None
    pci_address: str | None

    def mtu(self, value: int) -> Commands:
        return (nic_mlx5.mtu(self.netdev, int(value)),)

    def global_pause_off(self) -> Commands:
        return (nic_mlx5.global_pause_off(self.netdev),)

    def _roce_tos(self, tclass: int, why: str) -> Commands:
        """No global traffic_class override on this stack: the rdma_cm default TOS is the nearest setting."""
        if self.rdma_dev is None:
            return (_comment(f"{self.netdev}: {why}; no RDMA device known to set the rdma_cm default TOS on"),)
        note = _comment(f"{self.netdev}: {why}; the rdma_cm default TOS (applications' own TOS still wins):")
        return (note, *nic_mlx5.roce_tos(self.rdma_dev, tclass))


@dataclass(frozen=True, slots=True)
class Mlx5Ofed(_Port):
    """ConnectX on MLNX_OFED / DOCA-OFED: ``mlnx_qos`` and the ``ecn/`` and ``tc/`` sysfs trees."""

    dialect: str = OFED

    def trust(self, mode: str, roce_dscp: int | None, roce_prio: int | None) -> Commands:
        return (nic_mlx5.trust(self.netdev, mode),)

    def pfc(self, priorities: Iterable[int]) -> Commands:
        return (nic_mlx5.pfc(self.netdev, priorities),)

    def dscp2prio(self, dscp: int, prio: int) -> Commands:
        return (nic_mlx5.dscp2prio(self.netdev, int(dscp), int(prio)),)

    def dcqcn_enable(self, points: Sequence[str], prio: int) -> Commands:
        return tuple(nic_mlx5.ecn_enable(self.netdev, _point(p), int(prio)) for p in points)

    def cnp(self, dscp: int, prio: int) -> Commands:
        return (
            nic_mlx5.ecn_param(self.netdev, "roce_np", "cnp_dscp", dscp),
            nic_mlx5.ecn_param(self.netdev, "roce_np", "cnp_802p_prio", prio),
        )

    def traffic_class(self, tclass: int) -> Commands:
        return (nic_mlx5.traffic_class(self.rdma_dev or self.netdev, int(tclass)),)

    def cable_len(self, metres: int) -> Commands:
        return (nic_mlx5.cable_len(self.netdev, int(metres)),)

    def buffer_size(self, sizes: Sequence[int]) -> Commands:
        return (nic_mlx5.buffer_size(self.netdev, sizes),)


@dataclass(frozen=True, slots=True)
class Mlx5Upstream(_Port):
    """ConnectX on the in-tree mlx5 driver: iproute2 ``dcb`` and debugfs ``cc_params`` (host-nic-roce §2.2, §2.9)."""

    dialect: str = UPSTREAM

    def trust(self, mode: str, roce_dscp: int | None, roce_prio: int | None) -> Commands:
        if mode == "pcp":
            return (nic_mlx5.dcb_app_flush_dscp(self.netdev),)
        if mode == "dscp" and roce_dscp is not None and roce_prio is not None:
            return (nic_mlx5.dcb_app_dscp(self.netdev, roce_dscp, roce_prio),)
        return (
            _comment(
                f"{self.netdev}: upstream mlx5 trusts DSCP while a DSCP APP entry exists "
                f"(dcb app replace dev {self.netdev} dscp-prio DSCP:PRIO); the fabric's RoCE DSCP/priority is unknown"
            ),
        )

    def pfc(self, priorities: Iterable[int]) -> Commands:
        return (nic_mlx5.dcb_pfc(self.netdev, priorities),)

    def dscp2prio(self, dscp: int, prio: int) -> Commands:
        return (nic_mlx5.dcb_app_dscp(self.netdev, dscp, prio),)

    def dcqcn_enable(self, points: Sequence[str], prio: int) -> Commands:
        for p in points:
            _point(p)
        return (
            _comment(
                f"{self.netdev}: upstream mlx5 has no per-priority DCQCN switch (no ecn/ sysfs); the firmware "
                f"NV-config ROCE_CC_PRIO_MASK_P1 (mlxconfig, then a firmware reset) must include priority {int(prio)}"
            ),
        )

    def cnp(self, dscp: int, prio: int) -> Commands:
        if self.pci_address is None:
            return (_comment(f"{self.netdev}: PCI address unknown, cannot name its debugfs cc_params directory"),)
        return (
            nic_mlx5.cc_param(self.pci_address, "np_cnp_dscp", dscp),
            nic_mlx5.cc_param(self.pci_address, "np_cnp_prio", prio),
        )

    def traffic_class(self, tclass: int) -> Commands:
        return self._roce_tos(tclass, "upstream mlx5 has no global traffic_class override")

    def cable_len(self, metres: int) -> Commands:
        return (nic_mlx5.dcb_pfc_delay(self.netdev, metres),)

    def buffer_size(self, sizes: Sequence[int]) -> Commands:
        return (nic_mlx5.dcb_buffer_size(self.netdev, sizes),)


@dataclass(frozen=True, slots=True)
class Bnxt(_Port):
    """Broadcom Thor (bnxt_en / bnxt_re): ``niccli`` and the bnxt_re congestion-control configfs (§2.10)."""

    dialect: str = BNXT

    def trust(self, mode: str, roce_dscp: int | None, roce_prio: int | None) -> Commands:
        if mode == "dscp" and roce_dscp is not None and roce_prio is not None:
            return (nic_bnxt.app_dscp(self.netdev, roce_prio, roce_dscp),)
        return (
            _comment(
                f"{self.netdev}: bnxt_en classifies by DSCP while DSCP APP TLVs exist (niccli -dev {self.netdev} "
                f"apptlv -add -app PRIO,5,DSCP) and by PCP without them; no separate trust setting"
            ),
        )

    def pfc(self, priorities: Iterable[int]) -> Commands:
        wanted = sorted(set(priorities))
        if not wanted:
            return (_comment(f"{self.netdev}: niccli pfc -enable takes at least one priority; none is wanted"),)
        return (nic_bnxt.pfc_enable(self.netdev, wanted),)

    def dscp2prio(self, dscp: int, prio: int) -> Commands:
        return (nic_bnxt.app_dscp(self.netdev, prio, dscp),)

    def dcqcn_enable(self, points: Sequence[str], prio: int) -> Commands:
        for p in points:
            _point(p)
        if self.rdma_dev is None:
            return (_comment(f"{self.netdev}: no bnxt_re device known to enable congestion control on"),)
        # one device-wide state for both points, as bnxt_setupcc.sh writes it: ECN-capable transport on
        # (ecn_marking, else packets leave non-ECT and switches cannot mark them), reaction/notification on
        # (ecn_enable), DCQCN as the algorithm (cc_mode 1), on the device's RoCE priority
        return nic_bnxt.cc_writes(
            self.rdma_dev, {"ecn_marking": 1, "ecn_enable": 1, "cc_mode": 1, "roce_prio": int(prio)}
        )

    def cnp(self, dscp: int, prio: int) -> Commands:
        if self.rdma_dev is None:
            return (_comment(f"{self.netdev}: no bnxt_re device known to set the CNP DSCP/priority on"),)
        return nic_bnxt.cc_writes(self.rdma_dev, {"cnp_dscp": int(dscp), "cnp_prio": int(prio)})

    def traffic_class(self, tclass: int) -> Commands:
        return self._roce_tos(tclass, "bnxt_re has no global traffic_class override")

    def cable_len(self, metres: int) -> Commands:
        return (
            _comment(
                f"{self.netdev}: bnxt_en has no cable-length setting (the firmware sizes PFC headroom); "
                f"the cable is {int(metres)} m"
            ),
        )

    def buffer_size(self, sizes: Sequence[int]) -> Commands:
        return (_comment(f"{self.netdev}: bnxt_en receive buffers are firmware-managed; no host setting sizes them"),)


def _point(point: str) -> str:
    if point not in ("roce_np", "roce_rp"):
        raise UsageError(f"DCQCN point {point!r}: expected roce_np or roce_rp")
    return point


def dialect_of(nic: Nic) -> str:
    """The stack whose commands change this NIC: what the reader found, else the driver's name."""
    source = nic.qos.source if nic.qos is not None else None
    if source in DIALECTS:
        return str(source)
    if nic.driver == "bnxt_en" or (nic.rdma_dev or "").startswith("bnxt_re"):
        return BNXT
    return OFED


def for_nic(nic: Nic) -> NicCli:
    """The dialect of ``nic``; raises :class:`UsageError` when a name is unsafe to put in a command."""
    netdev = hs.netdev(nic.netdev)
    rdma = hs.rdma_dev(nic.rdma_dev) if nic.rdma_dev is not None else None
    dialect = dialect_of(nic)
    if dialect == BNXT:
        return Bnxt(netdev, rdma, nic.pci_address)
    if dialect == UPSTREAM:
        return Mlx5Upstream(netdev, rdma, nic.pci_address)
    return Mlx5Ofed(netdev, rdma, nic.pci_address)


def dcbx_of(nic: Nic) -> str | None:
    """The NIC's DCBX mode, ``"os"`` or ``"fw"`` (``mlnx_qos`` "DCBX mode:"), when the model carries it."""
    mode = getattr(nic.qos, "dcbx", None)
    return mode if isinstance(mode, str) else None


def drained(host: str, why: str, commands: Commands) -> Commands:
    """``commands`` between draining ``host`` in Slurm (and waiting until no job runs there) and resuming it.

    The drain and resume lines come from :mod:`unifab.render.scheduler`, the one builder the change waves and
    the health actions use too; only the wait is this script's own.
    """
    node = hs.q(hs.host_name(host))
    return (
        _comment(f"{why}: drain {host} first (running jobs finish), change it, then resume it"),
        *(shlex.join(argv) for argv in drain_argvs("slurm", [host], f"unifab: {why}")),
        f"until sinfo -h -n {node} -o %T | grep -q '^drained'; do sleep 10; done",
        *commands,
        *(shlex.join(argv) for argv in resume_argvs("slurm", [host])),
    )


def _dcbx_owned(nic: Nic, cli: NicCli, commands: Commands) -> Commands:
    """Where firmware DCBX owns the port's QoS, the OS-side setting is overridden by the switch's TLVs."""
    if dcbx_of(nic) != "fw" or cli.dialect == BNXT:
        return commands
    if cli.dialect == OFED:
        note = (
            f"{cli.netdev}: DCBX is firmware controlled, so the switch's DCBX TLVs override this setting: set it "
            "on the switch port, or hand DCBX to the OS first (or for good: mlxconfig LLDP_NB_DCBX_P1=0)"
        )
        return (_comment(note), nic_mlx5.dcbx_os(cli.netdev), *commands)
    note = (
        f"{cli.netdev}: DCBX is firmware controlled, so the switch's DCBX TLVs override this setting: set it on "
        "the switch port, or turn the firmware's DCBX off (mlxconfig -d <dev> set LLDP_NB_DCBX_P1=0, then a "
        "firmware reset)"
    )
    return (_comment(note), *commands)


def nic_fix(nic: Nic, build: Callable[[NicCli], Commands], flaps: str | None = None, qos: bool = False) -> Fix:
    """``build``'s commands for ``nic`` as a Fix on its host; an unsafe name becomes a comment, not a crash.

    ``flaps`` names the change when it toggles the link: the commands are then wrapped in a drain and a
    resume of the host (:func:`drained`). ``qos``: a DCB setting that firmware DCBX would override.
    """
    try:
        cli = for_nic(nic)
        commands = build(cli)
        if qos:
            commands = _dcbx_owned(nic, cli, commands)
        if flaps is not None and any(not c.startswith("#") for c in commands):
            commands = drained(nic.host, f"{flaps} on {cli.netdev} toggles its link", commands)
    except UsageError as e:
        commands = (_comment(f"not rendered for {nic.netdev!r}: {e}"),)
    return Fix(nic.host, commands)


@dataclass(frozen=True, slots=True)
class NicFixes:
    """Each :class:`NicCli` setting of one NIC as a finding's :class:`Fix` on its host (see :func:`nic_fix`)."""

    nic: Nic

    def trust(self, mode: str, roce_dscp: int | None, roce_prio: int | None) -> Fix:
        return nic_fix(self.nic, lambda c: c.trust(mode, roce_dscp, roce_prio), qos=True)

    def pfc(self, priorities: Iterable[int]) -> Fix:
        wanted = tuple(priorities)
        return nic_fix(self.nic, lambda c: c.pfc(wanted), flaps="a PFC change", qos=True)

    def dscp2prio(self, dscp: int, prio: int) -> Fix:
        return nic_fix(self.nic, lambda c: c.dscp2prio(dscp, prio), qos=True)

    def dcqcn_enable(self, points: Sequence[str], prio: int) -> Fix:
        return nic_fix(self.nic, lambda c: c.dcqcn_enable(points, prio))

    def cnp(self, dscp: int, prio: int) -> Fix:
        return nic_fix(self.nic, lambda c: c.cnp(dscp, prio))

    def traffic_class(self, tclass: int) -> Fix:
        return nic_fix(self.nic, lambda c: c.traffic_class(tclass))

    def cable_len(self, metres: int) -> Fix:
        return nic_fix(self.nic, lambda c: c.cable_len(metres), qos=True)

    def buffer_size(self, sizes: Sequence[int]) -> Fix:
        return nic_fix(self.nic, lambda c: c.buffer_size(sizes), flaps="a receive-buffer change", qos=True)

    def mtu(self, value: int) -> Fix:
        return nic_fix(self.nic, lambda c: c.mtu(value))

    def global_pause_off(self) -> Fix:
        return nic_fix(self.nic, lambda c: c.global_pause_off())

    def link_status(self) -> Fix:
        """Commands that show the port's link (speed, width, state) and optic after reseating or replacing it."""
        nic = self.nic
        try:
            if nic.link_layer == "InfiniBand" or nic.netdev == nic.rdma_dev:
                dev = hs.q(hs.rdma_dev(nic.rdma_dev or nic.netdev))
                commands: Commands = (f"ibstat {dev} 1", f"mlxlink -d {dev} -m")
            else:
                name = hs.q(hs.netdev(nic.netdev))
                commands = (f"ethtool {name}", f"ethtool -m {name}")
        except UsageError as e:
            commands = (_comment(f"not rendered for {nic.netdev!r}: {e}"),)
        return Fix(nic.host, commands)
