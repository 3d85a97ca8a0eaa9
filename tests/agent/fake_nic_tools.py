"""Stand-ins for the NIC tools ``unifab agent apply`` runs, keeping each NIC's state in files under ``UNIFAB_ROOT``.

``mlnx_qos`` and ``niccli`` are the host-script tests' recorders (:mod:`tests.render.test_nic_scripts`): they read
and write the bundle's real tool output through unifab's parsers. ``ip``, ``ethtool`` and ``dcb`` here also
take back what they set (the agent's rollback writes the recorded values with the same tools). Every call that
changes something is appended to ``UNIFAB_LOG``.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from tests.render.test_nic_scripts import FAKE_MLNX_QOS, FAKE_NICCLI

from unifab.agent.plan_exec import CommandResult, HostIo

__all__ = ["FAKE_DCB", "FAKE_ETHTOOL", "FAKE_IP", "InProcessTools", "install", "tool_env"]

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


@dataclass(frozen=True)
class InProcessTools(HostIo):
    """:class:`HostIo` whose commands are the fakes installed in ``bin_dir``, run inside this interpreter.

    The same scripts see the same argv and environment (``tool_env`` set in ``os.environ``) and answer with
    the same exit code, stdout and stderr; only the process start (~35 ms, most of a fault-at-every-step
    test's hundreds of calls) is saved. A tool not installed answers 127, as :meth:`HostIo.run` does. The
    agent's real ``subprocess`` path is exercised by the tests that run ``unifab agent apply`` itself.
    """

    bin_dir: Path = Path("bin")

    def run(self, argv: Sequence[str], timeout: float) -> CommandResult:
        exe = self.bin_dir / argv[0]
        if "/" in argv[0] or not exe.is_file():
            return CommandResult(127, "", f"{argv[0]}: not installed")
        code = compile(exe.read_text().partition("\n")[2], str(exe), "exec")  # the shebang line dropped
        out, err, saved = io.StringIO(), io.StringIO(), sys.argv
        sys.argv = [str(exe), *argv[1:]]
        status = 0
        try:
            with redirect_stdout(out), redirect_stderr(err):
                exec(code, {"__name__": "__main__"})
        except SystemExit as stop:
            if isinstance(stop.code, int):
                status = stop.code
            elif stop.code is not None:
                err.write(f"{stop.code}\n")
                status = 1
        finally:
            sys.argv = saved
        return CommandResult(status, out.getvalue(), err.getvalue())
