"""Per-port MTUs of the switch renderers (a link lowered to what its other end's platform takes), and the MTU
ranges the renderers and the CONFIG_DB validator take: each platform's own maximum (unifab.platforms)."""

from __future__ import annotations

import json

import pytest
from render_profiles import ROCE, with_

from unifab.errors import RenderError
from unifab.parse.switch import eos_config as ec
from unifab.parse.switch import nvue
from unifab.platforms import PLATFORMS
from unifab.profile import PortSpec
from unifab.render import eos_config, nvue_config, sonic_config, sonic_validate

PROFILE = with_(ROCE, switch_mtu=9216)


def test_the_mtu_ranges_end_at_the_platforms_maximum() -> None:
    ranges = {"sonic": sonic_validate.MTU_RANGE, "nvue": nvue_config.MTU_RANGE, "eos": eos_config.MTU_RANGE}
    assert {os: hi for os, (_, hi) in ranges.items()} == {os: PLATFORMS[os].max_mtu for os in ranges}
    assert (sonic_config.MTU_RANGE, {os: lo for os, (lo, _) in ranges.items()}) == (
        sonic_validate.MTU_RANGE,
        {"sonic": 68, "nvue": 552, "eos": 68},
    )


def test_sonic_renders_the_given_port_mtu_and_sizes_its_headroom_for_it() -> None:
    ports = [PortSpec("Ethernet0", 400_000, "host"), PortSpec("Ethernet8", 400_000, "fabric")]
    db = sonic_config.render_config_db(ports, PROFILE, mtus={"Ethernet8": 9214})
    assert db["PORT"] == {"Ethernet0": {"mtu": "9216"}, "Ethernet8": {"mtu": "9214"}}
    pg = {k.split("|")[0]: v["profile"] for k, v in db["BUFFER_PG"].items()}
    assert pg["Ethernet0"].endswith("_mtu9216_profile") and pg["Ethernet8"].endswith("_mtu9214_profile")
    assert sonic_config.validate_config_db(db) == []


def test_eos_and_nvue_render_the_given_port_mtu() -> None:
    eos = [PortSpec("Ethernet0", 400_000, "host"), PortSpec("Ethernet8", 400_000, "fabric")]
    cfg = ec.parse(eos_config.render_eos(eos, with_(ROCE, switch_mtu=9100), mtus={"Ethernet8": 9000}))
    assert {n: i.mtu for n, i in cfg.interfaces.items()} == {"Ethernet0": 9100, "Ethernet8": 9000}
    swps = [PortSpec("swp1", 400_000, "host"), PortSpec("swp2", 400_000, "fabric")]
    assert "nv set interface swp2 link mtu 9214" in nvue_config.render_nv_set(swps, PROFILE, mtus={"swp2": 9214})
    yml = nvue.parse(nvue_config.render_nvue_yaml(swps, PROFILE, mtus={"swp2": 9214}))
    assert {n: i.mtu for n, i in yml.interfaces.items()} == {"swp1": 9216, "swp2": 9214}


@pytest.mark.parametrize(
    ("mtus", "message"),
    [
        ({"Ethernet16": 9214}, "an MTU is given for port 'Ethernet16', which is not among the rendered ports"),
        ({"Ethernet0": 9300}, "MTU of port Ethernet0 must be an integer in 68..9216, got 9300"),
    ],
)
def test_a_port_mtu_for_no_rendered_port_or_out_of_range_is_refused(mtus: dict[str, int], message: str) -> None:
    with pytest.raises(RenderError, match=message):
        sonic_config.render_config_db([PortSpec("Ethernet0", 400_000, "fabric")], PROFILE, mtus=mtus)


def test_without_port_mtus_the_render_is_unchanged() -> None:
    ports = [PortSpec("Ethernet0", 400_000, "host")]
    plain = sonic_config.render_config_db(ports, PROFILE)
    assert json.dumps(plain) == json.dumps(sonic_config.render_config_db(ports, PROFILE, mtus={}))
