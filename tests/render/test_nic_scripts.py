"""The host script, run for real with bash against a copy of a twin host's ``sys/`` tree.

The NIC tools cannot run here, so ``mlnx_qos``, ``ethtool``, ``dcb`` and ``niccli`` are small programs on
PATH that log every call that changes something and keep the NIC's state in the bundle's own files,
read and written by unifab's parsers and renderers of those tools' real output. The first run
configures; the second must change nothing and call only read commands; the host files then read back
(through the bundle collector) as the intent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bundle_paths import within

from unifab.collect.host import load_host
from unifab.collect.problems import Problems
from unifab.errors import UsageError
from unifab.intent import Device, parse_intent, resolve
from unifab.parse.host import bnxt_qos
from unifab.profile import QosProfile
from unifab.render import host_script, nic_bnxt
from unifab.render.host_qos import render_host_script
from unifab.render.host_script import NicTarget
from unifab.twin.cluster import build
from unifab.twin.writer import write_bundle

FAKE_MLNX_QOS = r"""
import os, sys
from dataclasses import replace
from pathlib import Path
from unifab.parse.host import mlnx_qos as m

args = sys.argv[1:]
ifc = args[args.index("-i") + 1]
state = Path(os.environ["UNIFAB_ROOT"]) / "cmd" / "mlnx_qos" / f"{ifc}.txt"
full = state.with_suffix(".all")  # every TC, including those no priority maps to (what -a shows)
q = m.parse((full if full.exists() else state).read_text())
sets = [a for a in args if a not in ("-i", ifc, "-a")]
if not sets:
    shown = q if "-a" in args else replace(q, tcs=tuple(t for t in q.tcs if t.priorities))
    sys.stdout.write(m.dump(shown))
    sys.exit(0)
with open(os.environ["UNIFAB_LOG"], "a") as log:
    log.write("mlnx_qos " + " ".join(args) + "\n")
opts = {}
i = 0
while i < len(sets):
    opts.setdefault(sets[i], []).append(sets[i + 1])
    i += 2
if "--trust" in opts and "--dscp2prio" in opts:
    sys.exit("--trust and --dscp2prio cannot be combined")
if "--trust" in opts:
    trust = opts["--trust"][0]
    q = replace(q, trust=trust, dscp2prio=q.dscp2prio or {d: d >> 3 for d in range(64)} if trust == "dscp" else {})
for item in opts.get("--dscp2prio", []):
    _, d, p = item.split(",")
    q = replace(q, dscp2prio={**q.dscp2prio, int(d): int(p)})
if "--pfc" in opts:
    bits = opts["--pfc"][0].split(",")
    assert len(bits) == 8, "pfc list must have 8 items"
    q = replace(q, pfc_enabled=tuple(p for p, b in enumerate(bits) if b == "1"))
tcs = {t.tc: t for t in q.tcs}
if "--prio_tc" in opts:
    prio_tc = {p: int(tc) for p, tc in enumerate(opts["--prio_tc"][0].split(","))}
    q = replace(q, prio_tc=prio_tc)
if "--tsa" in opts:
    tsa = opts["--tsa"][0].split(",")
    bw = [int(x) for x in opts["--tcbw"][0].split(",")]
    assert sum(b for t, b in zip(tsa, bw) if t == "ets") == 100
    tcs = {tc: m.TcConfig(tc, tsa[tc], bw[tc] if tsa[tc] == "ets" else None, None, ()) for tc in range(8)}
tcs = {tc: replace(t, priorities=tuple(p for p in range(8) if q.prio_tc.get(p) == tc)) for tc, t in tcs.items()}
q = replace(q, tcs=tuple(tcs[tc] for tc in sorted(tcs)))
if "--prio2buffer" in opts:
    p2b = tuple(int(x) for x in opts["--prio2buffer"][0].split(","))
    q = replace(q, buffers=replace(q.buffers, prio2buffer=p2b))
if "--cable_len" in opts:
    q = replace(q, cable_len=int(opts["--cable_len"][0]))
full.write_text(m.dump(q))
state.write_text(m.dump(replace(q, tcs=tuple(t for t in q.tcs if t.priorities))))
"""

FAKE_ETHTOOL = r"""
import os, sys
from pathlib import Path
from unifab.parse.host import ethtool_pause as e

