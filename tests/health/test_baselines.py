"""The benchmark's baselines: per-port alert rules fire on any increment (and name the port), 007 votes failing
flows onto their paths and blames the link most of them cross."""

from __future__ import annotations

from unifab.health.baselines import VOTE_THRESHOLD, _Paths, per_port_alerts, vote_007
from unifab.health.events import EventStore, XidRecord
from unifab.health.series import METRICS, Series, SeriesStore
from unifab.model import Endpoint, Fabric, Gpu, Host, Job, Link, Nic, Port, Switch
from unifab.parse.host.xid import XidEvent

STEP = 30.0
T0 = 1000.0


def put(store: SeriesStore, entity: str, end: Endpoint, metric: str, values: list[float], n: int = 20) -> None:
    spec = METRICS[metric]
    values = values + [values[-1]] * (n - len(values))
    times = [T0 + i * STEP for i in range(len(values))]
    s = Series(entity, end, spec.counter, "3" if spec.qualifier else "", spec, metric, times, values)
    store.series[s.key] = s


def leaf_fabric(hosts: int = 4, leaves: int = 2) -> Fabric:
    """``hosts`` hosts x ``leaves`` rails (one leaf per rail), both leaves on one spine; one job on every host."""
    names = [f"gpu{h:03d}" for h in range(1, hosts + 1)]
    host = {
        n: Host(n, {f"eth{r}": Nic(n, f"eth{r}", f"mlx5_{r}", 9000, None) for r in range(leaves)}, gpus={0: Gpu(n, 0)})
        for n in names
    }
    switches = {
        f"leaf{r}": Switch(
            f"leaf{r}",
            "sonic",
            "x",
            {f"Ethernet{i}": Port(f"leaf{r}", f"Ethernet{i}", 9100, 400_000, "up", None) for i in range(hosts + 1)},
        )
        for r in range(leaves)
    }
    switches["spine1"] = Switch(
        "spine1",
        "sonic",
        "x",
        {f"Ethernet{r}": Port("spine1", f"Ethernet{r}", 9100, 400_000, "up", None) for r in range(leaves)},
    )
    links = [
        Link(Endpoint(n, f"eth{r}"), Endpoint(f"leaf{r}", f"Ethernet{i}"), frozenset({"lldp"}))
        for i, n in enumerate(names)
        for r in range(leaves)
    ]
    links += [
        Link(Endpoint(f"leaf{r}", f"Ethernet{hosts}"), Endpoint("spine1", f"Ethernet{r}"), frozenset({"lldp"}))
        for r in range(leaves)
    ]
    jobs = {"job:slurm:1": Job("job:slurm:1", "train", tuple(names))}
    return Fabric(hosts=host, switches=switches, links=links, jobs=jobs)


def test_per_port_rules_fire_on_any_increment_but_not_on_one_flap() -> None:
    fabric = leaf_fabric()
    store = SeriesStore()
    blip = [0.0] * 5 + [1.0]  # one CRC error: an alert rule on increase() > 0 fires
    put(store, "port:leaf0:Ethernet0", Endpoint("leaf0", "Ethernet0"), "unifab_port_in_errors_total", blip)
    once = [4.0] * 5 + [6.0]  # one flap (carrier_changes counts 2): no alert
    put(store, "nic:gpu002:mlx5_0", Endpoint("gpu002", "eth0"), "node_network_carrier_changes_total", once)
    twice = [4.0] * 5 + [6.0, 6.0, 8.0]  # two flaps within 5 minutes: an alert
    put(store, "nic:gpu003:mlx5_0", Endpoint("gpu003", "eth0"), "node_network_carrier_changes_total", twice)
    paused = [0.0, 0.0, 0.6 * STEP * 1e6]  # more than half of one interval sending pause
    put(store, "port:leaf1:Ethernet1", Endpoint("leaf1", "Ethernet1"), "unifab_port_tx_pause_duration_us_total", paused)
    down = [1.0] * 5 + [0.0] * 3  # link state 0 for a minute
    put(store, "port:leaf1:Ethernet2", Endpoint("leaf1", "Ethernet2"), "unifab_port_oper_up", down)
    put(store, "nic:gpu004:mlx5_1", Endpoint("gpu004", "eth1"), "node_network_up", [1.0] * 5, n=5)  # silent after
    event = XidEvent(1, "2026", "gpu001", "0000:9b:00.0", 13, None, None, "graphics exception")
    fabric.hosts["gpu001"] = Host(
        "gpu001", fabric.hosts["gpu001"].nics, gpus={0: Gpu("gpu001", 0, pci_bus_id="00000000:9B:00.0")}
    )
    events = EventStore(xids=[XidRecord("gpu001", event, T0 + 100, "k.log:1")])
    alerts = {a.root: a for a in per_port_alerts(fabric, store, events)}
    assert set(alerts) == {
        "port:leaf0:Ethernet0",
        "nic:gpu003:mlx5_0",
        "port:leaf1:Ethernet1",
        "port:leaf1:Ethernet2",
        "host:gpu004",
        "gpu:gpu001:0",  # an application Xid: the rule does not know the catalog
    }
    assert alerts["port:leaf0:Ethernet0"].time == T0 + 5 * STEP
    assert alerts["nic:gpu003:mlx5_0"].time == T0 + 7 * STEP
    assert alerts["port:leaf1:Ethernet2"].time == T0 + 7 * STEP  # fell at sample 5, 0 for 60 s at sample 7
    assert alerts["host:gpu004"].time >= T0 + 4 * STEP + 300


def test_paths_split_ecmp_hops_and_add_up_to_one_vote() -> None:
    fabric = leaf_fabric()
    paths = _Paths(fabric)
    nics = {n.id: n for h in fabric.hosts.values() for n in h.nics.values()}
    same = paths.hops(nics["nic:gpu001:mlx5_0"], nics["nic:gpu002:mlx5_0"])
    assert [share for _, share in same] == [0.5, 0.5]
    cross = paths.hops(nics["nic:gpu001:mlx5_0"], nics["nic:gpu002:mlx5_1"])
    assert len(cross) == 4 and abs(sum(share for _, share in cross) - 1.0) < 1e-9


def test_007_blames_the_link_every_failing_flow_crosses() -> None:
    fabric = leaf_fabric(hosts=5)
    store = SeriesStore()
    errors = [0.0, 0.0, 5.0, 9.0, 20.0]
    put(store, "nic:gpu003:mlx5_1", Endpoint("gpu003", "eth1"), "unifab_nic_rx_symbol_errors_total", errors)
    put(store, "nic:gpu001:mlx5_0", Endpoint("gpu001", "eth0"), "unifab_nic_rx_symbol_errors_total", [0.0] * 5)
    [blamed] = vote_007(fabric, store)
    link = next(lk for lk in fabric.links if lk.a == Endpoint("gpu003", "eth1") or lk.b == Endpoint("gpu003", "eth1"))
    assert blamed.root == link.id
    assert blamed.time == T0 + 2 * STEP + 30.0  # one epoch after the first loss
    assert "4 failing flows" in blamed.why  # its rail peers on the other 4 hosts


def test_007_needs_more_than_one_flow_to_tell_two_links_apart() -> None:
    fabric = leaf_fabric(hosts=2)  # one peer: the flow's two links get half a vote each
    store = SeriesStore()
    put(store, "nic:gpu001:mlx5_0", Endpoint("gpu001", "eth0"), "unifab_rdma_out_of_sequence_total", [0.0, 3.0])
    assert VOTE_THRESHOLD > 0.5
    assert vote_007(fabric, store) == []
