"""The IB twin round-tripped through the real tools: the twin's ``ib/ibsim.net`` is loaded into ibsim, OpenSM
assigns the LIDs, the twin's port-error counters are set on the same port through ibsim's console, and the real
``ibnetdiscover``, ``iblinkinfo``, ``ibqueryerrors`` and ``sminfo`` (under the umad2sim preload) replace the
twin's ``ib/`` files. unifab must find in that output exactly the twin's truth (a swapped rail cable, a missing
cable, a 1X or SDR link, a saturated error counter), and nothing on a clean twin; the real iblinkinfo must agree
with the twin's own on every port's link, width, speed and state, and the model unifab reads from the real output
must be the one it reads from the twin's files but for what the SM decides (LIDs) and the counters (ibqueryerrors
lists only the bad ports; perfquery.txt had every port's).

The hosts' ``cmd/ibstat.txt`` are kept, with their ``Base lid``/``SM lid`` rewritten to the LIDs the simulator's
SM assigned (found by port GUID in the real iblinkinfo): ibstat is what names the CAs by node GUID and gives the
host's side of each port, so dropping it would leave that path untested, and keeping the twin's LIDs would give
the model two LIDs for one port. ``ib/perfquery.txt`` (twin LIDs, and one call per port in the real tools) is
replaced by one ``ibqueryerrors`` run; a real ``perfquery`` of the faulted port cross-checks the counters.
``ib/sminfo/`` (the twin's master and standby on the spines) gives way to the real SM's ``ib/sminfo.txt``: the
simulator runs one OpenSM, on the port the tools attach to. ``ib/saquery.txt`` (twin LIDs) is dropped, not
replaced: through ibsim a plain ``saquery`` returns only the requester's own NodeRecord, and ``saquery NR <lid>``
per node costs ~60 ms a call (16 s at 256 GPUs); it only names CAs with a default NodeDescription, which no
scenario here makes, and ibstat names every CA.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Fabric, IbPort
from unifab.parse.ib import iblinkinfo, ibnetdiscover, ibqueryerrors, perfquery, sminfo
from unifab.twin.generate import generate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from ibsim import IbSim, ibsim_fabric, net_ids, require_tools

SCENARIOS = ("ib-swapped-cable", "ib-missing-cable", "ib-degraded-link", "ib-port-errors")
# what every cabled port of the twin's perfquery carries without a fault: not errors
TRAFFIC = frozenset({"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "CounterSelect2"})
SIZES = [
    pytest.param(64, 2, id="64gpu-1xHDR"),  # seed 2: the degraded link trains 1X HDR
    pytest.param(256, 1, id="256gpu-4xSDR"),  # seed 1: 4X SDR
]
_CA_BLOCK = re.compile(r"^CA '", re.MULTILINE)


def _pairs(truth: dict[str, Any]) -> set[tuple[str, str]]:
    return {(m["check"], e) for m in truth["misconfigurations"] for e in m["entities"]}


def _twin_errors(ib: Path) -> dict[tuple[str, int], dict[str, int]]:
    """(switch name, port) -> the error counters the twin's perfquery gives it (the ports a scenario set)."""
    topo = ibnetdiscover.parse((ib / "ibnetdiscover.txt").read_text())
    names = {n.lid: n.name for n in topo.nodes if n.kind == "switch"}
    out: dict[tuple[str, int], dict[str, int]] = {}
    for block in perfquery.parse((ib / "perfquery.txt").read_text()).blocks:
        errors = {k: v for k, v in block.counters.items() if v and k not in TRAFFIC}
        if errors:
            name = names.get(block.lid)
            assert name is not None, f"the twin set counters on lid {block.lid} port {block.port}, not a switch"
            out[(name, block.port)] = errors
    return out


def _linkinfo_ports(text: str) -> set[tuple[object, ...]]:
    """Every port of an iblinkinfo, without what the SM decides (LIDs) or ibsim comments (``Could be 12X``)."""
    return {
        (
            p.node_kind,
            p.node_description,
            p.node_guid,
            p.port_guid,
            p.port,
            p.width,
            p.speed,
            p.state,
            p.phys_state,
            p.remote_port,
            p.remote_description,
        )
        for p in iblinkinfo.parse(text).ports
    }


