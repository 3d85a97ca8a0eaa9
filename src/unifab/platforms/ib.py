"""InfiniBand switches, as ``ibnetdiscover`` sees them (``ib/ibnetdiscover.txt``): ports are numbers.

An IB switch has no configuration file in the bundle and no RoCE QoS; its commands are the
infiniband-diags run from a host on the fabric, addressed by the switch's node description.
"""

from __future__ import annotations

import re

from unifab.platforms.base import Platform

__all__ = ["PLATFORM"]

PLATFORM = Platform(
    name="ib",
    title="InfiniBand",
    config_file=None,
    lldp_file=None,
    port_name=lambda index: str(index + 1),
    port_pattern=re.compile(r"[0-9]{1,3}"),
)
