"""Findings' NIC-side fixes in each NIC's own language (MLNX_OFED, upstream mlx5, Broadcom Thor).

The unit tests pin each dialect's command for each fix. The twin tests run the checks over twins of every
NIC variant and require every NIC-side fix to use the NIC's own tools; the apply tests then run those
fixes with bash against a copy of the twin's host files, through the fake ``niccli``/``ethtool`` of the
host-script test and a fake kernel for ``dcb``/``ip``, re-read the bundle and re-run the checks.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_nic_scripts import FAKE_ETHTOOL, FAKE_MLNX_QOS, FAKE_NICCLI, _bin, _run

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.errors import UsageError
from unifab.model import Fabric, Finding, Nic, NicQos
from unifab.parse.host import bnxt_qos
from unifab.render import nic_cli
from unifab.twin.generate import generate


def _nic(
    source: str | None,
    netdev: str = "eth0",
    rdma: str | None = "mlx5_0",
    driver: str | None = None,
    pci: str | None = "0000:17:00.0",
) -> Nic:
    qos = NicQos(
        trust="dscp",
        dscp2prio={26: 3},
        pfc_enabled=frozenset({3}),
        prio_tc={3: 3},
        cable_len_m=3,
        ecn_np_enabled=None,
        ecn_rp_enabled=None,
        cnp_dscp=48,
        cnp_prio=6,
        traffic_class=None,
        source=source,
    )
    return Nic("gpu001", netdev, rdma, 9000, qos, pci_address=pci, driver=driver)


OFED = nic_cli.for_nic(_nic("mlnx_ofed"))
UPSTREAM = nic_cli.for_nic(_nic("mlx5_upstream"))
BNXT = nic_cli.for_nic(_nic("bnxt", "ens1f0np0", "bnxt_re0", "bnxt_en"))
CC = "/sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc"


def test_dialect_follows_what_the_reader_found_then_the_driver() -> None:
    assert (OFED.dialect, UPSTREAM.dialect, BNXT.dialect) == ("mlnx_ofed", "mlx5_upstream", "bnxt")
    assert nic_cli.dialect_of(_nic(None, driver="bnxt_en")) == "bnxt"
    assert nic_cli.dialect_of(_nic(None, rdma="bnxt_re3")) == "bnxt"
    assert nic_cli.dialect_of(_nic(None, driver="mlx5_core")) == "mlnx_ofed"
    bare = Nic("gpu001", "eth0", None, None, None)
    assert nic_cli.dialect_of(bare) == "mlnx_ofed"


def test_ofed_commands() -> None:
    assert OFED.trust("dscp", 26, 3) == ("mlnx_qos -i eth0 --trust dscp",)
    assert OFED.pfc([3]) == ("mlnx_qos -i eth0 --pfc 0,0,0,1,0,0,0,0",)
    assert OFED.dscp2prio(26, 3) == ("mlnx_qos -i eth0 --dscp2prio set,26,3",)
    assert OFED.dcqcn_enable(["roce_np", "roce_rp"], 3) == (
        "echo 1 > /sys/class/net/eth0/ecn/roce_np/enable/3",
        "echo 1 > /sys/class/net/eth0/ecn/roce_rp/enable/3",
    )
    assert OFED.cnp(48, 6) == (
        "echo 48 > /sys/class/net/eth0/ecn/roce_np/cnp_dscp",
        "echo 6 > /sys/class/net/eth0/ecn/roce_np/cnp_802p_prio",
    )
    assert OFED.traffic_class(106) == ("echo 106 > /sys/class/infiniband/mlx5_0/tc/1/traffic_class",)
    assert OFED.cable_len(3) == ("mlnx_qos -i eth0 --cable_len 3",)
    assert OFED.buffer_size([130944, 160256, 0, 0, 0, 0, 0, 0]) == (
        "mlnx_qos -i eth0 --buffer_size 130944,160256,0,0,0,0,0,0",
    )
    assert OFED.mtu(9000) == ("ip link set dev eth0 mtu 9000",)
    assert OFED.global_pause_off() == ("ethtool -A eth0 autoneg off rx off tx off",)


def test_upstream_mlx5_commands() -> None:
    assert UPSTREAM.trust("dscp", 26, 3) == ("dcb app replace dev eth0 dscp-prio 26:3",)
    assert UPSTREAM.trust("pcp", 26, 3) == ("dcb app flush dev eth0 dscp-prio",)
    assert UPSTREAM.trust("dscp", None, 3)[0].startswith("# eth0: upstream mlx5 trusts DSCP")
    assert UPSTREAM.pfc([3]) == ("dcb pfc set dev eth0 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off",)
    assert UPSTREAM.dscp2prio(26, 3) == ("dcb app replace dev eth0 dscp-prio 26:3",)
    (note,) = UPSTREAM.dcqcn_enable(["roce_np"], 3)
    assert note.startswith("# ") and "ROCE_CC_PRIO_MASK" in note
    assert UPSTREAM.cnp(48, 6) == (
        "echo 48 > /sys/kernel/debug/mlx5/0000:17:00.0/cc_params/np_cnp_dscp",
        "echo 6 > /sys/kernel/debug/mlx5/0000:17:00.0/cc_params/np_cnp_prio",
    )
    note, *tos = UPSTREAM.traffic_class(106)
    assert note.startswith("# eth0: upstream mlx5 has no global traffic_class override")
    assert tos == [
        "mkdir -p /sys/kernel/config/rdma_cm/mlx5_0",
        "echo 106 > /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos",
    ]
    assert UPSTREAM.cable_len(3) == ("dcb pfc set dev eth0 delay 3",)
    assert UPSTREAM.buffer_size([130944, 160256, 0, 0, 0, 0, 0, 0]) == (
        "dcb buffer set dev eth0 buffer-size 0:130944 1:160256 2:0 3:0 4:0 5:0 6:0 7:0",
    )
    assert UPSTREAM.mtu(9000) == ("ip link set dev eth0 mtu 9000",)
    assert UPSTREAM.global_pause_off() == ("ethtool -A eth0 autoneg off rx off tx off",)
    no_pci = nic_cli.for_nic(_nic("mlx5_upstream", pci=None))
    assert no_pci.cnp(48, 6)[0].startswith("# eth0: PCI address unknown")


def test_bnxt_commands() -> None:
    assert BNXT.trust("dscp", 26, 3) == ("niccli -dev ens1f0np0 apptlv -add -app 3,5,26",)
    assert BNXT.trust("pcp", 26, 3)[0].startswith("# ens1f0np0: bnxt_en classifies by DSCP")
    assert BNXT.pfc([4, 3]) == ("niccli -dev ens1f0np0 pfc -enable 3,4",)
    assert BNXT.pfc([])[0].startswith("# ")
    assert BNXT.dscp2prio(26, 3) == ("niccli -dev ens1f0np0 apptlv -add -app 3,5,26",)
    assert BNXT.dcqcn_enable(["roce_np", "roce_rp"], 3) == (
        "mkdir -p /sys/kernel/config/bnxt_re/bnxt_re0",
        f"echo 0x1 > {CC}/ecn_marking",  # ECN-capable transport: else switches cannot mark RoCE
        f"echo 0x1 > {CC}/ecn_enable",
        f"echo 0x1 > {CC}/cc_mode",  # DCQCN, as bnxt_setupcc.sh writes it
        f"echo 0x3 > {CC}/roce_prio",
        f"echo 0x1 > {CC}/apply",
    )
    assert BNXT.cnp(48, 6) == (
        "mkdir -p /sys/kernel/config/bnxt_re/bnxt_re0",
        f"echo 0x30 > {CC}/cnp_dscp",  # hex: `echo 48` would set 0x48 = 72
        f"echo 0x6 > {CC}/cnp_prio",
        f"echo 0x1 > {CC}/apply",
    )
    note, *tos = BNXT.traffic_class(106)
    assert note.startswith("# ens1f0np0: bnxt_re has no global traffic_class override")
    assert tos[-1] == "echo 106 > /sys/kernel/config/rdma_cm/bnxt_re0/ports/1/default_roce_tos"
    (cable,) = BNXT.cable_len(3)
    assert cable.startswith("# ens1f0np0: bnxt_en has no cable-length setting")
    (buffers,) = BNXT.buffer_size([1, 2])
    assert buffers.startswith("# ")
    assert BNXT.mtu(9000) == ("ip link set dev ens1f0np0 mtu 9000",)
    assert BNXT.global_pause_off() == ("ethtool -A ens1f0np0 autoneg off rx off tx off",)


@pytest.mark.parametrize(
    ("nic", "problem"),
    [
        (_nic("mlnx_ofed", netdev="eth0; reboot"), "netdev name"),
        (_nic("bnxt", netdev="eth0\nreboot", rdma="bnxt_re0"), "netdev name"),
        (_nic("mlx5_upstream", rdma="mlx5_0$(id)"), "RDMA device name"),
        (_nic("mlx5_upstream", netdev="a-very-long-netdev-name"), "netdev name"),
    ],
)
def test_unsafe_names_are_rejected(nic: Nic, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        nic_cli.for_nic(nic)
    (line,) = nic_cli.NicFixes(nic).pfc([3]).commands
    assert line.startswith("# not rendered for ") and "\n" not in line and problem in line


def test_unsafe_values_are_rejected() -> None:
    bad_pci = nic_cli.for_nic(_nic("mlx5_upstream", pci="0000:17:00.0;id"))
    with pytest.raises(UsageError, match="PCI address"):
        bad_pci.cnp(48, 6)
    with pytest.raises(UsageError, match="DCQCN point"):
        OFED.dcqcn_enable(["roce_np/../../x"], 3)
    with pytest.raises(UsageError, match="DCQCN point"):
        BNXT.dcqcn_enable(["x"], 3)
    line = nic_cli.NicFixes(_nic("mlx5_upstream", pci="../x")).cnp(48, 6).commands[0]
    assert line.startswith("# not rendered for 'eth0': PCI address")


# --- twins of every NIC variant ------------------------------------------------------------------------

NIC_SCENARIOS = (
    "pfc-mismatch",
    "pfc-lossy",
    "trust-pcp",
    "tc-override",
    "dcqcn-off",
    "bnxt-dcqcn-off",
    "cable-len",
    "global-pause",
    "mtu-mismatch",
)
VARIANTS = {"bnxt": ("bnxt", "upstream"), "upstream": ("mlx5", "upstream"), "ofed": ("mlx5", "ofed")}
VARIANTS["mixed"] = ("mixed", "mixed")
DRAIN = {"#", "scontrol", "until"}  # a link-flapping fix drains the node in Slurm first and resumes it after
TOOLS = {  # the first word of every NIC-side command of each dialect
    "mlnx_ofed": {"mlnx_qos", "echo", "ip", "ethtool"} | DRAIN,
    "mlx5_upstream": {"dcb", "ip", "ethtool", "#", "mkdir", "echo"} | DRAIN,
    "bnxt": {"niccli", "mkdir", "echo", "ip", "ethtool", "#"} | DRAIN,
}


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for name, (vendor, driver) in VARIANTS.items():
        path = tmp_path_factory.mktemp(f"twin-{name}") / "b"
        generate(path, gpus=128, seed=4, scenarios=NIC_SCENARIOS, nic_vendor=vendor, nic_driver=driver)
        out[name] = path
    return out


def _nic_fixes(fabric: Fabric, findings: list[Finding]) -> list[tuple[Finding, Nic, tuple[str, ...]]]:
    """Every fix on a host, with the NIC its finding is about (evidence side ``a``)."""
    out = []
    for f in findings:
        for fix in f.fix:
            if fix.device in fabric.hosts:
                netdev = f.evidence["a"]["netdev"]
                out.append((f, fabric.hosts[fix.device].nics[netdev], fix.commands))
    return out


def _uses_own_tools(nic: Nic, commands: tuple[str, ...]) -> None:
    dialect = nic_cli.dialect_of(nic)
    assert {c.split()[0] for c in commands} <= TOOLS[dialect], (nic.id, commands)
    text = "\n".join(commands)
    if dialect != "mlnx_ofed":
        assert "mlnx_qos" not in text and "/ecn/" not in text and "traffic_class >" not in text, text
    if dialect != "bnxt":
        assert "niccli" not in text and "bnxt_re" not in text, text
    if dialect == "mlnx_ofed":
        assert "dcb " not in text and "cc_params" not in text, text


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_nic_side_fix_speaks_the_nics_language(twins: dict[str, Path], variant: str) -> None:
    fabric = load_bundle(twins[variant])
    fixes = _nic_fixes(fabric, run_checks(fabric))
    dialects = {nic_cli.dialect_of(nic) for _, nic, _ in fixes}
    expected = {"bnxt": {"bnxt"}, "upstream": {"mlx5_upstream"}, "ofed": {"mlnx_ofed"}}
    expected["mixed"] = {"bnxt", "mlx5_upstream", "mlnx_ofed"}
    assert dialects == expected[variant]
    checks = {f.check for f, _, _ in fixes}
    # every check a scenario broke the NIC side of has its NIC-side fix (the seed picks the side of some)
    truth = json.loads((twins[variant] / "truth.json").read_text())["misconfigurations"]
    nic_side = {m["check"] for m in truth if m["side"] in ("nic", "both")}
    assert {"QOS-GLOBAL-PAUSE", "QOS-PFC-LOSSY-ROCE"} <= nic_side <= checks
    for _, nic, commands in fixes:
        _uses_own_tools(nic, commands)
    if variant == "bnxt":
        assert any(c.startswith("niccli ") for _, _, cs in fixes for c in cs)
        assert any(c.endswith("/cc/ecn_enable") for _, _, cs in fixes for c in cs)
    if variant == "upstream":
        assert any(c.startswith("dcb pfc set ") for _, _, cs in fixes for c in cs)
        assert any(c.startswith("dcb app replace ") for _, _, cs in fixes for c in cs)


# --- apply the fixes and read the hosts back -------------------------------------------------------------

# The kernel behind iproute2 dcb on upstream mlx5, seen through the `mlnx_qos -i IF` output the bundle
# keeps (host-nic-roce §2.9): the first DSCP APP entry switches trust to DSCP, a flush reverts it to PCP,
# PFC `delay` is the cable length the driver sizes headroom for.
FAKE_DCB_KERNEL = r"""
import os, sys
from dataclasses import replace
from pathlib import Path
from unifab.parse.host import mlnx_qos as m

