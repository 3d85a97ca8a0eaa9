"""ECN-absent and device-down detectors: fire on the fault, stay quiet on congestion ECN handles and short gaps."""

from __future__ import annotations

from unifab.health.detect import ECN_ABSENT, NODE_DOWN, SWITCH_DOWN, Thresholds
from unifab.health.detect_state import detect_state, device_down, ecn_absent
from unifab.health.series import METRICS, Series, SeriesStore
from unifab.model import Endpoint

STEP = 30.0
N = 121  # an hour of 30 s samples


def times(n: int = N) -> list[float]:
    return [1000.0 + i * STEP for i in range(n)]


def cumulative(increments: list[float], start: float = 0.0) -> list[float]:
    out = [start]
    for inc in increments:
        out.append(out[-1] + inc)
    return out


def make(metric: str, entity: str, end: Endpoint, values: list[float], ts: list[float] | None = None) -> Series:
    spec = METRICS[metric]
    qualifier = "3" if spec.qualifier else ""
    return Series(entity, end, spec.counter, qualifier, spec, metric, list(ts or times(len(values))), list(values))


def store(*series: Series) -> SeriesStore:
    return SeriesStore({s.key: s for s in series})


NIC, END = "nic:gpu001:mlx5_0", Endpoint("gpu001", "eth0")


def paused(share: float, first: int = 20, count: int = 10) -> Series:
    inc = [share * STEP * 1e6 if first <= i < first + count else 0.01 * STEP * 1e6 for i in range(N - 1)]
    return make("unifab_nic_rx_pause_duration_us_total", NIC, END, cumulative(inc))


def cnps(active: bool) -> Series:
    inc = [50.0 if active and 20 <= i < 30 else 0.0 for i in range(N - 1)]
    return make("unifab_rdma_rp_cnp_handled_total", NIC, END, cumulative(inc, 1000.0))


def test_pauses_without_any_ecn_mark_or_cnp_is_ecn_absent() -> None:
    [symptom] = ecn_absent(store(paused(0.3), cnps(active=False)), Thresholds())
    assert symptom.detector == ECN_ABSENT and symptom.entity == NIC
    assert symptom.start == 1000 + 20 * STEP and symptom.intervals == 10
    assert symptom.counter == "pause_rx_us{3}" and "cnp_handled" in symptom.notes[0]


def test_congestion_that_ecn_handles_is_not_an_incident() -> None:
    assert ecn_absent(store(paused(0.3), cnps(active=True)), Thresholds()) == []


def test_a_little_pause_or_a_short_burst_is_not_an_incident() -> None:
    assert ecn_absent(store(paused(0.05), cnps(active=False)), Thresholds()) == []
    assert ecn_absent(store(paused(0.5, count=2), cnps(active=False)), Thresholds()) == []


def test_a_nic_that_exports_no_congestion_counter_is_not_judged() -> None:
    assert ecn_absent(store(paused(0.5)), Thresholds()) == []


def carrier(host: str, netdev: str, n: int = N, rdma: str = "mlx5_0") -> Series:
    ts = times(N)[:n]
    return make("node_network_carrier_changes_total", f"nic:{host}:{rdma}", Endpoint(host, netdev), [4.0] * n, ts)


def port(switch: str, name: str, n: int = N) -> Series:
    return make("unifab_port_link_down_total", f"port:{switch}:{name}", Endpoint(switch, name), [1.0] * n, times(N)[:n])


def test_a_host_whose_series_stop_is_down_from_its_first_missed_sample() -> None:
    found = device_down(
        store(carrier("gpu001", "eth0", 40), carrier("gpu002", "eth0"), port("leaf0", "x")), Thresholds()
    )
    [symptom] = found
    assert (symptom.detector, symptom.entity) == (NODE_DOWN, "host:gpu001")
    assert symptom.start == 1000 + 40 * STEP and "stop" in symptom.notes[0]


def test_a_switch_whose_series_stop_is_switch_down() -> None:
    [symptom] = device_down(store(carrier("gpu001", "eth0"), port("leaf0", "Ethernet0", 70)), Thresholds())
    assert (symptom.detector, symptom.entity) == (SWITCH_DOWN, "switch:leaf0") and symptom.start == 1000 + 70 * STEP


def test_missed_scrapes_and_a_lone_device_are_not_down() -> None:
    gappy = carrier("gpu001", "eth0")
    del gappy.times[50:53], gappy.values[50:53]  # 90 s without samples: a gap, not a dead host
    assert device_down(store(gappy, carrier("gpu002", "eth0")), Thresholds()) == []
    assert device_down(store(carrier("gpu001", "eth0", 40)), Thresholds()) == []  # nobody else to compare with


def test_a_long_silence_that_ends_is_reported_with_its_end() -> None:
    back = carrier("gpu001", "eth0")
    del back.times[30:60], back.values[30:60]
    [symptom] = device_down(store(back, carrier("gpu002", "eth0")), Thresholds())
    assert symptom.start == 1000 + 30 * STEP and symptom.end == 1000 + 60 * STEP and "restarted" in symptom.notes[0]


def test_a_nic_whose_series_stop_while_its_host_reports_is_down() -> None:
    dead = carrier("gpu001", "eth1", 50, rdma="mlx5_1")
    [symptom] = device_down(store(carrier("gpu001", "eth0"), dead, carrier("gpu002", "eth0")), Thresholds())
    assert (symptom.detector, symptom.entity, symptom.start) == (NODE_DOWN, "nic:gpu001:mlx5_1", 1000 + 50 * STEP)


def gauge(metric: str, entity: str, end: Endpoint, down_from: int | None) -> Series:
    values = [0.0 if down_from is not None and i >= down_from else 1.0 for i in range(N)]
    return make(metric, entity, end, values)


def test_a_link_state_that_falls_and_stays_down_is_a_symptom_of_that_end() -> None:
    nic = gauge("node_network_up", NIC, END, 30)
    sw = gauge("unifab_port_oper_up", "port:leaf0:Ethernet0", Endpoint("leaf0", "Ethernet0"), 90)
    found = {(s.detector, s.entity, s.start) for s in detect_state(store(nic, sw))}
    assert found == {(NODE_DOWN, NIC, 1000 + 30 * STEP), (SWITCH_DOWN, "port:leaf0:Ethernet0", 1000 + 90 * STEP)}


def test_a_link_down_briefly_or_down_all_along_is_not_a_symptom() -> None:
    brief = gauge("node_network_up", NIC, END, N - 3)  # down for the last minute only
    always = gauge("unifab_port_oper_up", "port:leaf0:Ethernet0", Endpoint("leaf0", "Ethernet0"), 0)
    back = gauge("unifab_port_oper_up", "port:leaf0:Ethernet8", Endpoint("leaf0", "Ethernet8"), 30)
    back.values[-1] = 1.0
    assert detect_state(store(brief, always, back)) == []
