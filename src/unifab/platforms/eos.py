"""Arista EOS: ``eos/running-config.txt`` plus eAPI JSON (interfaces, LLDP, version); live over eAPI."""

from __future__ import annotations

import re

from unifab.platforms.base import Platform

__all__ = ["MAX_MTU", "PLATFORM"]

MAX_MTU = 9214  # [I] EOS interface MTU tops out at 9214 (reference switch-qos §2.4): `mtu` takes 68-9214

PLATFORM = Platform(
    name="eos",
    title="Arista EOS",
    config_file="eos/running-config.txt",
    lldp_file="eos/show-lldp-neighbors-detail.json",
    port_name=lambda index: f"Ethernet{index * 8}",  # the twin's EOS counts lanes as SONiC does
    port_pattern=re.compile(
        r"(Ethernet|Port-Channel|Management|Vlan|Loopback)[0-9]{1,5}(/[0-9]{1,3}){0,2}(\.[0-9]{1,4})?"
    ),
    live="eos-eapi",
    comment="!",
    max_mtu=MAX_MTU,
)
