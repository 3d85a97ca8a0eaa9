"""Render for a bundle's devices, write the preview bundle, and check it: the fixed fabric is clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.fabric_plan import FabricPlan, output_files, plan, write_tree
from unifab.intent import Intent, parse_intent
from unifab.model import Fabric
from unifab.twin.cluster import build
from unifab.twin.writer import intent_yaml, write_bundle

OTHER = """
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
  mtu: {host: 4200, switch: 9100}
  nccl: {traffic_class: 98}
"""


@pytest.fixture(scope="module", params=["sonic", "eos"])
def twin(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(f"twin-{request.param}") / "b"
    write_bundle(build(64, switch_os=request.param), out)
    return out


def preview(intent: Intent, bundle: Path, out: Path) -> tuple[FabricPlan, Fabric]:
    fp = plan(intent, load_bundle(bundle), bundle)
    assert [d.error for d in fp.devices if d.error] == []
    write_tree(out, fp.preview_files(), copy_from=bundle)
    return fp, load_bundle(out)


def test_the_twins_own_intent_changes_no_host(twin: Path, tmp_path: Path) -> None:
    fp, fixed = preview(parse_intent(intent_yaml()), twin, tmp_path / "fixed")
    assert all(d.diff == "" for d in fp.devices if d.kind == "host")
    assert [f.message for f in run_checks(fixed)] == []


def test_another_intent_previews_clean_and_reads_back(twin: Path, tmp_path: Path) -> None:
    fp, fixed = preview(parse_intent(OTHER), twin, tmp_path / "fixed")
    assert all(d.diff for d in fp.devices), "every device changes"
    # the running jobs keep NCCL_IB_TC=106, but the NICs' traffic_class override (98) wins over it
    assert [f.message for f in run_checks(fixed)] == []
    nic = fixed.hosts["gpu001"].nics["eth3"]
    assert nic.mtu == 4200 and nic.qos is not None
    assert (nic.qos.dscp2prio[24], nic.qos.pfc_enabled, nic.qos.traffic_class) == (4, frozenset({4}), 98)
    assert (nic.qos.cnp_dscp, nic.qos.cnp_prio) == (46, 5)
    port = next(p for p in fixed.switches["leaf-su1-r3"].ports.values() if p.qos and p.name.endswith("0"))
    assert port.qos is not None and port.mtu == 9100
    assert port.qos.dscp_to_tc[24] == 4 and port.qos.pfc_enabled == frozenset({4})
    q4 = port.qos.queues[4]
    assert (q4.ecn_enabled, q4.ecn_min_bytes, q4.ecn_max_bytes) == (True, 100_000, 1_000_000)


def test_outputs_per_device_and_the_job_environment(twin: Path) -> None:
    fp = plan(parse_intent(OTHER), load_bundle(twin), twin)
    files = dict(output_files(fp))
    assert files["hosts/gpu001/unifab-qos.sh"].startswith("#!/usr/bin/env bash\n")
    os_file = {"sonic": "config_db.json", "eos": "eos.cfg"}
    switch_os = fp.devices[-1].os
    assert f"switches/spine01/{os_file[switch_os]}" in files
    if switch_os == "sonic":
        assert "switches/spine01/patch.json" in files
    diff = files["switches/spine01/changes.diff"].splitlines()
    moved = {"sonic": '+  "24": "4",', "eos": "+qos map dscp 24 32 33 34 35 36 37 38 39 to traffic-class 4"}
    assert moved[switch_os] in diff  # only what changes: DSCP 24 now classifies into TC 4
    env = files["jobs/nccl.env"]
    assert "export NCCL_IB_TC=98\n" in env and "export NCCL_IB_GID_INDEX=3\n" in env
    assert "export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1\n" in env


def test_a_device_that_cannot_be_rendered_does_not_stop_the_others(tmp_path: Path) -> None:
    """A host whose current mlnx_qos output is garbage cannot be rendered (its NIC's state is unknown): it fails
    alone, named with the file, and nothing is written for it; every other host and switch renders."""
    bundle = tmp_path / "b"
    write_bundle(build(16, switch_os="mixed"), bundle)
    broken = sorted(bundle.glob("hosts/*/cmd/mlnx_qos/*.txt"))[0]
    host = broken.relative_to(bundle).parts[1]
    broken.write_text("Priority trust state: maybe\n")
    fp = plan(parse_intent("preset: nvidia-spectrum-x"), load_bundle(bundle), bundle)
    failed = [d for d in fp.devices if d.error]
    assert [(d.kind, d.name, d.os) for d in failed] == [("host", host, "?")]
    assert broken.name in (failed[0].error or "")
    assert {d.os for d in fp.devices if not d.error} == {"mlx5", "sonic", "eos", "nvue"}
    assert not any(rel.startswith(f"hosts/{host}/") for rel, _ in output_files(fp))


def test_write_tree_is_atomic(tmp_path: Path) -> None:
    target = tmp_path / "out"
    write_tree(target, iter([("a.txt", "one\n")]))

    def broken() -> object:
        yield ("b.txt", "two\n")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_tree(target, broken())  # type: ignore[arg-type]
    assert sorted(p.name for p in target.iterdir()) == [".unifab-output", "a.txt"]  # the marker: unifab wrote it
    assert [p.name for p in tmp_path.iterdir()] == ["out"], "no temporary directory is left behind"


def test_group_overrides_select_bundle_devices_by_role_rail_and_os(twin: Path) -> None:
    intent = parse_intent(
        intent_yaml() + "overrides:\n"
        "  - {match: {role: spine}, qos: {pfc_watchdog: {action: alert}}}\n"
        "  - {match: {rail: 3}, qos: {mtu: {switch: 9000}}}\n"
        "  - {match: {os: mlx5}, qos: {dcqcn: {rpg_ai_rate: 9}}}\n"
    )
    fp = plan(intent, load_bundle(twin), twin)
    by_name = {d.name: d.profile for d in fp.devices}
    assert {n for n, p in by_name.items() if p and p.switch_mtu == 9000} == {"leaf-su1-r3"}
    assert {n for n, p in by_name.items() if p and p.pfcwd and p.pfcwd.action == "alert"} == {
        f"spine0{i}" for i in range(1, 9)
    }
    assert all(p and p.dcqcn["rpg_ai_rate"] == 9 for n, p in by_name.items() if n.startswith("gpu"))