obj, verb, _, ifc, *rest = sys.argv[1:]
with open(os.environ["UNIFAB_LOG"], "a") as log:
    log.write("dcb " + " ".join(sys.argv[1:]) + "\n")
state = Path(os.environ["UNIFAB_ROOT"]) / "cmd" / "mlnx_qos" / f"{ifc}.txt"
q = m.parse(state.read_text())
pairs = [tuple(t.split(":")) for t in rest[1:]]
if (obj, verb, rest[0]) in (("app", "replace", "dscp-prio"), ("app", "add", "dscp-prio")):
    base = q.dscp2prio if q.trust == "dscp" else {d: d >> 3 for d in range(64)}
    q = replace(q, trust="dscp", dscp2prio={**base, **{int(d): int(p) for d, p in pairs}})
elif (obj, verb, rest) == ("app", "flush", ["dscp-prio"]):
    q = replace(q, trust="pcp", dscp2prio={})
elif (obj, verb, rest[0]) == ("pfc", "set", "prio-pfc"):
    q = replace(q, pfc_enabled=tuple(sorted(int(p) for p, v in pairs if v == "on")))
elif (obj, verb, rest[0]) == ("pfc", "set", "delay"):
    q = replace(q, cable_len=int(rest[1]))
elif (obj, verb, rest[0]) == ("buffer", "set", "buffer-size"):
    q = replace(q, buffers=replace(q.buffers, sizes=tuple(int(s) for _, s in sorted(pairs))))
