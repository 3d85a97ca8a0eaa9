"""Python's ``$`` matches before a final newline: every name validator must refuse ``name + "\\n"``, so a device
that reports ``gpu001\\n`` (or a port ``Ethernet8\\n``) never puts a line break into a command or a config."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.collect.host_live import sudoers
from unifab.errors import UsageError
from unifab.render.host_script import host_name, netdev, rdma_dev
from unifab.render.nic_mlx5 import pci_bdf


@pytest.mark.parametrize(
    ("check", "good"),
    [(host_name, "gpu001"), (netdev, "eth0"), (rdma_dev, "mlx5_0"), (pci_bdf, "0000:1a:00.1")],
)
def test_a_trailing_newline_is_not_a_name(check: object, good: str) -> None:
    assert callable(check)
    assert check(good) == good
    for bad in (good + "\n", good + "\r", "\n" + good):
        with pytest.raises(UsageError):
            check(bad)


def test_sudoers_refuses_a_user_or_socket_path_with_a_newline() -> None:
    assert "unifab" in sudoers("unifab")
    with pytest.raises(UsageError):
        sudoers("unifab\n")
    with pytest.raises(UsageError):
        sudoers("unifab", Path("/run/lldpd.socket\n"))


def test_fleet_fixes_keep_a_version_with_a_newline_out_of_commands() -> None:
    from unifab.checks.fleet import _BDF, _SAFE_VERSION

    assert _SAFE_VERSION.fullmatch("28.39.1002") and not _SAFE_VERSION.fullmatch("28.39.1002\n")
    assert _BDF.fullmatch("0000:1a:00.1") and not _BDF.fullmatch("0000:1a:00.1\n")