args = sys.argv[1:]
path = Path(os.environ["UNIFAB_ROOT"]) / "cmd" / "ethtool-a" / f"{args[1]}.txt"
if args[0] == "-a":
    sys.stdout.write(path.read_text())
    sys.exit(0)
with open(os.environ["UNIFAB_LOG"], "a") as log:
    log.write("ethtool " + " ".join(args) + "\n")
path.write_text(e.dump(e.PauseParams(args[1], autoneg=False, rx=False, tx=False)))
"""

# iproute2 dcb: `dcb OBJ show dev IF ATTR` prints "ATTR k:v k:v ..."; set/replace stores the pairs
FAKE_DCB = r"""
import os, sys
from pathlib import Path

obj, verb, _, ifc, *rest = sys.argv[1:]
base = Path(os.environ["UNIFAB_ROOT"]) / "dcb" / ifc / obj
if verb == "show":
    attr = rest[0]
    have = (base / attr).read_text() if (base / attr).exists() else ""
    print(f"{attr} {have}".strip())
    sys.exit(0)
with open(os.environ["UNIFAB_LOG"], "a") as log:
    log.write("dcb " + " ".join(sys.argv[1:]) + "\n")
base.mkdir(parents=True, exist_ok=True)
attr, pairs = None, {}
for tok in rest + ["--end"]:
    if ":" in tok:
        k, v = tok.split(":")
        pairs[attr].append((int(k), v))
    else:
        attr = tok
        pairs.setdefault(attr, [])
for attr, items in pairs.items():
    if attr != "--end":
        (base / attr).write_text(" ".join(f"{k}:{v}" for k, v in sorted(items)))
"""

FAKE_NICCLI = r"""
import json, os, sys
from pathlib import Path

args = sys.argv[1:]
ifc, cmd, rest = args[1], args[2], args[3:]
root = Path(os.environ["UNIFAB_ROOT"])
state_file = root / "niccli" / f"{ifc}.json"
state = json.loads(state_file.read_text())
if cmd == "getqos":
    out = ["IEEE 8021QAZ ETS Configuration TLV:",
           "\t PRIO_MAP: " + " ".join(f"{p}:{tc}" for p, tc in enumerate(state["up2tc"])),
           "\t TC Bandwidth: " + " ".join(f"{b}%" for b in state["tcbw"]),
           "\t TSA_MAP: " + " ".join(f"{tc}:{t}" for tc, t in enumerate(state["tsa"])),
           "IEEE 8021QAZ PFC TLV:",
           "\t PFC enabled: " + (" ".join(map(str, state["pfc"])) or "none")]
    if state["apps"]:
        out.append("IEEE 8021QAZ APP TLV:")
    for i, (prio, sel, value) in enumerate(state["apps"]):
        what = "DSCP" if sel == 5 else "UDP or DCCP"
        out += [f"\t APP#{i}:", f"\t  Priority: {prio}", f"\t  Sel: {sel}", f"\t  {what}: {value}"]
    text = "\n".join(out) + "\n"
    (root / "cmd" / "bnxt-qos" / f"{ifc}.txt").write_text(text)
    sys.stdout.write(text)
    sys.exit(0)
with open(os.environ["UNIFAB_LOG"], "a") as log:
    log.write("niccli " + " ".join(args) + "\n")
opts = dict(zip(rest[0::2], rest[1::2]))
if cmd == "ets":
    state["tsa"] = [t.split(":")[1] for t in opts["-tsa"].split(",")]
    state["up2tc"] = [int(t.split(":")[1]) for t in opts["-up2tc"].split(",")]
    state["tcbw"] = [int(b) for b in opts["-tcbw"].split(",")]
elif cmd == "pfc":
    state["pfc"] = [int(p) for p in opts["-enable"].split(",")]
elif cmd == "apptlv":  # apptlv -add -app P,SEL,VALUE
    state["apps"].append([int(x) for x in rest[-1].split(",")])