else:
    sys.exit(f"dcb: unsupported {sys.argv[1:]}")
state.write_text(m.dump(q))
"""

# `mlnx_qos --buffer_size` (a fix, not a host-script setting) on top of the host-script test's fake mlnx_qos
FAKE_MLNX_QOS_BUFFERS = (
    r"""
import os, sys
from dataclasses import replace
from pathlib import Path
from unifab.parse.host import mlnx_qos as m

if "--buffer_size" in sys.argv:
    ifc = sys.argv[sys.argv.index("-i") + 1]
    with open(os.environ["UNIFAB_LOG"], "a") as log:
        log.write("mlnx_qos " + " ".join(sys.argv[1:]) + "\n")
    state = Path(os.environ["UNIFAB_ROOT"]) / "cmd" / "mlnx_qos" / f"{ifc}.txt"
    q = m.parse(state.read_text())
    sizes = tuple(int(s) for s in sys.argv[sys.argv.index("--buffer_size") + 1].split(","))
    assert len(sizes) == 8, "buffer_size takes 8 sizes"
    state.write_text(m.dump(replace(q, buffers=replace(q.buffers, sizes=sizes))))
    sys.exit(0)
"""
    + FAKE_MLNX_QOS
)

# Slurm: scontrol logs the drain/resume it is asked for; sinfo reports the drained node at once (no jobs)
FAKE_SCONTROL = r"""
import os, sys