def _ib_ports(fabric: Fabric) -> dict[tuple[str, str], IbPort]:
    """Every IB port of the model by (device, port), without LIDs, counters and the files they came from."""
    out: dict[tuple[str, str], IbPort] = {}
    for host in fabric.hosts.values():
        out |= {(host.name, key): nic.ib for key, nic in host.nics.items() if nic.ib is not None}
    for sw in fabric.switches.values():
        out |= {(sw.name, name): port.ib for name, port in sw.ports.items() if port.ib is not None}
    return {
        key: replace(info, lid=None, sm_lid=None, counters={}, saturated=frozenset(), sources=frozenset())
        for key, info in out.items()
    }


def _same_fabric(twin: Path, bundle: Path, real: dict[str, str]) -> Fabric:
    """The bundle of the real tools' output, loaded: cables and IB ports as the twin's own files give them, every
    cabled HCA at the LID and SM LID the simulator's SM gave it."""
    ours, fabric = load_bundle(twin), load_bundle(bundle)
    assert fabric.input_findings == []
    assert sorted(lk.id for lk in fabric.links) == sorted(lk.id for lk in ours.links)
    assert _ib_ports(fabric) == _ib_ports(ours)
    lids, sm_lid = _real_lids(real)
    for host in fabric.hosts.values():
        for nic in host.nics.values():
            if nic.ib is not None and nic.ib.port_guid is not None and int(nic.ib.port_guid, 16) in lids:
                assert (nic.ib.lid, nic.ib.sm_lid) == (lids[int(nic.ib.port_guid, 16)], sm_lid), nic.id
    return fabric


def _real_lids(real: dict[str, str]) -> tuple[dict[int, int], int]:
    """Port GUID -> the LID the simulator's SM gave it (from the real iblinkinfo), and the SM's own LID."""
    lids = {p.port_guid: p.lid for p in iblinkinfo.parse(real["iblinkinfo"]).ports if p.port_guid is not None}
    return lids, sminfo.parse(real["sminfo"]).sm_lid


def _rewrite_ibstat(text: str, lids: dict[int, int], sm_lid: int) -> str:
    """``ibstat`` with each port's ``Base lid``/``SM lid`` set to the simulator's (a port the fabric does not have,
    an uncabled one, keeps its 0)."""
    starts = [m.start() for m in _CA_BLOCK.finditer(text)] + [len(text)]
    blocks = [text[: starts[0]]]
    for a, b in itertools.pairwise(starts):
        block = text[a:b]
        m = re.search(r"Port GUID: (0x[0-9a-fA-F]+)", block)
        lid = lids.get(int(m.group(1), 16)) if m is not None else None
        if lid is not None:
            block = re.sub(r"(Base lid: )\d+", rf"\g<1>{lid}", block)
            block = re.sub(r"(SM lid: )\d+", rf"\g<1>{sm_lid}", block)
        blocks.append(block)
    return "".join(blocks)


def _through_the_simulator(twin: Path, work: Path) -> tuple[Path, dict[str, str]]:
    """The twin's NETFILE in ibsim with its port errors set, the real tools' output as a copy of the twin's
    bundle; (that bundle, the real outputs by tool)."""
    ib = twin / "ib"
    netfile = (ib / "ibsim.net").read_text()
    ids = net_ids(netfile)
    own = ibnetdiscover.parse((ib / "ibnetdiscover.txt").read_text())
    attach = ids[min(n.description or "" for n in own.nodes if n.kind == "ca")]  # a cabled HCA: the twin found it
    switches = {n.name: n.description or "" for n in own.nodes if n.kind == "switch"}
    errors = _twin_errors(ib)
    real: dict[str, str] = {}
    with ibsim_fabric(work / "sim", netfile, attach=attach) as sim:
        sim.start_sm()  # sminfo needs a live SM; ibqueryerrors waits for SUBNET UP (see start_sm)
        for (switch, port), counters in errors.items():
            for name, value in counters.items():
                sim.console(f'PerformanceSet "{ids[switches[switch]]}"[{port}] PortCounters.{name}={value}')
        real["ibnetdiscover"] = sim.run(["ibnetdiscover"])
        real["iblinkinfo"] = sim.run(["iblinkinfo"])
        real["sminfo"] = sim.run(["sminfo"])
        real["ibqueryerrors"] = sim.run(["ibqueryerrors"], ok=(0, 1))  # 1: it found bad ports
        real["perfquery"] = _perfquery(sim, real["ibnetdiscover"], errors)
    bundle = work / "real"
    shutil.copytree(twin, bundle)
    for name in ("ibnetdiscover", "iblinkinfo", "sminfo", "ibqueryerrors"):
        (bundle / "ib" / f"{name}.txt").write_text(real[name])
    for name in ("perfquery.txt", "saquery.txt"):
        (bundle / "ib" / name).unlink()
    shutil.rmtree(bundle / "ib" / "sminfo")
    lids, sm_lid = _real_lids(real)
    for path in bundle.glob("hosts/*/cmd/ibstat.txt"):
        path.write_text(_rewrite_ibstat(path.read_text(), lids, sm_lid))
    for path in bundle.glob("hosts/*/sys/class/infiniband/*/ports/*/*lid"):  # the twin's LIDs (sysfs wins over
        path.unlink()  # ibstat): the simulator's are in ibstat now
    return bundle, real


