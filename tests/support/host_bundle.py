"""Writing a one-host bundle from real samples (plus the few glue files a host directory has), read back with the
bundle reader: the host checks' fixtures go through unifab's own parsers."""

from __future__ import annotations

from pathlib import Path

from unifab import layout
from unifab.collect.bundle import load_bundle
from unifab.model import Fabric
from unifab.parse.host import nccl_topo

__all__ = ["write_host"]


def write_host(
    root: Path,
    files: dict[str, str],
    nics: dict[str, tuple[str, str]] | None = None,
    gpus: dict[int, tuple[str, str]] | None = None,
    host: str = "h1",
) -> Fabric:
    """A bundle with host ``host``: ``files`` by layout path, RDMA devices ``{rdma: (netdev, bdf)}`` (ibdev2netdev
    and sysfs ``device/uevent``), GPUs ``{index: (bdf, rdma)}`` written as an NCCL topology whose GPU and NIC
    share a PCIe switch (so the GPU's closest NIC is ``rdma``, PIX)."""
    base = root / "hosts" / host
    for rel, text in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    nics = nics or {}
    if nics:
        rows = "".join(f"{dev} port 1 ==> {netdev} (Up)\n" for dev, (netdev, _) in sorted(nics.items()))
        (base / layout.IBDEV2NETDEV).parent.mkdir(parents=True, exist_ok=True)
        (base / layout.IBDEV2NETDEV).write_text(rows)
        for dev, (_, bdf) in nics.items():
            uevent = base / layout.SYS_IB / dev / "device" / "uevent"
            uevent.parent.mkdir(parents=True, exist_ok=True)
            uevent.write_text(f"DRIVER=mlx5_core\nPCI_SLOT_NAME={bdf}\n")
    if gpus:
        bdf_of = {dev: bdf for dev, (_, bdf) in nics.items()}
        switch = {dev: f"0000:{0x10 + i:02x}:00.0" for i, dev in enumerate(sorted(nics))}
        topo = nccl_topo.NcclTopo(
            1,
            (nccl_topo.TopoCpu(0, None, "x86_64", "GenuineIntel"),),
            tuple(
                nccl_topo.TopoGpu(bdf, i, i, 90, True, "0x030200", 0, switch[dev], (switch[dev],))
                for i, (bdf, dev) in sorted(gpus.items())
            ),
            tuple(
                nccl_topo.TopoNic(
                    dev, i, bdf_of[dev], 400_000, 1, None, True, None, "0x020000", 0, switch[dev], (switch[dev],)
                )
                for i, dev in enumerate(sorted(nics))
            ),
        )
        (base / layout.NCCL_TOPO).write_text(nccl_topo.dump(topo))
    return load_bundle(root)
