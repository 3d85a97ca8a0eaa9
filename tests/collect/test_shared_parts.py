"""A device's equal small records are one object (unifab.collect.shared_parts), and nothing can tell the difference."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.checks.runner import run_checks
from unifab.collect import bundle as bundle_module
from unifab.collect import host as host_module
from unifab.collect.bundle import load_bundle
from unifab.jsonify import dumps
from unifab.model import Fabric
from unifab.report.findings_json import document


def _findings(fabric: Fabric) -> str:
    return dumps(document("twin", run_checks(fabric)))


def test_a_switch_s_equal_queues_headroom_and_watchdogs_are_one_object(twin_bundle: Path) -> None:
    fabric = load_bundle(twin_bundle, workers=1)
    sonic = [s for s in fabric.switches.values() if s.os == "sonic"]
    assert sonic, "the twin has SONiC switches"
    for switch in sonic:
        values = [q for p in switch.ports.values() if p.qos for q in p.qos.queues.values()]
        values += [h for p in switch.ports.values() if p.qos for h in p.qos.headroom.values()]
        values += [p.qos.pfcwd for p in switch.ports.values() if p.qos and p.qos.pfcwd is not None]
        distinct = {v: v for v in values}
        assert len(values) > len(distinct), f"{switch.name}: nothing repeats, the test proves nothing"
        assert all(v is distinct[v] for v in values), f"{switch.name}: equal records that are separate objects"


def test_equal_maps_are_one_dict_and_maps_in_another_order_stay_apart(twin_bundle: Path) -> None:
    fabric = load_bundle(twin_bundle, workers=1)
    for switch in fabric.switches.values():
        by_items: dict[tuple[object, ...], dict[int, int]] = {}
        for port in switch.ports.values():
            if port.qos is None:
                continue
            for mapping in (port.qos.dscp_to_tc, port.qos.tc_to_queue):
                first = by_items.setdefault(tuple(mapping.items()), mapping)
                assert first is mapping, f"{port.id}: an equal map that is a separate dict"
    for host in fabric.hosts.values():
        maps = [n.qos.dscp2prio for n in host.nics.values() if n.qos and n.qos.dscp2prio]
        assert len(maps) > 1 and all(m is maps[0] for m in maps), f"{host.name}: equal NIC maps not shared"


def test_a_dict_is_shared_only_with_one_that_iterates_the_same(twin_bundle: Path) -> None:
    from dataclasses import replace

    from unifab.collect.shared_parts import share_switch_parts

    fabric = load_bundle(twin_bundle, workers=1)
    switch = next(s for s in fabric.switches.values() if s.os == "sonic")
    names = [n for n, p in switch.ports.items() if p.qos is not None and len(p.qos.dscp_to_tc) > 1][:2]
    first, second = (switch.ports[n] for n in names)
    assert first.qos is not None and second.qos is not None
    backwards = dict(reversed(list(first.qos.dscp_to_tc.items())))
    ports = {
        names[0]: replace(first, qos=replace(first.qos, dscp_to_tc=dict(first.qos.dscp_to_tc))),
        names[1]: replace(second, qos=replace(second.qos, dscp_to_tc=backwards)),
    }
    shared = share_switch_parts(replace(switch, ports=ports))
    assert shared is not None
    one, other = (shared.ports[n].qos for n in names)
    assert one is not None and other is not None
    assert one.dscp_to_tc == other.dscp_to_tc and one.dscp_to_tc is not other.dscp_to_tc
    assert list(other.dscp_to_tc) == list(backwards), "the order a map iterates in is kept"


def test_a_host_s_equal_ets_classes_and_pcie_links_are_one_object_and_counter_names_one_string(
    twin_bundle: Path,
) -> None:
    fabric = load_bundle(twin_bundle, workers=1)
    names: dict[str, str] = {}
    for host in fabric.hosts.values():
        ets = [c for n in host.nics.values() if n.qos for c in n.qos.ets]
        links = [n.pcie for n in host.nics.values() if n.pcie] + [g.pcie for g in host.gpus.values() if g.pcie]
        for values in (ets, links):
            distinct = {v: v for v in values}
            assert len(values) > len(distinct), f"{host.name}: nothing repeats, the test proves nothing"
            assert all(v is distinct[v] for v in values), f"{host.name}: equal records that are separate objects"
        for nic in host.nics.values():
            for name in nic.counters:
                assert names.setdefault(name, name) is name, f"{nic.id}: counter name {name!r} not interned"
    assert len(names) > 20


def test_sharing_changes_no_finding(twin_bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = _findings(load_bundle(twin_bundle, workers=1))
    monkeypatch.setattr(host_module, "share_host_parts", lambda host: host)
    monkeypatch.setattr(bundle_module, "share_switch_parts", lambda switch: switch)
    separate = load_bundle(twin_bundle, workers=1)
    some_switch = next(s for s in separate.switches.values() if s.os == "sonic")
    queues = [q for p in some_switch.ports.values() if p.qos for q in p.qos.queues.values()]
    assert len({id(q) for q in queues}) == len(queues), "the unshared read shares: the comparison proves nothing"
    assert _findings(separate) == shared
