"""The NCCL environment a job on this fabric must run with, as a sourceable ``nccl.env``.

``NCCL_IB_TC`` is the full TOS byte of the intent's RoCE class; ``NCCL_IB_SL`` is written on InfiniBand
fabrics; ``NCCL_IB_GID_INDEX`` comes from the intent or, when the GIDs are known, from NCCL's own rule
(the lowest RoCE v2 IPv4 GID; reference host-nic-roce §3.1); ``NCCL_IB_HCA`` lists the rail NICs with
the ``=`` exact-match prefix so that ``mlx5_1`` never also selects ``mlx5_10``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from unifab.model import Gid
from unifab.parse.sched import nccl_env
from unifab.profile import QosProfile
from unifab.render import host_script as hs

__all__ = ["gid_index", "render"]


def gid_index(gids: Iterable[Gid]) -> int | None:
    """The GID NCCL selects on a RoCE port with an IPv4 address: the lowest RoCE v2, IPv4-mapped one."""
    found = [g.index for g in gids if g.version == "v2" and g.ipv4]
    return min(found) if found else None


def render(
    profile: QosProfile,
    hcas: Sequence[str],
    *,
    gid: int | None = None,
    sl: int | None = None,
    infiniband: bool = False,
) -> str:
    lines = [
        f"# NCCL environment for jobs on this fabric (QoS profile {profile.name}): rendered by `unifab render`.",
        "# Source it in the job script before launching the ranks; every rank must use the same values.",
        f"export NCCL_IB_TC={int(profile.nccl_ib_tc)}",
    ]
    if infiniband:
        lines.append(f"export NCCL_IB_SL={int(sl if sl is not None else profile.roce_priority)}")
    elif gid is not None:
        lines.append(f"export NCCL_IB_GID_INDEX={int(gid)}")
    if hcas:
        lines.append("export NCCL_IB_HCA==" + ",".join(f"{hs.rdma_dev(h)}:1" for h in hcas))
    text = "\n".join(lines) + "\n"
    nccl_env.parse_script(text, "<rendered nccl.env>")  # the renderer writes only what the job parser reads
    return text
