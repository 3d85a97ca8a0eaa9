"""The command line: exit codes, formats and messages, through the real entry point where it matters."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app

runner = CliRunner()


def _unifab() -> str:
    exe = Path(sys.executable).with_name("unifab")
    return str(exe) if exe.exists() else shutil.which("unifab") or "unifab"


def test_help_lists_commands_with_examples() -> None:
    proc = subprocess.run([_unifab(), "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    for verb in ("demo", "check", "checks", "parse", "twin"):
        assert verb in proc.stdout
    for args in (
        ["check", "--help"],
        ["checks", "--help"],
        ["parse", "--help"],
        ["twin", "generate", "--help"],
        ["demo", "--help"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, args
        assert "Example:" in result.output, args


def test_checks_lists_the_catalog() -> None:
    result = runner.invoke(app, ["checks", "--format", "json"])
    assert result.exit_code == 0
    ids = [row["id"] for row in json.loads(result.stdout)]
    assert {"QOS-PFC-MISMATCH", "QOS-DSCP-MAP", "QOS-ECN-OFF", "QOS-MTU"} <= set(ids)
    assert "INPUT-UNREADABLE" in ids
    table = runner.invoke(app, ["checks"])
    assert table.exit_code == 0 and "QOS-MTU" in table.output


def test_missing_bundle_exits_2_with_one_line(tmp_path: Path) -> None:
    proc = subprocess.run([_unifab(), "check", str(tmp_path / "nope")], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "bundle not found" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_check_json_and_exit_codes(twin_bundle: Path) -> None:
    result = runner.invoke(app, ["check", str(twin_bundle), "--format", "json"])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    truth = json.loads((twin_bundle / "truth.json").read_text())
    found = {(f["check"], e) for f in doc["findings"] for e in f["entities"]}
    assert found == {(m["check"], e) for m in truth["misconfigurations"] for e in m["entities"]}
    for finding in doc["findings"]:
        assert set(finding) >= {"check", "severity", "subject", "message", "evidence", "fix", "impact"}
        if finding["subject"]["kind"] in ("link", "switch"):
            assert {"a", "b"} <= set(finding["evidence"]), "evidence from both ends"
        elif finding["subject"]["kind"] == "port":  # a switch port's own setting (its RoCE queue's scheduler)
            assert "b" in finding["evidence"], "evidence of the switch end"
        else:  # a host's own fact (PCIe, GIDs, modules): one side
            assert "a" in finding["evidence"], "evidence of the host"
        assert finding["fix"] and all(fx["device"] and fx["commands"] for fx in finding["fix"])
    kinds = {f["subject"]["kind"] for f in doc["findings"]}
    # a lossy DSCP map is one finding about its switch, a GPU seated away from its NIC one about its host,
    # a downgraded PCIe link one about its NIC or GPU
    assert kinds == {m["subject"]["kind"] for m in truth["misconfigurations"]}
    assert kinds >= {"link", "switch", "job", "host", "nic"}  # a downgraded PCIe link may be a NIC's or a GPU's
    assert doc["summary"]["findings"] == len(doc["findings"])
    never = runner.invoke(app, ["check", str(twin_bundle), "--format", "json", "--fail-on", "never"])
    assert never.exit_code == 0


def test_fail_on_threshold(twin_bundle: Path) -> None:
    only_mtu = ["check", str(twin_bundle), "--check", "QOS-MTU", "--format", "json"]
    doc = json.loads(runner.invoke(app, only_mtu).stdout)
    worst = {f["severity"] for f in doc["findings"]}
    code = runner.invoke(app, [*only_mtu, "--fail-on", "critical"]).exit_code
    assert code == (1 if "critical" in worst else 0)


def test_check_table_and_html(twin_bundle: Path, tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    result = runner.invoke(app, ["check", str(twin_bundle), "--html", str(report)])
    assert result.exit_code == 1
    assert "QOS-PFC-MISMATCH" in result.output
    html = report.read_text()
    assert "QOS-DSCP-MAP" in html and "<svg" in html


def test_unknown_check_id_is_usage_error(twin_bundle: Path) -> None:
    result = runner.invoke(app, ["check", str(twin_bundle), "--check", "QOS-NOPE"])
    assert result.exit_code == 2
    assert "unknown check id 'QOS-NOPE'" in result.output


def test_parse_real_sample(samples: Path) -> None:
    result = runner.invoke(app, ["parse", "mlnx_qos", str(samples / "host" / "mlnx_qos_os_dcbx_tsa_vendor_cx4.txt")])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["trust"] == "dscp" and doc["pfc_enabled"] == [3] and doc["dscp2prio"]["26"] == 3


def test_parse_sysfs_tree_directory(twin_bundle: Path) -> None:
    result = runner.invoke(app, ["parse", "sysfs-ecn", str(twin_bundle / "hosts/gpu001/sys/class/net/eth0/ecn")])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["roce_np"]["params"]["cnp_dscp"] == 48


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["parse", "nope", "x"], "unknown format 'nope'"),
        (["parse", "mlnx_qos", "/nonexistent/file"], "cannot read"),
    ],
)
def test_parse_usage_errors(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output


def test_parse_error_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "q.txt"
    bad.write_text("DCBX mode: OS controlled\nPriority trust state: dscp\nPFC configuration:\n\tenabled 1 x\n")
    result = runner.invoke(app, ["parse", "mlnx_qos", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:" in result.output


def test_twin_generate_and_demo(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["twin", "generate", "--gpus", "64", "--out", str(tmp_path / "t"), "--scenario", "ecn-off"]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "t" / "truth.json").is_file()
    eos = runner.invoke(app, ["twin", "generate", "--gpus", "64", "--out", str(tmp_path / "e"), "--switch-os", "eos"])
    assert eos.exit_code == 0 and (tmp_path / "e/switches/spine01/eos/running-config.txt").is_file()
    wrong = runner.invoke(app, ["twin", "generate", "--gpus", "64", "--out", str(tmp_path / "w"), "--switch-os", "ios"])
    assert wrong.exit_code == 2 and "unknown switch OS 'ios'" in wrong.output
    bad = runner.invoke(app, ["twin", "generate", "--gpus", "64", "--out", str(tmp_path / "u"), "--scenario", "x"])
    assert bad.exit_code == 2 and "unknown scenario" in bad.output
    demo = runner.invoke(app, ["demo", "--out", str(tmp_path / "d")])
    assert demo.exit_code == 0, demo.output
    assert (tmp_path / "d" / "report.html").is_file()
    assert "QOS-ECN-OFF" in demo.output