assert sys.argv[1:3] == ["update", sys.argv[2]] and sys.argv[2].startswith("NodeName="), sys.argv
assert sys.argv[3] in ("State=DRAIN", "State=RESUME"), sys.argv
with open(os.environ["UNIFAB_LOG"], "a") as log:
    log.write("scontrol " + " ".join(sys.argv[1:4]) + "\n")
"""
FAKE_SINFO = r"""
print("drained")
"""

FAKE_IP = r"""
import os, sys
from pathlib import Path

assert sys.argv[1:4] == ["link", "set", "dev"] and sys.argv[5] == "mtu", sys.argv
with open(os.environ["UNIFAB_LOG"], "a") as log:
    log.write("ip " + " ".join(sys.argv[1:]) + "\n")
root = Path(os.environ["UNIFAB_ROOT"])
(root / "sys" / "class" / "net" / sys.argv[4] / "mtu").write_text(sys.argv[6] + "\n")
# the driver re-derives the RoCE active MTU from the new netdev MTU (the largest IB MTU its payload carries);
# the recorded ibv_devinfo is what a re-collect would read
pairs = (root / "cmd" / "ibdev2netdev.txt").read_text().splitlines()
devs = [ln.split()[0] for ln in pairs if f"==> {sys.argv[4]} " in ln]
ibv = root / "cmd" / "ibv_devinfo.txt"
if devs and ibv.exists():
    fits = next((m for m in (4096, 2048, 1024, 512, 256) if m <= int(sys.argv[6]) - 96), 256)
    code = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}[fits]
    out, current = [], None
    for line in ibv.read_text().splitlines():
        if line.startswith("hca_id:"):
            current = line.split()[1]
        if current in devs and line.strip().startswith("active_mtu:"):
            line = line.split("active_mtu:")[0] + f"active_mtu:\t\t{fits} ({code})"
        out.append(line)
    ibv.write_text("\n".join(out) + "\n")
