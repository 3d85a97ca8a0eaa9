"""NVIDIA Cumulus Linux with NVUE: ``nvue/config.yaml`` (``nv config show -o yaml``) and lldpd's JSON."""

from __future__ import annotations

import re

from unifab.platforms.base import Platform

__all__ = ["MAX_MTU", "PLATFORM"]

MAX_MTU = 9216  # `link mtu 9216`, Cumulus' jumbo and largest MTU (reference switch-qos §2.4, §4)

PLATFORM = Platform(
    name="nvue",
    title="Cumulus NVUE",
    config_file="nvue/config.yaml",
    lldp_file="nvue/lldpcli.json",
    port_name=lambda index: f"swp{index + 1}",
    port_pattern=re.compile(r"(swp[0-9]{1,3}(s[0-9])?|bond[0-9]{1,4}|eth[0-9]|lo|vlan[0-9]{1,4})"),
    max_mtu=MAX_MTU,
)
