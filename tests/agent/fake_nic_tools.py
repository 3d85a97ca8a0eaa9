"""Stand-ins for the NIC tools ``unifab agent apply`` runs, keeping each NIC's state in files under ``UNIFAB_ROOT``.

``mlnx_qos`` and ``niccli`` are the host-script tests' recorders (:mod:`tests.render.test_nic_scripts`): they read
and write the bundle's real tool output through unifab's parsers. ``ip``, ``ethtool`` and ``dcb`` here also
take back what they set (the agent's rollback writes the recorded values with the same tools). Every call that
changes something is appended to ``UNIFAB_LOG``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from tests.render.test_nic_scripts import FAKE_MLNX_QOS, FAKE_NICCLI

__all__ = ["FAKE_DCB", "FAKE_ETHTOOL", "FAKE_IP", "install", "tool_env"]

FAKE_IP = r"""
import json, os, sys
from pathlib import Path

args = sys.argv[1:]
root = Path(os.environ["UNIFAB_ROOT"])
if args[:3] == ["-j", "link", "show"]:
    ifc = args[4]
    mtu = root / "sys" / "class" / "net" / ifc / "mtu"
    if not mtu.exists():
        sys.exit(f"Device \"{ifc}\" does not exist.")
    print(json.dumps([{"ifname": ifc, "mtu": int(mtu.read_text())}]))
    sys.exit(0)
assert args[:3] == ["link", "set", "dev"] and args[4] == "mtu", args
with open(os.environ["UNIFAB_LOG"], "a") as log:
    log.write("ip " + " ".join(args) + "\n")
(root / "sys" / "class" / "net" / args[3] / "mtu").write_text(args[5] + "\n")
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
opts = dict(zip(args[2::2], args[3::2]))
path.write_text(e.dump(e.PauseParams(args[1], opts["autoneg"] == "on", opts["rx"] == "on", opts["tx"] == "on")))
"""

# iproute2 dcb: one file per object and attribute holding "k:v k:v"; show/set/replace/del/flush
FAKE_DCB = r"""
import os, sys
from pathlib import Path

obj, verb, _, ifc, *rest = sys.argv[1:]
base = Path(os.environ["UNIFAB_ROOT"]) / "dcb" / ifc / obj
def load(attr):
    f = base / attr
    return dict(p.split(":") for p in f.read_text().split()) if f.exists() else {}
if verb == "show":
    print(f"{rest[0]} " + " ".join(f"{k}:{v}" for k, v in sorted(load(rest[0]).items(), key=lambda kv: int(kv[0]))))
    sys.exit(0)
with open(os.environ["UNIFAB_LOG"], "a") as log:
    log.write("dcb " + " ".join(sys.argv[1:]) + "\n")
base.mkdir(parents=True, exist_ok=True)
groups, attr = {}, None
for tok in rest:
    if ":" in tok:
        k, v = tok.split(":")
        groups[attr][k] = v
    else:
        attr = tok
        groups.setdefault(attr, {})
for attr, pairs in groups.items():
    have = load(attr)
    if verb == "flush":
        have = {}
    elif verb == "del":
        have = {k: v for k, v in have.items() if pairs.get(k) != v}
    elif verb == "set" and obj != "app":
        have.update(pairs)
    else:  # app replace / add
        have.update(pairs)
    (base / attr).write_text(" ".join(f"{k}:{v}" for k, v in sorted(have.items(), key=lambda kv: int(kv[0]))))
"""

TOOLS = {"mlnx_qos": FAKE_MLNX_QOS, "niccli": FAKE_NICCLI, "ip": FAKE_IP, "ethtool": FAKE_ETHTOOL, "dcb": FAKE_DCB}


def install(tmp: Path, names: tuple[str, ...] = tuple(TOOLS)) -> Path:
    """The fakes as executables in ``tmp/bin`` (only those named: a missing tool is a missing tool)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in names:
        exe = bin_dir / name
        exe.write_text(f"#!{sys.executable}\n{TOOLS[name]}")
        exe.chmod(0o755)
    return bin_dir


def tool_env(bin_dir: Path, root: Path, log: Path) -> dict[str, str]:
    """PATH with the fakes first (and nothing else that could reach a real NIC tool), and their state root."""
    path = f"{bin_dir}:{Path(sys.executable).parent}"
    assert shutil.which("mlnx_qos", path=path) in (None, str(bin_dir / "mlnx_qos"))
    return {
        "PATH": path,
        "UNIFAB_ROOT": str(root),
        "UNIFAB_LOG": str(log),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
