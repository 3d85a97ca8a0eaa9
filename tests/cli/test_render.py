"""``unifab render``: files per device, the preview bundle, exit codes and messages for bad intents."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from unifab.cli import app
from unifab.twin.cluster import build
from unifab.twin.writer import intent_yaml, write_bundle

runner = CliRunner()


def _unifab() -> str:
    found = shutil.which("unifab", path=str(Path(sys.executable).parent))
    assert found is not None
    return found


def test_help_has_an_example() -> None:
    result = runner.invoke(app, ["render", "--help"])
    assert result.exit_code == 0 and "Example:" in result.output


def test_template_fabric_renders_every_device(tmp_path: Path) -> None:
    intent = tmp_path / "fabric.yaml"
    intent.write_text(intent_yaml())
    out = tmp_path / "out"
    result = runner.invoke(app, ["render", str(intent), "--gpus", "64", "--out", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert {d["device"] for d in doc["devices"]} >= {"gpu001", "gpu008", "leaf-su1-r0", "spine08"}
    assert all(d["error"] is None for d in doc["devices"])
    assert (out / "hosts" / "gpu001" / "unifab-qos.sh").stat().st_mode & 0o111
    assert (out / "switches" / "leaf-su1-r0" / "config_db.json").is_file()
    assert (out / "switches" / "leaf-su1-r0" / "patch.json").is_file()
    assert "NCCL_IB_TC=106" in (out / "jobs" / "nccl.env").read_text()


def test_bundle_preview_checks_clean_and_a_differing_intent_beats_the_majority(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    write_bundle(build(64, switch_os="eos"), bundle)
    # the bundle's intent asks for DSCP 24: every NIC (the whole majority) now deviates from it
    (bundle / "fabric.yaml").write_text(
        "preset: nvidia-spectrum-x\nqos:\n  roce: {dscp: 24}\n  nccl: {traffic_class: 98}\n  mtu: {switch: 9100}\n"
    )
    before = runner.invoke(app, ["check", str(bundle), "--format", "json"])
    assert before.exit_code == 1
    checks = {f["check"] for f in json.loads(before.stdout)["findings"]}
    assert "QOS-TC-OVERRIDE" in checks

    out, fixed = tmp_path / "out", tmp_path / "fixed"
    args = ["render", str(bundle / "fabric.yaml"), "--bundle", str(bundle), "--out", str(out)]
    result = runner.invoke(app, [*args, "--write-bundle", str(fixed)])
    assert result.exit_code == 0, result.output
    assert "changed" in result.output and "gpu001" in result.output
    diff = (out / "hosts" / "gpu001" / "changes.diff").read_text()
    assert "-Global tclass=106\n+Global tclass=98\n" in diff
    assert (out / "switches" / "leaf-su1-r0" / "eos.cfg").is_file()
    after = runner.invoke(app, ["check", str(fixed), "--format", "json"])
    assert after.exit_code == 0, after.output
    assert json.loads(after.stdout)["findings"] == []


def test_a_bad_intent_in_a_bundle_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    write_bundle(build(8), bundle)
    (bundle / "fabric.yaml").write_text("preset: nvidia-spectrum-x\nqos:\n  mtu: {host: 100000}\n")
    result = runner.invoke(app, ["check", str(bundle), "--format", "json"])
    [finding] = [f for f in json.loads(result.stdout)["findings"] if f["check"] == "INPUT-UNREADABLE"]
    assert finding["message"].startswith("fabric.yaml:3: qos.mtu.host: Input should be less than or equal to 9978")


def test_neither_bundle_nor_template_is_a_usage_error(tmp_path: Path) -> None:
    intent = tmp_path / "fabric.yaml"
    intent.write_text("preset: nvidia-spectrum-x\n")
    proc = subprocess.run(
        [_unifab(), "render", str(intent), "--out", str(tmp_path / "o")], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == "unifab: error: give either --bundle BUNDLE (its devices) or --gpus N (the template fabric)"
    )
    assert not (tmp_path / "o").exists()


BROKEN = {
    "types.yaml": (
        "preset: nvidia-spectrum-x\nqos:\n  roce: {dscp: 64}\n  mtu: {host: big}\n",
        [
            "types.yaml:3: qos.roce.dscp: Input should be less than or equal to 63; got 64",
            "types.yaml:4: qos.mtu.host: Input should be a valid integer; got 'big'",
        ],
    ),
    "keys.yaml": (
        "preset: nvidia-spectrum-x\nqos:\n  ecnn: []\noverrides:\n  - match: {rack: 3}\n    qos: {}\n",
        [
            "keys.yaml:3: qos.ecnn: unknown key 'ecnn'; allowed: name, roce, cnp, lossless_priorities, "
            "dscp_to_priority, priority_to_tc, ets, ecn, dcqcn, mtu, pfc_watchdog, headroom, nccl, dcbx, "
            "congestion_control",
            "keys.yaml:5: overrides[0].match.rack: unknown key 'rack'; allowed: role, os, su, rail, name",
        ],
    ),
    "logic.yaml": (
        "preset: nvidia-spectrum-x\nqos:\n  cnp: {priority: 3}\n  ecn: [{queue: 3, min_bytes: 900, max_bytes: 800}]\n",
        [
            "logic.yaml:3: qos.cnp.priority: 3 is also the RoCE priority; CNPs need their own",
            "logic.yaml:3: qos.cnp.queue: CNP shares RoCE's traffic class 3; give it its own",
            "logic.yaml:4: qos.ecn[0].min_bytes: 900 is not below max_bytes 800",
        ],
    ),
    "yaml.yaml": (
        "qos:\n  roce: {dscp: 26\n",
        ["yaml.yaml:3: not valid YAML: did not find expected ',' or '}'"],
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_intents_exit_2_with_one_message_per_problem(name: str, tmp_path: Path) -> None:
    text, expected = BROKEN[name]
    (tmp_path / name).write_text(text)
    proc = subprocess.run(
        [_unifab(), "render", name, "--gpus", "8", "--out", "o"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"unifab: error: {m}" for m in expected]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


def test_devices_that_cannot_be_rendered_exit_1_and_the_rest_is_written(tmp_path: Path) -> None:
    """A host whose current mlnx_qos output is garbage cannot be rendered: exit 1, the error names the host, and
    everything else is written."""
    bundle = tmp_path / "b"
    write_bundle(build(16, switch_os="mixed"), bundle)
    broken = sorted(bundle.glob("hosts/*/cmd/mlnx_qos/*.txt"))[-1]
    host = broken.relative_to(bundle).parts[1]
    broken.write_text("Priority trust state: maybe\n")
    out = tmp_path / "out"
    intent = tmp_path / "fabric.yaml"
    intent.write_text("preset: nvidia-spectrum-x\n")
    result = runner.invoke(app, ["render", str(intent), "--bundle", str(bundle), "--out", str(out), "--format", "json"])
    assert result.exit_code == 1
    failed = [d for d in json.loads(result.stdout)["devices"] if d["error"]]
    assert [d["device"] for d in failed] == [host] and failed[0]["error"].startswith(f"host {host}: ")
    assert not (out / "hosts" / host).exists()
    assert [p.parent.name for p in (out / "hosts").glob("*/unifab-qos.sh")], "the other hosts are written"
    assert any((out / "switches").glob("*/eos.cfg")), "the preset renders the Arista switches too"
    assert (out / "jobs" / "nccl.env").is_file()


def test_preview_only_and_the_table_lists_only_devices_that_change(tmp_path: Path) -> None:
    from unifab.twin.generate import generate

    bundle = tmp_path / "b"
    generate(bundle, 64, seed=2, scenarios=("pfc-mismatch",))
    preview = tmp_path / "fixed"
    result = runner.invoke(
        app,
        ["render", str(bundle / "fabric.yaml"), "--bundle", str(bundle), "--write-bundle", str(preview), "-q"],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    assert (preview / "hosts").is_dir()
    changed = {  # both ends of each broken link: pfc-mismatch breaks the NIC or the switch port
        end.split(":")[0]
        for m in json.loads((bundle / "truth.json").read_text())["misconfigurations"]
        for end in m["entities"][0].removeprefix("link:").split("--")
    }
    rows = [ln for ln in result.stdout.splitlines() if ln.startswith("│") and "changed lines" not in ln]
    listed = {cell.strip() for ln in rows for cell in ln.split("│")[2:3]}
    assert listed and listed <= changed | {""}
    total = len(
        json.loads(
            runner.invoke(
                app,
                [
                    "render",
                    str(bundle / "fabric.yaml"),
                    "--bundle",
                    str(bundle),
                    "--write-bundle",
                    str(tmp_path / "p2"),
                    "-f",
                    "json",
                    "-q",
                ],
            ).stdout
        )["devices"]
    )
    assert "already match the intent (--all lists them)" in result.stdout
    assert f"{total - len(listed - {''}):,} devices already match" in result.stdout


def test_neither_out_nor_preview_says_what_to_give(tmp_path: Path) -> None:
    intent = tmp_path / "fabric.yaml"
    intent.write_text(intent_yaml())
    result = runner.invoke(app, ["render", str(intent), "--gpus", "8"])
    assert result.exit_code == 2
    assert "--out DIR" in result.stderr and "--write-bundle DIR" in result.stderr


def test_render_never_deletes_what_it_did_not_write(tmp_path: Path) -> None:
    intent = tmp_path / "fabric.yaml"
    intent.write_text(intent_yaml())
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("keep me")
    refused = runner.invoke(app, ["render", str(intent), "--gpus", "8", "--out", str(mine), "-q"])
    assert refused.exit_code == 2
    assert "was not written by unifab render" in refused.stderr
    assert (mine / "todo.txt").read_text() == "keep me"
    out = tmp_path / "out"
    for _ in range(2):  # its own earlier output it may replace
        again = runner.invoke(app, ["render", str(intent), "--gpus", "8", "--out", str(out), "-q"])
        assert again.exit_code == 0, again.output


def test_the_preview_may_not_overwrite_its_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    write_bundle(build(8), bundle)
    before = sorted(p.relative_to(bundle) for p in bundle.rglob("*"))
    for target in (bundle, bundle / "fixed", tmp_path):
        result = runner.invoke(
            app, ["render", str(bundle / "fabric.yaml"), "--bundle", str(bundle), "--write-bundle", str(target), "-q"]
        )
        assert result.exit_code == 2, target
        assert "unifab: error:" in result.stderr
    assert sorted(p.relative_to(bundle) for p in bundle.rglob("*")) == before


def test_notes_say_why_a_port_runs_below_the_intent_in_json_and_in_the_table(tmp_path: Path) -> None:
    """A SONiC leaf's uplink to an EOS spine renders 9214 (EOS's maximum), not the preset's 9216: the device row
    carries the note, and the table prints it under the device."""
    bundle = tmp_path / "b"
    write_bundle(build(16, switch_os="mixed"), bundle)
    intent = tmp_path / "fabric.yaml"
    intent.write_text("preset: nvidia-spectrum-x\n")
    argv = ["render", str(intent), "--bundle", str(bundle), "--out", str(tmp_path / "out")]
    result = runner.invoke(app, [*argv, "--format", "json"])
    noted = {d["device"]: d["notes"] for d in json.loads(result.stdout)["devices"] if d["notes"]}
    assert noted and all(n.endswith("both ends of the link are set to 9214") for ns in noted.values() for n in ns)
    assert all(d.startswith("leaf") or d.startswith("spine") for d in noted)
    shutil.rmtree(tmp_path / "out")
    table = runner.invoke(app, [*argv, "--format", "table", "--all"])
    device, notes = next(iter(noted.items()))
    assert f"note: {device}: {notes[0]}" in " ".join(table.stdout.split()), table.stdout
