"""Who owns a NIC's QoS: the DCBX mode from mlnx_qos, and whether DCQCN really runs on a Broadcom Thor."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.collect.bundle import load_bundle
from unifab.model import NicQos

CX4 = Path("host") / "mlnx_qos_os_dcbx_tsa_vendor_cx4.txt"  # real: `mlnx_qos -i eth4`, OS DCBX
# Thor2 getqos as bnxt_setupcc.sh leaves it (no real Broadcom sample exists in the corpus; the parser's seed)
THOR2 = Path(__file__).resolve().parents[1] / "parse" / "fuzz_seeds" / "bnxt-qos" / "thor2_default.txt"


def _write(root: Path, host: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / "hosts" / host / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _mlx_qos(tmp_path: Path, text: str) -> NicQos:
    _write(tmp_path, "cx4", {"cmd/ibdev2netdev.txt": "mlx5_0 port 1 ==> eth4 (Up)\n", "cmd/mlnx_qos/eth4.txt": text})
    qos = load_bundle(tmp_path).hosts["cx4"].nics["eth4"].qos
    assert qos is not None
    return qos


def test_dcbx_mode_from_a_real_mlnx_qos(tmp_path: Path, samples: Path) -> None:
    text = (samples / CX4).read_text()
    assert text.startswith("DCBX mode: OS controlled")
    assert _mlx_qos(tmp_path / "os", text).dcbx == "os"
    fw = text.replace("DCBX mode: OS controlled", "DCBX mode: Firmware controlled", 1)
    assert _mlx_qos(tmp_path / "fw", fw).dcbx == "fw"


def test_dcbx_not_printed_is_unknown(tmp_path: Path, samples: Path) -> None:
    text = (samples / CX4).read_text().split("\n", 1)[1]  # an mlnx_qos that prints no DCBX line
    assert _mlx_qos(tmp_path, text).dcbx is None


def test_firmware_dcbx_reaches_the_evidence_and_the_fix(tmp_path: Path) -> None:
    """A twin NIC switched to firmware DCBX: its link findings say so and the OS-side fix first hands DCBX to
    the OS (else the switch's TLVs override what mlnx_qos sets)."""
    from unifab.checks.runner import run_checks
    from unifab.twin.generate import generate

    generate(tmp_path, gpus=8, seed=10, scenarios=("pfc-mismatch",), switch_os="sonic")
    paths = sorted(tmp_path.glob("hosts/*/cmd/mlnx_qos/*.txt"))
    assert paths and all(p.read_text().startswith("DCBX mode: OS controlled") for p in paths)
    for p in paths:
        p.write_text(p.read_text().replace("DCBX mode: OS controlled", "DCBX mode: Firmware controlled", 1))
    fabric = load_bundle(tmp_path)
    nic_findings = [f for f in run_checks(fabric) if "nic" in f.evidence.get("a", {})]
    assert nic_findings
    assert all(f.evidence["a"]["dcbx"] == "fw" for f in nic_findings)


CC_ON = {"cc_mode": "0x1", "cnp_dscp": "0x30", "cnp_prio": "0x7", "ecn_enable": "0x1", "ecn_marking": "0x1"}


@pytest.mark.parametrize(
    ("cc", "enabled"),
    [
        (CC_ON, frozenset(range(8))),
        (CC_ON | {"ecn_marking": "0x0"}, frozenset()),  # CC on, RoCE sent non-ECT: no marks, no DCQCN
        (CC_ON | {"ecn_enable": "0x0"}, frozenset()),
        ({k: v for k, v in CC_ON.items() if k != "ecn_marking"}, None),  # marking not read: unknown
        ({k: v for k, v in CC_ON.items() if k != "ecn_marking"} | {"ecn_enable": "0x0"}, frozenset()),
    ],
    ids=["dcqcn-on", "ecn-marking-off", "ecn-enable-off", "marking-unknown", "off-without-marking"],
)
def test_broadcom_np_rp_only_when_dcqcn_runs(
    tmp_path: Path, cc: dict[str, str], enabled: frozenset[int] | None
) -> None:
    files = {
        "cmd/ibdev2netdev.txt": "bnxt_re0 port 1 ==> ens1f0np0 (Up)\n",
        "cmd/bnxt-qos/ens1f0np0.txt": THOR2.read_text(),
    }
    files |= {f"sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/{k}": v + "\n" for k, v in cc.items()}
    _write(tmp_path, "thor01", files)
    qos = load_bundle(tmp_path).hosts["thor01"].nics["ens1f0np0"].qos
    assert qos is not None and qos.source == "bnxt"
    assert (qos.ecn_np_enabled, qos.ecn_rp_enabled) == (enabled, enabled)


# --- max_mtu from `ip -d link show` ------------------------------------------------------------------------


def test_max_mtu_from_a_real_ip_d_capture(tmp_path: Path, samples: Path) -> None:
    """A real ``ip -d`` capture (Cumulus VX: eth0 virtio, maxmtu 65535) beside the real mlnx_qos of eth0."""
    capture = (samples / "switch/nvue/cumulus-4.3.0_leaf01_vtysh_show_int_vrf_all__ip_-d_address_show.txt").read_text()
    ip_d = capture[capture.index("1: lo:") :]
    files = {
        "cmd/ibdev2netdev.txt": "mlx5_0 port 1 ==> eth0 (Up)\nmlx5_1 port 1 ==> eth9 (Up)\n",
        "cmd/mlnx_qos/eth0.txt": (samples / CX4).read_text(),
        "cmd/mlnx_qos/eth9.txt": (samples / CX4).read_text(),
        "cmd/ip-d-link.txt": ip_d,
    }
    _write(tmp_path, "h", files)
    fabric = load_bundle(tmp_path)
    assert fabric.input_findings == []
    nics = fabric.hosts["h"].nics
    assert (nics["eth0"].max_mtu, nics["eth9"].max_mtu) == (65535, None)


def test_twin_hosts_carry_their_max_mtu(tmp_path: Path) -> None:
    from unifab.twin.generate import generate

    generate(tmp_path, 16, 1, (), nic_vendor="mixed", nic_driver="mixed", switch_os="sonic")
    fabric = load_bundle(tmp_path)
    assert fabric.input_findings == []
    by_driver = {(n.driver, n.max_mtu) for h in fabric.hosts.values() for n in h.nics.values()}
    assert by_driver == {("mlx5_core", 9978), ("bnxt_en", 9500)}
