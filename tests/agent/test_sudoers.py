"""Least privilege: the sudoers allow-list (``unifab agent sudoers``, committed as deploy/sudoers.d/unifab-agent)
and a collect as ``nobody`` with ``--sudo`` that routes exactly the allow-listed commands through sudo.

The allow-list is checked three ways: the committed file is the command's output (it cannot drift), ``visudo``
parses it, and a real sudo judges it (in a private mount namespace: the snippet bound over /etc/sudoers and fake
tools overlaid on /usr/bin and /usr/sbin there only) -- the exact reads pass, any extra argument is refused.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import orjson
import pytest
from nobody import python_as_nobody
from typer.testing import CliRunner

from unifab.cli.agent import agent_app
from unifab.collect.host_live import SUDO_REFUSED, sudoers

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "deploy/sudoers.d/unifab-agent"
NIC = "ens1f0np0"


def test_the_committed_file_is_the_default_output() -> None:
    result = CliRunner().invoke(agent_app, ["sudoers"])
    assert result.exit_code == 0, result.output
    assert COMMITTED.read_text() == result.output == sudoers()


def test_options_and_bad_input() -> None:
    runner = CliRunner()
    out = runner.invoke(agent_app, ["sudoers", "--user", "fabric-agent", "--lldp-socket", "/run/lldpd/other.sock"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[-1] == "fabric-agent ALL = (root) NOPASSWD: UNIFAB_AGENT_READ, !UNIFAB_AGENT_DENY"
    assert "/usr/sbin/lldpcli -u /run/lldpd/other.sock -f json0 show neighbors details," in out.output
    assert "lldpcli -f json0" not in out.output  # only the socket the agent is told to ask
    for args, needle in (
        (["--user", "root ALL=(ALL) ALL"], "--user 'root ALL=(ALL) ALL': expected a login name"),
        (["--lldp-socket", "/tmp/a b,c"], "--lldp-socket /tmp/a b,c: expected an absolute path"),
    ):
        bad = runner.invoke(agent_app, ["sudoers", *args])
        [line] = bad.output.strip().splitlines()
        assert bad.exit_code == 2 and line.startswith(f"unifab: error: {needle}"), bad.output
    assert "Example: unifab agent sudoers" in runner.invoke(agent_app, ["sudoers", "--help"]).output


def test_every_allowed_command_is_an_exact_read() -> None:
    text = sudoers()
    allow = text.split("Cmnd_Alias UNIFAB_AGENT_READ =")[1].split("Cmnd_Alias")[0]
    commands = {c.strip(" \\\n") for c in allow.split(",")}
    tools = {c.split()[0].rsplit("/", 1)[1] for c in commands}
    assert tools == {"lspci", "dmesg", "lldpcli", "mlnx_qos", "ethtool", "niccli", "bnxtqos"}
    assert "/usr/sbin/ethtool -m *" in commands and not any(" -S" in c or " -a" in c for c in commands)
    assert all(c.startswith(("/usr/bin/", "/usr/sbin/")) for c in commands)
    assert '/usr/bin/dmesg ""' in commands  # no argument at all (dmesg -C would clear the log)


def test_visudo_parses_it(tmp_path: Path) -> None:
    visudo = shutil.which("visudo", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if visudo is None:
        pytest.skip("visudo not installed (apt-get install sudo)")
    for user in ("unifab", "nobody"):
        path = tmp_path / f"sudoers-{user}"
        path.write_text(sudoers(user, lldp_socket=Path("/run/lldpd.socket")))
        proc = subprocess.run([visudo, "-cf", str(path)], capture_output=True, text=True, check=False, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([visudo, "-cf", str(COMMITTED)], capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_real_sudo_allows_exactly_the_reads(tmp_path: Path) -> None:
    """sudo itself judges the snippet, for the user nobody, in a mount namespace of its own."""
    tools = {t: shutil.which(t, path="/usr/bin:/usr/sbin:/bin:/sbin") for t in ("sudo", "unshare", "runuser")}
    if os.geteuid() != 0 or None in tools.values():
        pytest.skip(f"needs root and sudo, unshare, runuser ({tools})")
    snippet = tmp_path / "sudoers"
    snippet.write_text(sudoers("nobody"))
    snippet.chmod(0o440)
    mounts = [f"mount --bind {snippet} /etc/sudoers"]
    for directory, fakes in (("/usr/sbin", ("ethtool", "mlnx_qos")), ("/usr/bin", ("bnxtqos", "lspci"))):
        upper, work = tmp_path / f"upper{directory.replace('/', '-')}", tmp_path / f"work{directory.replace('/', '-')}"
        upper.mkdir()
        work.mkdir()
        for fake in fakes:
            if not Path(directory, fake).exists():
                (upper / fake).write_text("#!/bin/sh\nexit 0\n")
                (upper / fake).chmod(0o755)
        mounts.append(f"mount -t overlay overlay -o lowerdir={directory},upperdir={upper},workdir={work} {directory}")
    cases = {
        "/usr/sbin/ethtool -m eth0": True,
        "/sbin/ethtool -m eth0": True,  # another path to the same file
        "/usr/sbin/mlnx_qos -i ens1f0np0": True,
        "/usr/bin/bnxtqos -dev=ens1f0np0 get_qos": True,
        "/usr/bin/lspci -D -nn -vvv": True,
        "/usr/bin/dmesg": True,
        "/usr/sbin/ethtool -S eth0": False,  # needs no root: not allowed
        "/usr/sbin/ethtool -m eth0 raw on": False,  # an extra argument
        "/usr/sbin/ethtool -m -s": False,  # a name that is an option
        "/usr/sbin/mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0": False,  # a write
        "/usr/bin/bnxtqos -dev=ens1f0np0 set_qos get_qos": False,
        "/usr/bin/lspci -D -nn -vvv -xxxx": False,
        "/usr/bin/dmesg -C": False,
    }
    script = " && ".join(mounts) + " || exit 97\n"
    for command in cases:
        script += f'runuser -u nobody -- sudo -n -l {command} >/dev/null 2>&1; echo "$?"\n'
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if proc.returncode == 97:
        pytest.skip(f"no bind or overlay mounts here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    verdicts = dict(zip(cases, (line == "0" for line in proc.stdout.split()), strict=True))
    assert verdicts == cases


def _tool(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_collect_as_nobody_routes_exactly_the_root_commands_through_sudo(samples: Path, tmp_path: Path) -> None:
    (tmp_path / "probe-root/sys").mkdir(parents=True)
    probe = ["agent", "collect", "--out", str(tmp_path / "probe"), "--root", str(tmp_path / "probe-root")]
    with python_as_nobody([*probe, "--hostname", "probe", "--timeout", "5"]) as (prefix, shared):
        bin_dir, record, out = shared / "bin", shared / "record", shared / "out"
        bin_dir.mkdir()
        out.mkdir()
        record.touch()
        for path in (out, record):
            path.chmod(0o777 if path.is_dir() else 0o666)
        shutil.copy(samples / "host/mlnx_qos_os_dcbx_tsa_vendor_cx4.txt", shared / "mlnx_qos.txt")
        _tool(
            bin_dir,
            "sudo",
            f'printf "%s\\n" "$*" >> "{record}"\n'
            '[ "$1" = -n ] && [ "$2" = -- ] || { echo "sudo: unexpected usage" >&2; exit 2; }\nshift 2\n'
            'case "$1" in */lldpcli) echo "sudo: a password is required" >&2; exit 1;; esac\nexec "$@"',
        )
        _tool(bin_dir, "mlnx_qos", f'cat "{shared}/mlnx_qos.txt"')
        _tool(bin_dir, "ethtool", 'echo "ethtool $1 output"')
        _tool(bin_dir, "lspci", "echo '0000:41:00.0 Ethernet controller [0200]: Mellanox [15b3:101d]'")
        _tool(bin_dir, "dmesg", "echo '[    0.000000] Linux version 6.1.0'")
        _tool(bin_dir, "lldpcli", "echo never run")
        from tests.collect.test_host_live import fake_nic_root

        root = fake_nic_root(shared / "root", {"mlx5_0": NIC})
        for path in (root, *root.rglob("*")):
            path.chmod(path.stat().st_mode | stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0))
        path_var = f"{bin_dir}:/usr/local/bin:/usr/bin:/bin"
        command = [*prefix[:-1], f"PATH={path_var}", prefix[-1]] if "env" in prefix else prefix
        argv = ["-m", "unifab.cli", "agent", "collect", "--root", str(root), "--out", str(out), "--hostname", "h"]
        proc = subprocess.run(
            [*command, *argv, "--sudo", "--timeout", "20"],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env={**os.environ, "PATH": path_var},
            cwd=shared,
        )
        assert proc.returncode == 0, proc.stderr
        routed = set(record.read_text().splitlines())
        assert routed == {
            f"-n -- {bin_dir}/lspci -D -nn -vvv",
            f"-n -- {bin_dir}/dmesg",
            f"-n -- {bin_dir}/lldpcli -f json0 show neighbors details",
            f"-n -- {bin_dir}/mlnx_qos -i {NIC}",
            f"-n -- {bin_dir}/ethtool -m {NIC}",
        }
        host = out / "hosts/h"
        assert (host / f"cmd/ethtool-S/{NIC}.txt").read_text() == "ethtool -S output\n"  # run directly, unprivileged
        assert (host / f"cmd/ethtool-m/{NIC}.txt").read_text() == "ethtool -m output\n"  # through sudo
        assert (host / f"cmd/mlnx_qos/{NIC}.txt").is_file() and (host / "cmd/lspci-vvv.txt").is_file()
        missing = {m["path"]: m["reason"] for m in orjson.loads((host / "collect.json").read_bytes())["missing"]}
        assert missing["cmd/lldpcli.json"].startswith(f"{SUDO_REFUSED}: 'sudo -n -- {bin_dir}/lldpcli -f json0 ")
        assert missing["cmd/lldpcli.json"].endswith("sudo: a password is required")
        assert f"missing cmd/lldpcli.json: {SUDO_REFUSED}" in proc.stdout
