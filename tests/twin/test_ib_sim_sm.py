"""IB-SM against two real subnet managers: a clean IB twin loaded into ibsim, one OpenSM on the HCA with the lowest
port GUID (it sweeps and becomes master) and a second on another HCA (it finds the master and enters STANDBY), and
the real ``sminfo`` (the master, as the collecting port sees it) and ``sminfo <lid>`` of each SM replace the
twin's ``ib/sminfo.txt`` and ``ib/sminfo/``. Both at one priority: one IB-SM warning naming both SMs, on the HCAs
that run them, with the lower GUID (the master) as the election's winner; the standby below the master's
priority: nothing. The twin's other files stay: IB-SM reads only the SMs, and finds their devices by port GUID,
which the NETFILE gives ibsim. With no OpenSM answering (never started, or gone after one sweep), the real
``sminfo 2>&1`` output is one IB-SM critical finding and no input problem. (A second *master* cannot be made this
way: OpenSM negotiates, so the real tools show the one state a healthy subnet has; the twin's
``ib-second-master`` scenario covers that reading.)
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from unifab.checks.ib import OPENSM_CONF
from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Severity
from unifab.parse.ib import iblinkinfo, ibnetdiscover, sminfo
from unifab.twin.generate import generate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from ibsim import ibsim_fabric, net_ids, require_tools


def _cas(twin: Path) -> list[ibnetdiscover.IbNode]:
    """The twin's cabled HCAs, lowest port GUID first."""
    nodes = ibnetdiscover.parse((twin / "ib" / "ibnetdiscover.txt").read_text()).nodes
    return sorted((n for n in nodes if n.kind == "ca" and n.ports), key=lambda n: int(n.ports[0].port_guid or "0", 16))


def _with_sm_files(twin: Path, work: Path, seen: str, readings: dict[str, str]) -> Path:
    """A copy of ``twin`` whose ``ib/sminfo.txt`` is ``seen`` and whose ``ib/sminfo/`` holds ``readings``."""
    bundle = work / "real"
    shutil.copytree(twin, bundle)
    (bundle / "ib" / "sminfo.txt").write_text(seen)
    shutil.rmtree(bundle / "ib" / "sminfo")
    (bundle / "ib" / "sminfo").mkdir()
    for name, text in readings.items():
        (bundle / "ib" / "sminfo" / f"{name}.txt").write_text(text)
    return bundle


def _with_real_sms(
    twin: Path, work: Path, priorities: tuple[int, int] | None = None, configs: tuple[Path, Path] | None = None
) -> tuple[Path, list[str]]:
    """A copy of ``twin`` whose SM files are the real tools' output for two OpenSMs, started at ``priorities`` or
    with ``configs`` (their opensm.conf files); (that bundle, the two HCAs' host names, master first)."""
    netfile = (twin / "ib" / "ibsim.net").read_text()
    ids = net_ids(netfile)
    cas = _cas(twin)
    first, second = cas[0], cas[-1]
    assert first.description and second.description and first.ports[0].port_guid and second.ports[0].port_guid
    with ibsim_fabric(work / "sim", netfile, attach=ids[first.description]) as sim:
        sim.start_sm(priority=priorities[0] if priorities else None, config=configs[0] if configs else None)
        sim.start_standby_sm(
            ids[second.description],
            priorities[1] if priorities else None,
            config=configs[1] if configs else None,
        )
        seen = sim.run(["sminfo"])
        lids = {p.port_guid: p.lid for p in iblinkinfo.parse(sim.run(["iblinkinfo"])).ports if p.port_guid}
        readings = {
            name: sim.run(["sminfo", str(lids[int(ca.ports[0].port_guid or "0", 16)])])
            for name, ca in (("master", first), ("standby", second))
        }
    master, standby = sminfo.parse(readings["master"]), sminfo.parse(readings["standby"])
    assert (master.state_name, standby.state_name) == ("SMINFO_MASTER", "SMINFO_STANDBY")
    if priorities:
        assert (master.priority, standby.priority) == priorities
    assert sminfo.parse(seen).sm_guid == master.sm_guid
    bundle = _with_sm_files(twin, work, seen, readings)
    hosts = [(ca.description or "").split()[0] for ca in (first, second)]  # "dgx-001 mlx5_0": the host, then the HCA
    return bundle, hosts


