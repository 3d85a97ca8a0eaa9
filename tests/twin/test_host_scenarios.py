"""The host scenarios: what each one writes, and that check finds exactly their truth (alone and together)."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.parse.host import ibv_devinfo, lsmod, lspci, show_gids
from unifab.twin.generate import generate
from unifab.twin.host_pci_files import gpu_bdf, nic_bdf
from unifab.twin.host_scenarios import DOWNGRADED_WIDTH, HOST_SCENARIOS, LOW_ROCE_MTU


def _found(bundle: Path) -> set[tuple[str, str]]:
    return {(f.check, e) for f in run_checks(load_bundle(bundle)) for e in f.entities}


def _expected(truth: dict) -> set[tuple[str, str]]:  # type: ignore[type-arg]
    return {(m["check"], e) for m in truth["misconfigurations"] for e in m["entities"]}


@pytest.mark.parametrize(("gpus", "seed"), [(64, 3), (256, 4)])
def test_all_host_scenarios_together(tmp_path: Path, gpus: int, seed: int) -> None:
    result = generate(tmp_path / "b", gpus=gpus, seed=seed, scenarios=tuple(HOST_SCENARIOS))
    assert {m["scenario"] for m in result.truth["misconfigurations"]} == set(HOST_SCENARIOS)
    assert _found(tmp_path / "b") == _expected(result.truth)


def test_the_written_files_carry_each_fault(tmp_path: Path) -> None:
    result = generate(tmp_path / "b", gpus=128, seed=9, scenarios=tuple(HOST_SCENARIOS))
    hosts = tmp_path / "b" / "hosts"
    for m in result.truth["misconfigurations"]:
        ident = m["entities"][0]
        if m["scenario"] == "pcie-downgraded":
            _, host, which = ident.split(":")
            devices = lspci.parse((hosts / host / "cmd/lspci-vvv.txt").read_text()).by_bdf()
            rail = int(which.rsplit("_", 1)[-1])
            bdf = nic_bdf(rail) if ident.startswith("nic:") else gpu_bdf(rail)
            assert devices[bdf].link_status == lspci.Link(32.0, DOWNGRADED_WIDTH) and devices[bdf].downgraded
            assert devices[devices[bdf].parent or ""].downgraded  # the port above shows the same link
        elif m["scenario"] == "gid-index":
            _, host, dev = ident.split(":")
            gids = [g for g in show_gids.parse((hosts / host / "cmd/show_gids.txt").read_text()) if g.dev == dev]
            assert [(g.index, g.ipv4) for g in gids] == [(0, None), (1, None)]
        elif m["scenario"] == "roce-mtu":
            _, host, dev = ident.split(":")
            devices = ibv_devinfo.parse((hosts / host / "cmd/ibv_devinfo.txt").read_text())
            [port] = next(d for d in devices if d.hca_id == dev).ports
            assert port.active_mtu == LOW_ROCE_MTU
        elif m["scenario"] == "peermem-missing":
            host = ident.removeprefix("host:")
            assert not lsmod.parse((hosts / host / "cmd/lsmod.txt").read_text()).loaded("nvidia_peermem")
        elif m["scenario"] == "acs-redirect":
            host = ident.removeprefix("host:")
            devices = lspci.parse((hosts / host / "cmd/lspci-vvv.txt").read_text()).devices
            assert sum(1 for d in devices if d.acs is not None and d.acs.req_redir) == 2  # one rail's two ports
    clean = lsmod.parse(next(p for p in sorted(hosts.glob("*/cmd/lsmod.txt"))).read_text())
    assert clean.loaded("mlx5_core")


def test_jobs_carry_their_gid_index(tmp_path: Path) -> None:
    generate(tmp_path / "b", gpus=64, seed=0)
    jobs = load_bundle(tmp_path / "b").jobs
    assert jobs and {j.nccl_ib_gid_index for j in jobs.values()} == {3}


def test_host_scenarios_keep_quiet_leaves_when_they_can(tmp_path: Path) -> None:
    """NIC facts need no particular leaf: once another scenario touched a leaf, the NIC scenarios take NICs cabled
    to it, leaving untouched leaves to scenarios that need a quiet one."""
    result = generate(tmp_path / "b", gpus=256, seed=2, scenarios=("pfc-mismatch", "roce-mtu", "ets-roce"))
    by = {m["scenario"]: m for m in result.truth["misconfigurations"]}
    leaf = by["pfc-mismatch"]["subject"]["b"].split(":")[0]  # leaf-su1-r<rail> (256 GPUs: one SU)
    rails = {int(by[s]["entities"][0].rsplit("_", 1)[1]) for s in ("roce-mtu", "ets-roce")}
    assert rails == {int(leaf.rsplit("-r", 1)[1])}
