"""Pasted-capture helpers of unifab.parse._text: prompt lines, fixed-width cells."""

from __future__ import annotations

import pytest

from unifab.parse._text import blank_prompts, fixed_cells, is_prompt, prompt_command


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("# ethtool -S eth3 | grep pause", "ethtool -S eth3 | grep pause"),
        ("#", None),
        ("$ lldpctl", "lldpctl"),
        ("leaf1#show lldp neighbors", "show lldp neighbors"),
        ("leaf1#", None),
        ("admin@sonic:~$ show interfaces status", "show interfaces status"),
        ("cumulus@leaf01:mgmt:~$ sudo ptmctl -d", "sudo ptmctl -d"),
        ("[root@gpu-node07 ~]# ethtool -S ens1f0np0", "ethtool -S ens1f0np0"),
        ("netops@qfx> show interfaces et-0/0/10.0", "show interfaces et-0/0/10.0"),
        ("sonic(config)# show running-configuration", "show running-configuration"),
        ("p1-ucsm-A(nxos)# show int vfc3509", "show int vfc3509"),
        ("{master:0}", None),
        ("```text", None),
    ],
)
def test_prompt_lines(line: str, command: str | None) -> None:
    assert is_prompt(line)
    assert prompt_command(line) == command


@pytest.mark.parametrize(
    "line",
    [
        "     rx_prio3_pause: 0",
        "NIC statistics:",
        "[0]: rx_ucast_packets: 5",
        "Ethernet1 is up, line protocol is up (connected)",
        "Interface:    eth0, via: LLDP, RID: 1",
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536",
        "Physical interface: xe-0/1/0, Enabled, Physical link is Up",
        "Et1        localhost                      Ethernet1                  120",
        "---------- ------------------------ ---------------------- ---",
        "  # indented",
        "",
    ],
)
def test_output_lines_are_not_prompts(line: str) -> None:
    assert not is_prompt(line)
    assert prompt_command(line) is None


def test_blank_prompts_keeps_line_numbers_and_inner_lines() -> None:
    text = "$ cmd\nout 1\n# inner\nout 2\nleaf1#\n"
    assert blank_prompts(text) == "\nout 1\n# inner\nout 2\n\n"
    assert blank_prompts(text, anywhere=True) == "\nout 1\n\nout 2\n\n"
    assert blank_prompts("$ only\n") == "\n"


def test_fixed_cells_fall_back_when_a_cut_splits_a_word() -> None:
    header = "Port       Name     Status"
    starts = [0, 11, 20]
    assert fixed_cells("Et1        srv 1    connected", starts) == ["Et1", "srv 1", "connected"]
    assert fixed_cells("Et1", starts) == ["Et1", "", ""]
    assert header.index("Status") == 20
    assert fixed_cells("Et1 server-one connected", starts) is None  # padding collapsed
    assert fixed_cells("           x", starts) is None  # no first cell
