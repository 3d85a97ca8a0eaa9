"""Round trip: for generated intents and small twins (SONiC, EOS and NVUE switches; ConnectX and Broadcom
NICs), render -> preview bundle -> load_bundle -> run_checks gives no finding, and reading the rendered
files gives back the intent."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.fabric_plan import plan, write_tree
from unifab.intent import Device, parse_intent, resolve
from unifab.intent_presets import percent_shares
from unifab.twin.generate import generate


@st.composite
def intents(draw: st.DrawFn) -> dict[str, Any]:
    roce_dscp, cnp_dscp = draw(st.lists(st.integers(0, 63), min_size=2, max_size=2, unique=True))
    roce_prio, cnp_prio = draw(st.lists(st.integers(0, 7), min_size=2, max_size=2, unique=True))
    others = draw(st.sets(st.integers(0, 7).filter(lambda p: p not in (roce_prio, cnp_prio)), max_size=1))
    order = draw(st.permutations(list(range(8))))
    p2tc = dict(enumerate(order))
    roce_q, cnp_q = p2tc[roce_prio], p2tc[cnp_prio]
    ets_tcs = sorted({roce_q, *draw(st.sets(st.integers(0, 7).filter(lambda t: t != cnp_q), max_size=2))})
    shares = percent_shares([draw(st.integers(1, 20)) for _ in ets_tcs])
    ets = [{"tc": tc, "tsa": "ets", "bw_percent": bw} for tc, bw in zip(ets_tcs, shares, strict=True)]
    ets.append({"tc": cnp_q, "tsa": "strict"})
    low = draw(st.integers(10_000, 2_000_000))
    host_mtu = draw(st.sampled_from([1500, 4200, 9000]))
    qos: dict[str, Any] = {
        "roce": {"dscp": roce_dscp, "priority": roce_prio},
        "cnp": {"dscp": cnp_dscp, "priority": cnp_prio},
        "lossless_priorities": sorted({roce_prio, *others}),
        "priority_to_tc": p2tc,
        "dscp_to_priority": draw(st.dictionaries(st.integers(0, 63), st.integers(0, 7), max_size=8)),
        "ets": ets,
        "ecn": [
            {
                "queue": roce_q,
                "min_bytes": low,
                "max_bytes": draw(st.integers(low + 1, 10_000_000)),
                "probability": draw(st.integers(1, 100)),
            }
        ],
        "dcqcn": {"rpg_ai_rate": draw(st.integers(1, 100)), "rpg_time_reset": draw(st.integers(1, 1000))},
        "mtu": {"host": host_mtu, "switch": draw(st.integers(max(host_mtu, 9100), 9214))},
        "pfc_watchdog": draw(
            st.sampled_from(
                [
                    {"detection_ms": 1000, "restoration_ms": 2000, "action": "forward"},
                    {"detection_ms": 200, "restoration_ms": 200, "action": "drop"},
                    {"detection_ms": 400, "restoration_ms": 800, "action": "drop"},
                ]
            )
        ),
        "nccl": {"traffic_class": (roce_dscp << 2) | draw(st.sampled_from([0, 2]))},
    }
    return {"version": 1, "preset": "nvidia-spectrum-x", "qos": qos}


@pytest.fixture(
    scope="module",
    params=[("sonic", "mlx5"), ("eos", "mixed"), ("nvue", "mixed")],
    ids=["sonic-mlx5", "eos-mixed-nics", "nvue-mixed-nics"],
)
def twin(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """64 GPUs; with mixed NICs, hosts alternate ConnectX (MLNX_OFED / in-tree driver) and Broadcom Thor."""
    switch_os, vendor = request.param
    out = tmp_path_factory.mktemp(f"rt-{switch_os}") / "b"
    generate(out, gpus=64, switch_os=switch_os, nic_vendor=vendor, nic_driver="mixed")
    return out


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=intents())
def test_rendered_fabric_checks_clean_and_reads_back_the_intent(
    doc: dict[str, Any], twin: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    intent = parse_intent(yaml.safe_dump(doc))
    fp = plan(intent, load_bundle(twin), twin)
    assert [d.error for d in fp.devices if d.error] == []
    out = tmp_path_factory.mktemp("preview") / "b"
    write_tree(out, fp.preview_files(), copy_from=twin)
    fixed = load_bundle(out)
    assert [f.message for f in run_checks(fixed)] == []

    p = resolve(intent, Device("gpu001", "host"))
    for nic in (n for h in ("gpu001", "gpu002", "gpu003") for n in fixed.hosts[h].nics.values()):
        q = nic.qos
        assert q is not None and nic.mtu == p.host_mtu
        assert q.pfc_enabled == p.lossless_priorities and q.prio_tc == dict(p.priority_to_tc)
        assert (q.cnp_dscp, q.cnp_prio, q.roce_tos) == (p.cnp_dscp, p.cnp_priority, p.nccl_ib_tc)
        assert q.trust == "dscp" and q.dscp2prio[p.roce_dscp] == p.roce_priority
        assert {(e.tc, e.bw_percent or 0) for e in q.ets if e.tsa == "ets"} >= {
            (e.tc, e.bw_percent) for e in p.ets if e.tsa == "ets"
        }
        if nic.driver != "bnxt_en":  # niccli shows only the APP entries it was given
            assert q.dscp2prio == dict(p.dscp_to_priority)
    ecn = next(e for e in p.ecn if e.queue == p.roce_queue)
    for switch in fixed.switches.values():
        for port in switch.ports.values():
            if port.qos is None or not port.qos.pfc_enabled:
                continue
            assert port.mtu == p.switch_mtu
            assert port.qos.pfc_enabled == p.lossless_priorities
            # switches classify into the priority's TC (what PFC pauses), queued as priority_to_tc says
            assert port.qos.dscp_to_tc[p.roce_dscp] == p.roce_priority
            assert port.qos.tc_to_queue.get(p.roce_priority, p.roce_priority) == p.roce_queue
            queue = port.qos.queues[p.roce_queue]
            assert (queue.ecn_min_bytes, queue.ecn_max_bytes) == (ecn.min_bytes, ecn.max_bytes)
    shutil.rmtree(out.parent)  # this example passed: drop its preview bundle (a failing example's stays)
