"""Every file the twin writes is accepted by the same parser that reads real device output."""

from __future__ import annotations

from pathlib import Path

from unifab.parse.host import (
    ethtool_module,
    ethtool_pause,
    ethtool_stats,
    hw_counters,
    ibdev2netdev,
    ibv_devinfo,
    lldpcli,
    mlnx_qos,
    nccl_topo,
    nvidia_smi_topo,
    roce_tos,
    show_gids,
    sysfs_ecn,
    traffic_class,
    xid,
)
from unifab.parse.plan import cabling
from unifab.parse.sched import slurm_jobs
from unifab.parse.sched.nccl_env import parse_env
from unifab.parse.switch import sonic_config_db, sonic_lldp, sonic_qos


def test_every_file_parses(twin_bundle: Path) -> None:
    seen: dict[str, int] = {}
    for path in sorted(twin_bundle.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(twin_bundle).as_posix()
        text = path.read_text()
        if rel.endswith("/cmd/mlnx_qos/" + path.name):
            kind, record = "mlnx_qos", mlnx_qos.parse(text, rel)
            assert record.trust == "dscp"
        elif rel.endswith("cmd/lldpcli.json"):
            kind, neighbors = "lldpcli", lldpcli.parse_json0(text, rel)
            assert len(neighbors) in (7, 8)  # the missing-cable scenario leaves one host a port short
        elif rel.endswith("cmd/ibdev2netdev.txt"):
            kind, _ = "ibdev2netdev", ibdev2netdev.parse(text, rel)
        elif rel.endswith("/traffic_class"):
            kind, tc = "traffic-class", traffic_class.parse(text, rel)
            assert tc.global_tclass in (None, 96, 106)
        elif "/ecn/" in rel:
            kind = "sysfs-ecn"
            sysfs_ecn.parse(f"{rel.split('/ecn/')[1]}: {text.strip()}", rel)
        elif rel.endswith("/mtu"):
            kind = "mtu"
            assert int(text) in (1500, 9000)
        elif rel.endswith("sonic/config_db.json"):
            kind, db = "sonic", sonic_config_db.parse(text, rel)
            assert db.shape == "nested"
            sonic_qos.resolve(db)
        elif rel.endswith("sonic/appl_db.json"):
            kind, lldp = "sonic-lldp", sonic_lldp.parse(text, rel)
            assert lldp, "every SONiC switch has neighbors"
        elif rel == "plan/cabling.csv":
            kind, _ = "cabling", cabling.parse(text, rel)
        elif rel == "truth.json":
            kind = "truth"
        elif "/cmd/ethtool-a/" in rel:
            kind, _ = "ethtool-a", ethtool_pause.parse(text, rel)
        elif "/cmd/ethtool-m/" in rel:
            kind, _ = "ethtool-m", ethtool_module.parse(text, rel)
        elif rel.endswith("cmd/dmesg.txt"):
            kind, log = "xid", xid.parse(text, rel)
            assert not log.events
        elif "/cmd/ethtool-S/" in rel:
            kind, _ = "ethtool-S", ethtool_stats.parse(text, rel)
        elif rel.endswith("cmd/show_gids.txt"):
            kind, gids = "show_gids", show_gids.parse(text, rel)
            assert len(gids) == 32
        elif rel.endswith("cmd/ibv_devinfo.txt"):
            kind, devices = "ibv_devinfo", ibv_devinfo.parse(text, rel)
            assert len(devices) == 8
        elif rel.endswith("cmd/nvidia-smi-topo-m.txt"):
            kind, _ = "nvidia-smi-topo", nvidia_smi_topo.parse(text, rel)
        elif rel.endswith("cmd/nccl-topo.xml"):
            kind, _ = "nccl-topo", nccl_topo.parse(text, rel)
        elif "/sys/class/infiniband/" in rel and "/ports/" in rel:
            kind = "hw-counters"
            hw_counters.parse_tree({"ports/" + rel.split("/ports/", 1)[1]: text}, rel)
        elif "/sys/kernel/config/rdma_cm/" in rel:
            kind = "roce-tos"
            roce_tos.parse_tree({"ports/" + rel.split("/ports/", 1)[1]: text}, rel)
        elif rel.startswith("scheduler/"):
            kind = "scheduler"
            (slurm_jobs.parse if rel.endswith(".json") else parse_env)(text, rel)
        else:
            raise AssertionError(f"twin wrote a file no parser reads: {rel}")
        seen[kind] = seen.get(kind, 0) + 1
    assert seen["mlnx_qos"] == 128 and seen["sonic"] == 16 and seen["lldpcli"] == 16
