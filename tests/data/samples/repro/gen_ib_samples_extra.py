# Generates the IB samples the first corpus lacked (run from the repository root, ibsim-utils, infiniband-diags,
# opensm installed, user namespaces allowed for the ibstatus part):
#   .venv/bin/python tests/data/samples/repro/gen_ib_samples_extra.py tests/data/samples
# 1. saquery_nr_sim.txt: `saquery NR <lid>` for a CA, a leaf and a spine of ibsim_rail_fabric_faulty.net
#    (one record per query: ibsim's SA answers a multi-record query with its first record only).
# 2. perfquery_series_sim/<t>.txt: `perfquery <lid> <port>` + `perfquery -x <lid> <port>` of leaf-r1 port 2 and
#    of dgx-002 mlx5_1 port 1 at three moments, the counters set through ibsim's PerformanceSet between them
#    (a rise, 16/8-bit saturation, then `perfquery -R` and a small rise). <t> is a unix time chosen by the script.
# 3. ibstatus_h100_ndr.txt: the real /usr/sbin/ibstatus run over the real H100 sysfs copy
#    samples/host/sysfs_class_infiniband_h100, bind-mounted on /sys/class/infiniband in a user+mount namespace.
import pathlib
import subprocess
import sys

sys.path.insert(0, "tests/support")
from ibsim import ibsim_fabric  # noqa: E402

out = pathlib.Path(sys.argv[1])
net = (out / "ib" / "ibsim_rail_fabric_faulty.net").read_text()
work = pathlib.Path("/dev/shm/unifab-ib-samples")
SETS = [
    {"S-leaf-r1": {"SymbolErrorCounter": 120, "LinkDownedCounter": 3, "PortXmitWait": 1000, "PortXmitData": 400000},
     "H-dgx002-mlx5_1": {"PortRcvErrors": 7, "LinkErrorRecoveryCounter": 250, "PortXmitData": 800000}},
    {"S-leaf-r1": {"SymbolErrorCounter": 65535, "LinkDownedCounter": 9, "PortXmitWait": 901000,
                   "PortXmitData": 1300000},
     "H-dgx002-mlx5_1": {"PortRcvErrors": 19, "LinkErrorRecoveryCounter": 255, "PortXmitData": 1900000}},
    "reset",
]
PORTS = {"S-leaf-r1": 2, "H-dgx002-mlx5_1": 1}


def lid_of(sim, desc):
    for line in sim.run(["ibswitches"]).splitlines() + sim.run(["ibhosts"]).splitlines():
        if f'"{desc}"' in line and " lid " in line:
            return int(line.split(" lid ")[1].split()[0])
    return None


with ibsim_fabric(work, net, attach="H-dgx001-mlx5_0") as sim:
    sim.sweep()
    sim.start_sm()
    records = [sim.run(["saquery", "NR", str(lid)]) for lid in (1, 11, 16)]
    (out / "ib" / "saquery_nr_sim.txt").write_text("".join(records))
    topo = sim.run(["ibnetdiscover"])
    (out / "ib" / "perfquery_series_sim").mkdir(exist_ok=True)
    (out / "ib" / "ibnetdiscover_sim_rail_series.txt").write_text(topo)
    lids = {}
    for line in topo.splitlines():  # CA lids from the switch port lines: '"dgx-002 mlx5_1" lid 22 4xHDR'
        for node, desc in (("H-dgx002-mlx5_1", '"dgx-002 mlx5_1"'),):
            if desc in line and " lid " in line.split(desc)[1]:
                lids[node] = int(line.split(desc)[1].split(" lid ")[1].split()[0])
    for sw in ("S-leaf-r1",):
        for line in topo.splitlines():
            if line.startswith("Switch") and "ib-leaf-r1:" in line:
                lids[sw] = int(line.split(" lid ")[1].split()[0])
    for i, step in enumerate(SETS):
        if step == "reset":
            for node, port in PORTS.items():
                sim.run(["perfquery", "-R", str(lids[node]), str(port)])
            sim.console('PerformanceSet "S-leaf-r1"[2] PortCounters.SymbolErrorCounter=4')
            sim.console('PerformanceSet "S-leaf-r1"[2] PortCounters.PortXmitWait=500')
        else:
            for node, values in step.items():
                for name, value in values.items():
                    sim.console(f'PerformanceSet "{node}"[{PORTS[node]}] PortCounters.{name}={value}')
                    if name == "PortXmitData":  # ibsim keeps the 64-bit copy apart: set it too
                        sim.console(f'PerformanceSet "{node}"[{PORTS[node]}] PortCountersExtended.{name}={value}')
        text = ""
        for node, port in PORTS.items():
            text += sim.run(["perfquery", str(lids[node]), str(port)])
            text += sim.run(["perfquery", "-x", str(lids[node]), str(port)])
        (out / "ib" / "perfquery_series_sim" / f"{1764547200 + 60 * i}.txt").write_text(text)

sysfs = out / "host" / "sysfs_class_infiniband_h100"
script = f"mount -t tmpfs none /sys/class && mkdir /sys/class/infiniband && mount --bind {sysfs.resolve()} " \
         "/sys/class/infiniband && /usr/sbin/ibstatus"
text = subprocess.run(["unshare", "-rm", "sh", "-c", script], check=True, capture_output=True, text=True).stdout
(out / "ib" / "ibstatus_h100_ndr.txt").write_text(text)
