"""`unifab agent collect` against REAL LLDP: two hosts and a leaf as network namespaces joined by veth cables, a
real lldpd in each, the collect run inside each host's namespace on its lldpd's socket (``--lldp-socket``).

The cabling is crossed against the plan (gpu001 is planned on Ethernet0 and wired to Ethernet4, gpu002 the other
way round), so the links the bundle shows can only have come from the wire: the reader gives each host's link
to the port its cable really reaches, ``unifab check`` says the two cables are swapped (TOPO-MISWIRED), and a
real ``unifab serve`` the bundle is pushed to lists the same links.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from netns_lab import Namespace, NetnsLab, netns_lab
from tests.collect.test_host_live import fake_nic_root
from tests.serve.conftest import UNIFAB, Process, free_port

import unifab
from unifab.serve.service import Server, Settings

NIC = "ens1f0np0"
WIRED = {"gpu001": "Ethernet4", "gpu002": "Ethernet0"}  # what the cables reach
PLANNED = {"gpu001": "Ethernet0", "gpu002": "Ethernet4"}  # what the plan says
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[NetnsLab, dict[str, Namespace]]]:
    with netns_lab() as lab:
        leaf = lab.namespace("leaf01", switch=True)
        hosts = {name: lab.namespace(name) for name in WIRED}
        for name, port in WIRED.items():
            lab.cable(hosts[name], NIC, leaf, port)
        lab.start()
        for name, port in WIRED.items():
            lab.wait_for(hosts[name], {(NIC, "leaf01", port)})
        yield lab, hosts


@pytest.fixture(scope="module")
def bundle(lab: tuple[NetnsLab, dict[str, Namespace]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each host collected inside its own namespace, by the CLI, from its own fake /sys and its real lldpd."""
    _, hosts = lab
    work = tmp_path_factory.mktemp("lldp-netns")
    out = work / "bundle"
    for name, ns in hosts.items():
        root = fake_nic_root(work / f"root-{name}", {"mlx5_0": NIC})
        argv = ["agent", "collect", "--root", str(root), "--lldp-socket", str(ns.socket), "--out", str(out)]
        argv += ["--hostname", name, "--timeout", "20"]
        proc = subprocess.run(
            ["ip", "netns", "exec", ns.name, *UNIFAB, *argv],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            cwd=REPO,
        )
        assert proc.returncode == 0, proc.stderr
        assert f"RDMA NICs: {NIC}" in proc.stdout, proc.stdout
        assert "cmd/lldpcli.json" not in proc.stdout, proc.stdout  # read, not missing
    rows = "".join(f"{h},{NIC},leaf01,{p}\n" for h, p in PLANNED.items())
    (out / "plan").mkdir()
    (out / "plan/cabling.csv").write_text("a_node,a_port,z_node,z_port\n" + rows)
    return out


def test_the_lab_is_real(lab: tuple[NetnsLab, dict[str, Namespace]]) -> None:
    """The leaf's lldpd sees both hosts on the ports their cables reach (nothing here is scripted)."""
    netns, _ = lab
    leaf = next(ns for ns in netns.namespaces if ns.switch)
    seen = {(local, name) for local, name, _ in netns.neighbors(leaf)}
    assert seen == {(port, host) for host, port in WIRED.items()}


def test_the_bundle_has_the_links_from_the_wire(bundle: Path) -> None:
    for host in WIRED:
        lldp = orjson.loads((bundle / "hosts" / host / "cmd/lldpcli.json").read_bytes())
        assert "leaf01" in orjson.dumps(lldp).decode()
    fabric = unifab.load_snapshot(bundle).fabric
    by_id = {lk.id: lk for lk in fabric.links}
    for host, port in WIRED.items():
        wired = f"link:{host}:{NIC}--leaf01:{port}"
        assert wired in by_id, sorted(by_id)
        assert "lldp" in by_id[wired].sources
    for host, port in PLANNED.items():
        assert "lldp" not in by_id[f"link:{host}:{NIC}--leaf01:{port}"].sources  # planned only: no cable there
    assert fabric.hosts["gpu001"].nics[NIC].rdma_dev == "mlx5_0"


def test_check_says_the_cables_are_swapped(bundle: Path) -> None:
    proc = subprocess.run(
        [*UNIFAB, "check", str(bundle), "--format", "json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    findings = orjson.loads(proc.stdout)["findings"]
    [swap] = [f for f in findings if f["check"] == "TOPO-MISWIRED"]
    assert "are swapped" in swap["message"], swap["message"]
    assert sorted(swap["evidence"]["discovered"]) == [f"{h}:{NIC} -- leaf01:{p}" for h, p in sorted(WIRED.items())]
    assert sorted(swap["entities"]) == [f"link:{h}:{NIC}--leaf01:{p}" for h, p in sorted(PLANNED.items())]


def test_a_real_serve_lists_the_links(bundle: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "serve.db")
    server = Server(Settings(db=db))
    tokens = {role: server.create_token(role, role, "test").token for role in ("agent", "viewer")}
    server.close()
    port = free_port()
    proc = Process(["serve", "--db", db, "--port", str(port)], tmp_path / "server.log", port)
    try:
        proc.wait_healthy()
        env = {**os.environ, "UNIFAB_TOKEN": tokens["agent"]}
        pushed = subprocess.run(
            [*UNIFAB, "check", str(bundle), "--push", proc.url, "--quiet"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        assert pushed.returncode in (0, 1) and f"pushed {bundle}" in pushed.stderr, pushed.stderr
        viewer = {"Authorization": f"Bearer {tokens['viewer']}"}
        page = httpx.get(f"{proc.url}/api/v1/links", params={"device": "switch:leaf01"}, headers=viewer, timeout=30)
        page.raise_for_status()
        items = {i["id"]: i for i in page.json()["items"]}
        for host, leaf_port in WIRED.items():
            item = items[f"link:{host}:{NIC}--leaf01:{leaf_port}"]
            assert "lldp" in item["sources"]
            ends = {(e["node"], e["port"], e["kind"]) for e in (item["a"], item["b"])}
            assert (host, NIC, "host") in ends and any(e[:2] == ("leaf01", leaf_port) for e in ends), ends
    finally:
        proc.stop()