state_file.write_text(json.dumps(state))
"""


def _bin(tmp: Path, tools: dict[str, str]) -> Path:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in tools.items():
        exe = bin_dir / name
        exe.write_text(f"#!{sys.executable}\n{body}")
        exe.chmod(0o755)
    return bin_dir


def _run(script: Path, root: Path, bin_dir: Path, log: Path) -> str:
    # only the fakes and the shell utilities: a real mlnx_qos/dcb on this machine must never be called
    utils = bin_dir.parent / "utils"
    if not utils.exists():
        utils.mkdir()
        for tool in ("cat", "awk", "sed", "grep", "tr", "sort", "paste", "mkdir", "dirname", "basename", "readlink"):
            found = shutil.which(tool)
            assert found, tool
            (utils / tool).symlink_to(found)
    env = {"PATH": f"{bin_dir}:{utils}", "UNIFAB_ROOT": str(root), "UNIFAB_LOG": str(log), "HOME": str(root)}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    bash = shutil.which("bash")
    assert bash is not None
    done = subprocess.run([bash, str(script)], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    _driver_readback(root)
    return done.stdout


def _driver_readback(root: Path) -> None:
    """What the mlx5 driver prints for a written ``traffic_class`` (host-nic-roce §2.4): a plain file
    keeps the written ``98``, the sysfs attribute reads back ``Global tclass=98``."""
    for path in root.glob("sys/class/infiniband/*/tc/1/traffic_class"):
        text = path.read_text().strip()
        if text.isdigit():
            path.write_text(f"Global tclass={text}\n")


def _calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture(scope="module")
def twin_host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("twin") / "b"
    write_bundle(build(8), out)
    return out / "hosts" / "gpu001"


INTENT = """
preset: nvidia-spectrum-x
qos:
  roce: {dscp: 24, priority: 4}
  cnp: {dscp: 46, priority: 5}
  lossless_priorities: [4]
  priority_to_tc: {4: 4, 5: 5}
  ets:
    - {tc: 0, tsa: ets, bw_percent: 40}
    - {tc: 4, tsa: ets, bw_percent: 60}
    - {tc: 5, tsa: strict}
  ecn: [{queue: 4, min_bytes: 100000, max_bytes: 1000000, probability: 50}]
  dcqcn: {rpg_ai_rate: 10, min_time_between_cnps: 8}
  mtu: {host: 4200, switch: 9100}
  nccl: {traffic_class: 98}