"""
FAKE_IBV_DEVINFO = r"""
import os, sys
from pathlib import Path

assert sys.argv[1] == "-d", sys.argv
text = (Path(os.environ["UNIFAB_ROOT"]) / "cmd" / "ibv_devinfo.txt").read_text()
print(text)
"""


def _niccli_state(root: Path) -> None:
    """Seed the fake niccli's state from each NIC's recorded getqos."""
    (root / "niccli").mkdir()
    for path in (root / "cmd" / "bnxt-qos").glob("*.txt"):
        q = bnxt_qos.parse(path.read_text())
        state = {
            "tsa": [t.tsa for t in q.tcs],
            "up2tc": [q.prio_tc[p] for p in range(8)],
            "tcbw": [t.bw or 0 for t in q.tcs],
            "pfc": list(q.pfc_enabled),
            "apps": [[a.priority, a.selector, a.value] for a in q.apps],
        }
        (root / "niccli" / f"{path.stem}.json").write_text(json.dumps(state))


def _bnxt_apply_readback(root: Path) -> int:
    """What bnxt_re prints for ``apply`` once ``0x1`` was written: a summary of the values it took."""
    applied = 0
    for path in root.glob("sys/kernel/config/bnxt_re/*/ports/1/cc/apply"):
        assert path.read_text() == "0x1\n"
        values = {f.name: f.read_text().strip() for f in sorted(path.parent.iterdir()) if f.name != "apply"}
        path.write_text("".join(f"{k} ({k})\t\t: {v}\n" for k, v in values.items()))
        applied += 1
    return applied


def _in_root(command: str) -> str:
    return re.sub(r"(?<=[\s>])/sys/", '"$UNIFAB_ROOT"/sys/', command)


def _apply(tmp: Path, bundle: Path, fixes: list[tuple[Finding, Nic, tuple[str, ...]]]) -> list[str]:
    """Run every host's fix commands against its files; the fake tools log the calls that change something."""
    tmp.mkdir()
    fakes = {"niccli": FAKE_NICCLI, "ethtool": FAKE_ETHTOOL, "dcb": FAKE_DCB_KERNEL, "ip": FAKE_IP}
    fakes |= {"scontrol": FAKE_SCONTROL, "sinfo": FAKE_SINFO, "ibv_devinfo": FAKE_IBV_DEVINFO}
    bin_dir = _bin(tmp, {**fakes, "mlnx_qos": FAKE_MLNX_QOS_BUFFERS})
    log = tmp / "calls.log"
    by_host: dict[str, list[str]] = {}
    applied = 0
    for _, nic, commands in fixes:
        by_host.setdefault(nic.host, []).extend(_in_root(c) for c in commands)
    for host, lines in sorted(by_host.items()):
        root = bundle / "hosts" / host
        if (root / "cmd" / "bnxt-qos").is_dir():
            _niccli_state(root)
            # re-collect: `niccli getqos` is what the collector records
            lines += [f"niccli -dev {p.stem} getqos >/dev/null" for p in (root / "cmd" / "bnxt-qos").glob("*.txt")]
        script = tmp / f"fix-{host}.sh"
        script.write_text("set -euo pipefail\n" + "\n".join(lines) + "\n")
        _run(script, root, bin_dir, log)
        shutil.rmtree(root / "niccli", ignore_errors=True)
        applied += _bnxt_apply_readback(root)
    calls = log.read_text().splitlines() if log.exists() else []
    return [*calls, f"bnxt_re apply x{applied}"] if applied else calls


