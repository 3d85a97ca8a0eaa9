"""A NIC fix's safe procedure: drain around link flaps, and firmware DCBX that would override the OS."""

from __future__ import annotations

from dataclasses import dataclass

from unifab.model import Nic, NicQos
from unifab.render.nic_cli import NicFixes, dcbx_of


@dataclass(frozen=True, slots=True)
class _QosWithDcbx(NicQos):
    dcbx: str | None = None  # what the model carries once the collector keeps mlnx_qos "DCBX mode:"


def _nic(dcbx: str | None, host: str = "gpu001") -> Nic:
    qos = _QosWithDcbx(
        "dscp", {26: 3}, frozenset({3}), {3: 3}, 3, None, None, 48, 6, None, source="mlnx_ofed", dcbx=dcbx
    )
    return Nic(host, "eth0", "mlx5_0", 9000, qos)


def test_pfc_change_is_drained_and_resumed() -> None:
    fix = NicFixes(_nic(None)).pfc([3])
    assert fix.commands[1] == (
        "scontrol update NodeName=gpu001 State=DRAIN 'Reason=unifab: a PFC change on eth0 toggles its link'"
    )
    assert fix.commands[2] == "until sinfo -h -n gpu001 -o %T | grep -q '^drained'; do sleep 10; done"
    assert fix.commands[3] == "mlnx_qos -i eth0 --pfc 0,0,0,1,0,0,0,0"
    assert fix.commands[-1] == "scontrol update NodeName=gpu001 State=RESUME"
    assert NicFixes(_nic(None)).trust("dscp", 26, 3).commands == ("mlnx_qos -i eth0 --trust dscp",)  # no flap


def test_an_odd_host_name_is_refused_not_printed() -> None:
    (comment,) = NicFixes(_nic(None, host="gpu001;reboot")).pfc([3]).commands
    assert comment.startswith("# not rendered") and "host name" in comment


def test_firmware_dcbx_says_the_os_setting_is_overridden() -> None:
    assert dcbx_of(_nic("fw")) == "fw" and dcbx_of(_nic(None)) is None
    note, handover, command = NicFixes(_nic("fw")).trust("dscp", 26, 3).commands
    assert note.startswith("# eth0: DCBX is firmware controlled") and "switch port" in note
    assert (handover, command) == ("mlnx_qos -i eth0 -d os", "mlnx_qos -i eth0 --trust dscp")
    assert NicFixes(_nic("os")).trust("dscp", 26, 3).commands == ("mlnx_qos -i eth0 --trust dscp",)