def _perfquery(sim: IbSim, topology: str, errors: dict[tuple[str, int], dict[str, int]]) -> str:
    """Real ``perfquery <lid> <port>`` of the ports the twin set counters on (by the simulator's LIDs)."""
    topo = ibnetdiscover.parse(topology)
    lid = {n.name: n.lid for n in topo.nodes if n.kind == "switch"}
    return "".join(sim.run(["perfquery", str(lid[switch]), str(port)]) for switch, port in sorted(errors))


@pytest.mark.parametrize(("gpus", "seed"), SIZES)
def test_real_tools_on_the_faulted_twin_give_exactly_its_truth(tmp_path: Path, gpus: int, seed: int) -> None:
    require_tools()
    result = generate(tmp_path / "b", gpus=gpus, seed=seed, scenarios=SCENARIOS, fabric="ib")
    truth = json.loads((tmp_path / "b" / "truth.json").read_text())
    assert truth == result.truth and not truth["skipped"]
    assert {m["scenario"] for m in truth["misconfigurations"]} == set(SCENARIOS)
    errors = _twin_errors(tmp_path / "b" / "ib")
    [counted] = [m for m in truth["misconfigurations"] if m["check"] == "IB-COUNTERS"]
    switch, _, port = counted["subject"]["b"].rpartition(":")
    want = {"SymbolErrorCounter": 65535, "LinkDownedCounter": 7, "PortRcvErrors": 211}
    assert errors == {(switch, int(port)): want}  # what ib-port-errors writes: one leaf port, facing the HCA

    bundle, real = _through_the_simulator(tmp_path / "b", tmp_path)

    # the real tools' output, read by unifab's parsers, is the twin's fabric
    ours = (tmp_path / "b" / "ib" / "iblinkinfo.txt").read_text()
    assert _linkinfo_ports(real["iblinkinfo"]) == _linkinfo_ports(ours)
    [bad] = ibqueryerrors.parse(real["ibqueryerrors"]).nodes
    assert bad.description == f"MF0;{switch}:MQM8700/U1"
    assert {p.port: p.counters for p in bad.ports} == {None: want, int(port): want}  # "port ALL" and the port
    [block] = perfquery.parse(real["perfquery"]).blocks
    assert block.port == int(port) and {k: v for k, v in block.counters.items() if k in want} == want
    assert block.saturated("SymbolErrorCounter")
    master = sminfo.parse(real["sminfo"])
    assert master.is_master

    # and the checks find in it exactly what the twin injected
    fabric = _same_fabric(tmp_path / "b", bundle, real)
    info = fabric.switches[switch].ports[port].ib
    assert info is not None and {k: info.counters[k] for k in want} == want
    assert "ib/ibqueryerrors.txt" in info.sources and "SymbolErrorCounter" in info.saturated
    found = {(f.check, e) for f in run_checks(fabric) for e in f.entities}
    assert found == _pairs(truth)


@pytest.mark.parametrize(("gpus", "seed"), SIZES)
def test_real_tools_on_a_clean_twin_find_nothing(tmp_path: Path, gpus: int, seed: int) -> None:
    require_tools()
    generate(tmp_path / "b", gpus=gpus, seed=seed, fabric="ib")
    assert _twin_errors(tmp_path / "b" / "ib") == {}
    bundle, real = _through_the_simulator(tmp_path / "b", tmp_path)
    assert _linkinfo_ports(real["iblinkinfo"]) == _linkinfo_ports(
        (tmp_path / "b" / "ib" / "iblinkinfo.txt").read_text()
    )
    assert ibqueryerrors.parse(real["ibqueryerrors"]).nodes == ()
    assert run_checks(_same_fabric(tmp_path / "b", bundle, real)) == []