"""


def _profile() -> QosProfile:
    return resolve(parse_intent(INTENT), Device("gpu001", "host"))


def test_mlx5_script_configures_once_then_reads_only(tmp_path: Path, twin_host: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(twin_host, root)
    profile = _profile()
    nics = [NicTarget(f"eth{r}", f"mlx5_{r}", "mlx5", 5) for r in range(8)]
    script = tmp_path / "unifab-qos.sh"
    script.write_text(render_host_script("gpu001", nics, profile))
    bin_dir = _bin(tmp_path, {"mlnx_qos": FAKE_MLNX_QOS, "ethtool": FAKE_ETHTOOL})
    log = tmp_path / "calls.log"

    first = _run(script, root, bin_dir, log)
    calls = _calls(log)
    assert any("--trust" not in c and "--dscp2prio set,24,4" in c for c in calls)
    assert any(c.endswith("--pfc 0,0,0,0,1,0,0,0") for c in calls)
    assert "setting(s) changed" in first and not first.rstrip().endswith(" 0 setting(s) changed")

    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    second = _run(script, root, bin_dir, log)
    assert _calls(log) == calls, "the second run called a command that changes something"
    assert second.rstrip().endswith("unifab-qos: 0 setting(s) changed")
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == snapshot

    host, _ = load_host(within(root), Problems(within(root)))
    for nic in host.nics.values():
        assert nic.mtu == 4200
        assert nic.qos is not None
        qos = nic.qos
        assert qos.trust == "dscp"
        assert qos.dscp2prio[24] == 4 and qos.dscp2prio[46] == 5
        assert qos.pfc_enabled == frozenset({4})
        assert qos.prio_tc[4] == 4 and qos.prio_tc[5] == 5
        assert qos.cnp_dscp == 46 and qos.cnp_prio == 5
        assert qos.ecn_np_enabled == frozenset(range(8)) and qos.ecn_rp_enabled == frozenset(range(8))
        assert qos.traffic_class == 98 and qos.roce_tos == 98
        assert qos.cable_len_m == 5
        assert qos.prio2buffer == (0, 0, 0, 0, 1, 0, 0, 0)
        assert {(e.tc, e.tsa, e.bw_percent) for e in qos.ets if e.tc in (0, 4, 5)} == {
            (0, "ets", 40),
            (4, "ets", 60),
            (5, "strict", None),
        }
    ecn = root / "sys" / "class" / "net" / "eth0" / "ecn"
    assert (ecn / "roce_rp" / "rpg_ai_rate").read_text() == "10\n"
    assert (ecn / "roce_np" / "min_time_between_cnps").read_text() == "8\n"


def test_mlx5_upstream_path_uses_dcb_and_debugfs(tmp_path: Path, twin_host: Path) -> None:
    """Without MLNX_OFED: no mlnx_qos on PATH and no ecn/ tree -> dcb and debugfs cc_params."""
    root = tmp_path / "root"
    shutil.copytree(twin_host, root)
    shutil.rmtree(root / "sys" / "class" / "net" / "eth0" / "ecn")
    pci = root / "sys" / "devices" / "pci0000:00" / "0000:17:00.0"
    pci.mkdir(parents=True)
    (root / "sys" / "class" / "net" / "eth0" / "device").symlink_to(pci)
    profile = _profile()
    script = tmp_path / "unifab-qos.sh"
    script.write_text(render_host_script("gpu001", [NicTarget("eth0", "mlx5_0", "mlx5", 5)], profile))
    bin_dir = _bin(tmp_path, {"dcb": FAKE_DCB, "ethtool": FAKE_ETHTOOL})
    log = tmp_path / "calls.log"
    _run(script, root, bin_dir, log)
    calls = _calls(log)
    assert [c.split()[1:3] for c in calls if c.startswith("dcb")] == [
        ["app", "replace"],
        ["pfc", "set"],
        ["ets", "set"],
        ["buffer", "set"],
    ]
    assert (root / "dcb" / "eth0" / "pfc" / "prio-pfc").read_text().split()[4] == "4:on"
    cc = root / "sys" / "kernel" / "debug" / "mlx5" / "0000:17:00.0" / "cc_params"
    assert (cc / "np_cnp_dscp").read_text() == "46\n"
    assert (cc / "rp_ai_rate").read_text() == "10\n"
    second = _run(script, root, bin_dir, log)
    assert _calls(log) == calls
    assert second.rstrip().endswith("unifab-qos: 0 setting(s) changed")


def test_bnxt_script_configures_once_then_reads_only(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "niccli").mkdir(parents=True)
    (root / "cmd" / "bnxt-qos").mkdir(parents=True)
    (root / "cmd" / "ethtool-a").mkdir(parents=True)
    (root / "cmd" / "ethtool-a" / "ens1f0np0.txt").write_text(
        "Pause parameters for ens1f0np0:\nAutonegotiate:\ton\nRX:\t\ton\nTX:\t\ton\n"
    )
    (root / "sys" / "class" / "net" / "ens1f0np0").mkdir(parents=True)
    (root / "sys" / "class" / "net" / "ens1f0np0" / "mtu").write_text("1500\n")
    initial = {"tsa": ["ets"], "up2tc": [0] * 8, "tcbw": [100], "pfc": [], "apps": []}
    (root / "niccli" / "ens1f0np0.json").write_text(__import__("json").dumps(initial))
    profile = resolve(parse_intent("preset: broadcom-thor"), Device("h1", "host"))
    script = tmp_path / "unifab-qos.sh"
    script.write_text(render_host_script("h1", [NicTarget("ens1f0np0", "bnxt_re0", "bnxt", 7)], profile))
    bin_dir = _bin(tmp_path, {"niccli": FAKE_NICCLI, "ethtool": FAKE_ETHTOOL})
    log = tmp_path / "calls.log"
    _run(script, root, bin_dir, log)
    calls = _calls(log)
    assert (
        "niccli -dev ens1f0np0 ets -tsa 0:ets,1:ets,2:strict -up2tc 0:0,1:0,2:0,3:1,4:0,5:0,6:0,7:2 -tcbw 50,50,0"
        in calls
    )
    assert "niccli -dev ens1f0np0 pfc -enable 3" in calls
    assert [c for c in calls if " apptlv " in c] == [
        f"niccli -dev ens1f0np0 apptlv -add -app {app}" for app in ("7,5,48", "3,5,26", "3,3,4791")
    ]
    assert "ethtool -A ens1f0np0 autoneg off rx off tx off" in calls
    cc = root / "sys" / "kernel" / "config" / "bnxt_re" / "bnxt_re0" / "ports" / "1" / "cc"
    assert (cc / "roce_dscp").read_text() == "0x1a\n"  # hex: `echo 26` would set 38
    assert (cc / "apply").read_text() == "0x1\n"
    (cc / "apply").unlink()
    second = _run(script, root, bin_dir, log)
    assert _calls(log) == calls
    assert second.rstrip().endswith("unifab-qos: 0 setting(s) changed")
    assert not (cc / "apply").exists(), "nothing changed, so nothing is applied again"
    qos = bnxt_qos.parse((root / "cmd" / "bnxt-qos" / "ens1f0np0.txt").read_text())
    assert qos.dscp2prio == {26: 3, 48: 7} and qos.pfc_enabled == (3,)
    assert qos.prio_tc[3] == 1 and qos.prio_tc[7] == 2
    tree = bnxt_qos.parse_tree({p.relative_to(cc.parent.parent.parent).as_posix(): p.read_text() for p in cc.iterdir()})
    assert tree.cc[0].params == {"ecn_enable": 1, "roce_prio": 3, "roce_dscp": 26, "cnp_prio": 7, "cnp_dscp": 48}


def test_bnxt_rendered_getqos_is_the_thor2_capture_for_the_broadcom_preset() -> None:
    """The Broadcom preset is the configuration of the Thor2 capture: the rendered read-back is that text."""
    from tests.parse.host.test_bnxt_qos import THOR2_DEFAULT

    profile = resolve(parse_intent("preset: broadcom-thor"), Device("h1", "host"))
    assert nic_bnxt.getqos(profile) == THOR2_DEFAULT


def test_bnxt_getqos_after_the_section_is_the_intents_tcs_and_keeps_rate_limits() -> None:
    """A Thor runs the intent's priority -> TC map and ETS (niccli takes up to eight TCs), as mlx5 does."""
    profile = _profile()
    assert len({profile.priority_to_tc[p] for p in range(8)}) > 3
    current = bnxt_qos.BnxtQos(None, {}, (), {}, (bnxt_qos.BnxtTc(0, "ets", 100, 40),), (), ())
    qos = bnxt_qos.parse(nic_bnxt.getqos(profile, current))
    assert qos.prio_tc == dict(profile.priority_to_tc)
    ets = {e.tc: e for e in profile.ets}
    n = max([*profile.priority_to_tc.values(), *ets]) + 1
    expected = dict.fromkeys(range(n), ("ets", 0))  # a TC the intent gives no weight: ETS, 0%
    expected |= {tc: (e.tsa, e.bw_percent if e.tsa == "ets" else 0) for tc, e in ets.items()}
    assert [(t.tc, t.tsa, t.bw) for t in qos.tcs] == [(tc, *expected[tc]) for tc in range(n)]
    assert [t.ratelimit_pct for t in qos.tcs] == [40] + [100] * (len(qos.tcs) - 1)  # not the section's: kept
    assert qos.dscp2prio == {profile.roce_dscp: profile.roce_priority, profile.cnp_dscp: profile.cnp_priority}
    assert qos.pfc_enabled == tuple(sorted(profile.lossless_priorities))


@pytest.mark.parametrize(
    ("nic", "problem"),
    [
        (NicTarget("eth0; rm -rf /", "mlx5_0", "mlx5", 3), "netdev name"),
        (NicTarget("eth0", "mlx5_0$(id)", "mlx5", 3), "RDMA device name"),
        (NicTarget("a-very-long-netdev-name", None, "mlx5", 3), "netdev name"),
    ],
)
def test_names_are_validated_before_they_reach_a_script(nic: NicTarget, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        render_host_script("gpu001", [nic], _profile())


def test_only_ints_and_names_are_quoted_into_a_script() -> None:
    assert host_script.q("RoCE v2") == "'RoCE v2'"
    with pytest.raises(UsageError):
        host_script.q(True)
    with pytest.raises(UsageError):
        host_script.q(1.5)  # type: ignore[arg-type]
