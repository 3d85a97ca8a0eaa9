"""SONiC: CONFIG_DB (``sonic/config_db.json``), LLDP from APPL_DB; live over the switch's Redis."""

from __future__ import annotations

import re

from unifab.platforms.base import Platform

__all__ = ["MAX_MTU", "PLATFORM"]

MAX_MTU = 9216  # PORT.mtu is uint16 68..9216 in SONiC's YANG (reference switch-qos §1, §2.4)

PLATFORM = Platform(
    name="sonic",
    title="SONiC",
    config_file="sonic/config_db.json",
    lldp_file="sonic/appl_db.json",
    port_name=lambda index: f"Ethernet{index * 8}",  # 8-lane front-panel ports, as on SN5600 / Tomahawk 5
    port_pattern=re.compile(r"(Ethernet|PortChannel|Ethernet-BP|Ethernet-IB|Ethernet-Rec)[0-9]{1,5}"),
    live="sonic-redis",
    max_mtu=MAX_MTU,
)
