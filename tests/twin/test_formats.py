"""Every file the twin writes is accepted by the same parser that reads real device output."""

from __future__ import annotations

from pathlib import Path

from unifab.parse.host import ibdev2netdev, lldpcli, mlnx_qos, sysfs_ecn, traffic_class
from unifab.parse.plan import cabling
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
            assert len(neighbors) == 8
        elif rel.endswith("cmd/ibdev2netdev.txt"):
            kind, _ = "ibdev2netdev", ibdev2netdev.parse(text, rel)
        elif rel.endswith("/traffic_class"):
            kind, tc = "traffic-class", traffic_class.parse(text, rel)
            assert tc.global_tclass in (96, 106)
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
        else:
            raise AssertionError(f"twin wrote a file no parser reads: {rel}")
        seen[kind] = seen.get(kind, 0) + 1
    assert seen["mlnx_qos"] == 128 and seen["sonic"] == 16 and seen["lldpcli"] == 16
