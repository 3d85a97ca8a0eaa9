"""Every file the twin writes is accepted by the same parser that reads real device output."""

from __future__ import annotations

from pathlib import Path

from unifab.collect.host import parse_word
from unifab.parse.host import (
    bnxt_qos,
    cc_params,
    ethtool_module,
    ethtool_pause,
    ethtool_stats,
    hw_counters,
    ibdev2netdev,
    ibv_devinfo,
    ip_link,
    lldpcli,
    lsmod,
    lspci,
    mlnx_qos,
    nccl_topo,
    nvidia_smi_q,
    nvidia_smi_topo,
    rdma_statistic,
    roce_tos,
    show_gids,
    sysfs_ecn,
    traffic_class,
    xid,
)
from unifab.parse.plan import cabling
from unifab.parse.sched import slurm_jobs
from unifab.parse.sched.nccl_env import parse_env
from unifab.parse.switch import nvue_system, sonic_config_db, sonic_lldp, sonic_qos, sonic_version
from unifab.twin.generate import generate


def test_every_file_parses(twin_bundle: Path) -> None:
    seen = parse_every_file(twin_bundle)
    assert seen["mlnx_qos"] == 128 and seen["sonic"] == 15 and seen["lldpcli"] == 16  # leaf-uncollected: one less
    assert seen["lspci"] == seen["nvidia-smi-q"] == seen["rdma-statistic"] == seen["module-version"] == 16


def test_every_file_parses_with_every_nic_kind(tmp_path: Path) -> None:
    """mlx5 on OFED and upstream, and Broadcom hosts (see twin.nic_variants): their extra files parse too."""
    generate(tmp_path / "b", gpus=64, nic_vendor="mixed", nic_driver="mixed")  # 2 OFED, 2 upstream, 4 Broadcom
    seen = parse_every_file(tmp_path / "b")
    assert seen["mlnx_qos"] == 32 and seen["bnxt-qos"] == 32 and seen["module-version"] == 6
    assert seen["cc-params"] == 16 * 20 and seen["bnxt-cc"] == 32 * 8  # 20 debugfs files, 8 configfs files per NIC


def parse_every_file(root: Path) -> dict[str, int]:
    """Parse every file of the bundle at ``root`` with its parser; how many files of each kind."""
    seen: dict[str, int] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
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
        elif rel.endswith("sonic/show-version.txt"):
            kind = "sonic-version"
            assert sonic_version.parse(text, rel).software_version
        elif rel.endswith("nvue/nv-show-system.txt"):
            kind = "nvue-system"
            assert nvue_system.parse(text, rel).build
        elif rel.endswith("sonic/appl_db.json"):
            kind, lldp = "sonic-lldp", sonic_lldp.parse(text, rel)
            assert lldp, "every SONiC switch has neighbors"
        elif rel == "plan/cabling.csv":
            kind, _ = "cabling", cabling.parse(text, rel)
        elif rel == "truth.json":
            kind = "truth"
        elif rel == "fabric.yaml":
            from unifab.intent import parse_intent

            kind, _ = "intent", parse_intent(text, rel)
        elif "/cmd/ethtool-a/" in rel:
            kind, _ = "ethtool-a", ethtool_pause.parse(text, rel)
        elif rel.endswith("cmd/ip-d-link.txt"):
            kind, links = "ip-link", ip_link.parse(text, rel)
            assert set(ip_link.max_mtus(text, rel).values()) <= {9978, 9500} and len(links) > 1
        elif "/cmd/ethtool-m/" in rel:
            kind, _ = "ethtool-m", ethtool_module.parse(text, rel)
        elif rel.endswith("cmd/dmesg.txt"):
            kind, log = "xid", xid.parse(text, rel)
            assert not log.events
        elif "/cmd/ethtool-S/" in rel:
            kind, _ = "ethtool-S", ethtool_stats.parse(text, rel)
        elif rel.endswith("cmd/show_gids.txt"):
            kind, gids = "show_gids", show_gids.parse(text, rel)
            assert len(gids) in (30, 32)  # the gid-index scenario leaves one device its 2 link-local GIDs
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
        elif rel.endswith("cmd/lsmod.txt"):
            kind, mods = "lsmod", lsmod.parse(text, rel)
            assert mods.loaded("mlx5_core") or mods.loaded("bnxt_en")
        elif rel.endswith("cmd/lspci-vvv.txt"):
            kind, pci = "lspci", lspci.parse(text, rel)
            assert len(pci.devices) == 32  # GPUs, NICs and the PCIe switch ports above them
        elif rel.endswith("cmd/nvidia-smi-q.xml"):
            kind, smi = "nvidia-smi-q", nvidia_smi_q.parse(text, rel)
            assert len(smi.gpus) == 8
        elif rel.endswith("cmd/rdma-statistic.txt"):
            kind, stat = "rdma-statistic", rdma_statistic.parse(text, rel)
            assert len(stat.links) == 8
        elif "/sys/module/" in rel and rel.endswith("/version"):
            kind, _ = "module-version", parse_word(text, rel)
        elif "/cmd/bnxt-qos/" in rel:
            kind, _ = "bnxt-qos", bnxt_qos.parse(text, rel)
        elif "/sys/kernel/config/bnxt_re/" in rel:
            kind = "bnxt-cc"
            bnxt_qos.parse_tree({"ports/" + rel.split("/ports/", 1)[1]: text}, rel)
        elif "/sys/kernel/debug/mlx5/" in rel and "/cc_params/" in rel:
            kind = "cc-params"
            cc_params.parse_tree({rel.rsplit("/", 1)[1]: text}, rel)
        elif rel.startswith("scheduler/"):
            kind = "scheduler"
            (slurm_jobs.parse if rel.endswith(".json") else parse_env)(text, rel)
        else:
            raise AssertionError(f"twin wrote a file no parser reads: {rel}")
        seen[kind] = seen.get(kind, 0) + 1
    return seen
