"""A host's ``unifab-qos.sh``: each NIC's section by its driver, in one script (see host_script)."""

from __future__ import annotations

from collections.abc import Sequence

from unifab.errors import UsageError
from unifab.profile import QosProfile
from unifab.render import host_script as hs
from unifab.render import nic_bnxt, nic_mlx5
from unifab.render.host_script import NicTarget

__all__ = ["SECTIONS", "render_host_script"]

SECTIONS = {"mlx5": (nic_mlx5.LIBRARY, nic_mlx5.section), "bnxt": (nic_bnxt.LIBRARY, nic_bnxt.section)}


def render_host_script(host: str, nics: Sequence[NicTarget], profile: QosProfile) -> str:
    drivers = sorted({n.driver for n in nics})
    unknown = [d for d in drivers if d not in SECTIONS]
    if unknown:
        raise UsageError(f"{host}: no NIC renderer for driver(s) {', '.join(unknown)}; known: mlx5, bnxt")
    libraries = [SECTIONS[d][0] for d in drivers]
    if "bnxt" in drivers and "mlx5" not in drivers:
        libraries.insert(0, nic_mlx5.LIBRARY)  # pause_off and friends live there
    bodies = [SECTIONS[n.driver][1](n, profile) for n in sorted(nics, key=lambda n: n.netdev)]
    return hs.script(host, profile.name, bodies, libraries)