@pytest.fixture(scope="module")
def twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_tools()
    out = tmp_path_factory.mktemp("ib-sm") / "twin"
    generate(out, gpus=64, seed=2, fabric="ib")
    return out


def test_two_real_sms_at_one_priority_are_one_warning_naming_both(twin: Path, tmp_path: Path) -> None:
    bundle, hosts = _with_real_sms(twin, tmp_path, (5, 5))
    fabric = load_bundle(bundle)
    assert fabric.input_findings == []
    assert fabric.ib is not None and sorted(sm.state for sm in fabric.ib.sms) == ["master", "standby"]
    [finding] = run_checks(fabric)
    guids = sorted(sm.guid for sm in fabric.ib.sms)
    assert (finding.check, finding.severity) == ("IB-SM", Severity.WARNING)
    assert finding.entities == tuple(f"sm:{g}" for g in guids)
    assert finding.evidence["winner"] == min(guids, key=lambda g: int(g, 16))
    assert [t["device"] for t in finding.evidence["tied"]] == hosts
    assert "share priority 5" in finding.message
    assert all(any(line.startswith("sminfo ") for line in fix.commands) for fix in finding.fix)


def test_a_real_standby_below_the_master_s_priority_finds_nothing(twin: Path, tmp_path: Path) -> None:
    bundle, _hosts = _with_real_sms(twin, tmp_path, (10, 3))
    fabric = load_bundle(bundle)
    assert fabric.ib is not None and sorted(sm.priority for sm in fabric.ib.sms) == [3, 10]
    assert run_checks(fabric) == []


@pytest.mark.parametrize("swept", [False, True], ids=["never-swept", "sm-gone-after-one-sweep"])
def test_no_real_sm_answering_is_one_critical_finding(twin: Path, tmp_path: Path, swept: bool) -> None:
    netfile = (twin / "ib" / "ibsim.net").read_text()
    first = _cas(twin)[0]
    assert first.description
    with ibsim_fabric(tmp_path / "sim", netfile, attach=net_ids(netfile)[first.description]) as sim:
        if swept:
            sim.sweep()  # LIDs assigned, then the SM exits: the port still knows the SM's LID, nothing answers there
        seen = sim.run(["sminfo"], ok=(255,), with_stderr=True)
    assert "iberror" in seen and sminfo.no_answer(seen), seen
    fabric = load_bundle(_with_sm_files(twin, tmp_path, seen, {}))
    assert fabric.input_findings == []  # sminfo's failure is a reading (no SM), not a bad file
    assert fabric.ib is not None and fabric.ib.sm_collected and fabric.ib.sms == ()
    [finding] = run_checks(fabric)
    assert (finding.check, finding.severity) == ("IB-SM", Severity.CRITICAL)
    assert finding.message.startswith("no subnet manager is master")


def test_the_tie_s_fix_applied_to_real_opensm_clears_it(twin: Path, tmp_path: Path) -> None:
    """The fix's own commands, run for each SM's host (its opensm.conf under the test's directory instead of
    /etc/opensm), give a config the real opensm runs with; both SMs restarted with theirs, the tie is gone."""
    bundle, hosts = _with_real_sms(twin, tmp_path / "before", (5, 5))
    [finding] = run_checks(load_bundle(bundle))
    fixes = {fix.device: fix.commands for fix in finding.fix}
    assert sorted(fixes) == sorted(hosts) and all("systemctl restart opensm" in fixes[h] for h in hosts)
    netfile = (twin / "ib" / "ibsim.net").read_text()
    configs: list[Path] = []
    with ibsim_fabric(tmp_path / "apply", netfile) as sim:  # opensm -c writes the running defaults: no SM needed
        for host in hosts:
            conf = tmp_path / f"{host}-opensm.conf"
            for command in fixes[host]:
                if command.startswith(("test -f", "sed -i")):
                    sim.run(["sh", "-c", command.replace(OPENSM_CONF, str(conf))])
            configs.append(conf)
    assert [c.read_text().count("\nsm_priority ") for c in configs] == [1, 1]
    after, _ = _with_real_sms(twin, tmp_path / "after", configs=(configs[0], configs[1]))
    fabric = load_bundle(after)
    assert fabric.ib is not None and sorted(sm.priority for sm in fabric.ib.sms) == [3, 15]
    assert run_checks(fabric) == []