@pytest.mark.parametrize("variant", ["ofed", "bnxt", "upstream", "mixed"])
def test_applied_fixes_clear_the_nic_side_findings(twins: dict[str, Path], variant: str, tmp_path: Path) -> None:
    """Apply, re-read, re-check, as an operator would: a fix may uncover the next one (PFC turned on
    makes the NIC's receive buffer matter), so up to three rounds; after them no NIC needs a fix."""
    bundle = tmp_path / "b"
    shutil.copytree(twins[variant], bundle)
    fabric = load_bundle(bundle)
    before = run_checks(fabric)
    after, calls, rounds = before, [], 0
    while (fixes := _nic_fixes(fabric, after)) and rounds < 3:
        rounds += 1
        calls += _apply(tmp_path / f"round{rounds}", bundle, fixes)
        fabric = load_bundle(bundle)
        after = run_checks(fabric)
    assert rounds >= 1
    fixed = {(nic.host, nic.netdev) for _, nic, _ in _nic_fixes(load_bundle(twins[variant]), before)}
    assert all(fabric.hosts[h].nics[n].qos is not None for h, n in fixed), "a fixed NIC no longer reads back"
    assert _nic_fixes(fabric, after) == [], "a NIC still needs a fix after its fixes ran"
    tools = {
        "ofed": ("mlnx_qos ",),
        "bnxt": ("niccli ", "bnxt_re apply"),
        "upstream": ("dcb app ", "dcb pfc ", "ip link "),
        "mixed": ("niccli ", "dcb ", "mlnx_qos "),
    }[variant]
    used = [tool for tool in tools if any(c.startswith(tool) for c in calls)]
    # a mixed fabric's scenarios land on whichever NICs the seed picks: at least two dialects ran
    assert used == list(tools) if variant != "mixed" else len(used) >= 2, (tools, calls)
    # every link-flapping change ran between a drain and a resume of its node
    drains = [c for c in calls if c.startswith("scontrol") and c.endswith("State=DRAIN")]
    assert drains and len(drains) == len([c for c in calls if c.endswith("State=RESUME")])
    nic_only = {(f.check, f.entities) for f in before if all(x.device in fabric.hosts for x in f.fix)}
    assert nic_only, "the twin has no finding that only a NIC fix resolves"
    assert not nic_only & {(f.check, f.entities) for f in after}
    assert {f.check for f in after} <= {f.check for f in before}, "a fix left a new kind of finding behind"


