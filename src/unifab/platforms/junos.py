"""Juniper Junos (QFX/PTX/MX): ``junos/show-interfaces.json`` and ``junos/show-lldp-neighbors-detail.json``.

Both files are the CLI's ``| display json`` answers. unifab reads the ports (speed, MTU, state) and the cabling
from them; Junos class-of-service is not read yet, so a Junos port's QoS is unknown (``Port.qos`` ``None``):
the QoS checks say nothing about it rather than guess, while the topology, speed and MTU checks judge it.
"""

from __future__ import annotations

import re

from unifab.platforms.base import Platform

__all__ = ["MEDIA_MTU_OVERHEAD", "PLATFORM"]

# Junos' interface ``mtu`` is the media MTU: the frame with its 14-byte Ethernet header (no FCS). The model's
# port MTU is the IP MTU, as SONiC and EOS configure it, so a Junos port of ``mtu 9216`` carries 9202 bytes.
MEDIA_MTU_OVERHEAD = 14

PLATFORM = Platform(
    name="junos",
    title="Juniper Junos",
    config_file="junos/show-interfaces.json",
    lldp_file="junos/show-lldp-neighbors-detail.json",
    port_name=lambda index: f"et-0/0/{index}",
    port_pattern=re.compile(r"(et|xe|ge|mge)-[0-9]{1,2}/[0-9]{1,2}/[0-9]{1,3}(:[0-9])?|ae[0-9]{1,3}|em[0-9]"),
    comment="#",
)