@pytest.mark.parametrize(("seed", "off"), [(4, "ecn_enable"), (9, "ecn_marking")])
def test_bnxt_dcqcn_fix_clears_it_and_leaves_the_nics_as_a_clean_twins(tmp_path: Path, seed: int, off: str) -> None:
    """bnxt-dcqcn-off (bnxt_re ``ecn_enable`` or ``ecn_marking`` 0, device-wide): the fix writes ecn_marking,
    ecn_enable and cc_mode (as bnxt_setupcc.sh) then ``apply``; re-read, the findings are gone, nothing else is
    reported, and every NIC of the fabric reads back as the same twin without the scenario does."""
    bundle, clean = tmp_path / "b", tmp_path / "clean"
    result = generate(bundle, gpus=128, seed=seed, scenarios=("bnxt-dcqcn-off",), nic_vendor="bnxt")
    generate(clean, gpus=128, seed=seed, nic_vendor="bnxt")
    assert {m["detail"].split()[1] for m in result.truth["misconfigurations"]} == {f"cc/{off}"}  # this seed's
    fabric = load_bundle(bundle)
    before = run_checks(fabric)
    assert {f.check for f in before} == {"QOS-DCQCN-OFF"}
    fixes = _nic_fixes(fabric, before)
    written = {c.split(" > ")[-1].rsplit("/", 1)[-1] for _, _, cs in fixes for c in cs if " > " in c}
    assert {"ecn_marking", "ecn_enable", "cc_mode", "apply"} <= written
    calls = _apply(tmp_path / "fix", bundle, fixes)
    assert calls == [f"bnxt_re apply x{len(fixes)}"]  # configfs writes only: no niccli change, no link flap
    after = load_bundle(bundle)
    assert run_checks(after) == []
    want = load_bundle(clean)

    def nics(f: Fabric) -> dict[str, object]:
        return {nic.id: nic.qos for host in f.hosts.values() for nic in host.nics.values()}

    assert nics(after) == nics(want)


def test_bnxt_cc_mode_0_is_dcqcn_d_not_off(tmp_path: Path) -> None:
    """bnxt_re ``cc_mode`` 0 is DCQCN-D, a DCQCN variant: a Thor NIC on it, CC and ECT marking on, is not off."""
    bundle = tmp_path / "b"
    generate(bundle, gpus=64, seed=1, nic_vendor="bnxt")
    [cc_mode] = sorted(bundle.glob("hosts/*/sys/kernel/config/bnxt_re/bnxt_re0/ports/1/cc/cc_mode"))[:1]
    assert cc_mode.read_text().strip() == "0x1"
    cc_mode.write_text("0\n")
    fabric = load_bundle(bundle)
    host = cc_mode.relative_to(bundle / "hosts").parts[0]
    nic = next(n for n in fabric.hosts[host].nics.values() if n.rdma_dev == "bnxt_re0")
    assert nic.qos is not None and nic.qos.ecn_np_enabled == frozenset(range(8))
    assert run_checks(fabric) == []
