"""One host's ``unifab-qos.sh``: the NIC renderers' commands wrapped in a safe, idempotent bash script.

Safe: ``set -euo pipefail``; every name interpolated into the script is checked against a strict
pattern and every value is an ``int`` before it is shell-quoted (:func:`q`, :func:`netdev`).
Idempotent: every setting is read first and written only when it differs (the helpers below), so a
second run reads and writes nothing. Paths under ``/sys`` are prefixed with ``$UNIFAB_ROOT`` (empty on a
real host), which lets the script be run against a copy of a host's ``sys/`` tree.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from unifab.errors import UsageError

__all__ = ["EPILOGUE", "PREAMBLE", "NicTarget", "csv", "host_name", "netdev", "q", "rdma_dev", "script"]

_NETDEV = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,14}$")  # IFNAMSIZ 16 incl. NUL
_RDMA = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,252}$")


@dataclass(frozen=True, slots=True)
class NicTarget:
    """A NIC port the host script configures."""

    netdev: str
    rdma_dev: str | None
    driver: str  # "mlx5" | "bnxt"
    cable_m: int  # cable length the PFC headroom is sized for


def netdev(name: str) -> str:
    if not _NETDEV.fullmatch(name):
        raise UsageError(f"netdev name {name!r}: expected 1-15 letters, digits, '_', '.', ':' or '-'")
    return name


def rdma_dev(name: str) -> str:
    if not _RDMA.fullmatch(name):
        raise UsageError(f"RDMA device name {name!r}: expected letters, digits, '_', '.' or '-'")
    return name


def host_name(name: str) -> str:
    if not _HOST.fullmatch(name):
        raise UsageError(f"host name {name!r}: expected letters, digits, '_', '.' or '-'")
    return name


def q(value: str | int) -> str:
    """Shell-quote one validated value (ints are checked to be ints, never bools)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise UsageError(f"{value!r}: only ints and validated names go into a script")
    return shlex.quote(str(value))


def csv(values: Iterable[int | str]) -> str:
    return ",".join(str(int(v)) if isinstance(v, int) else v for v in values)


PREAMBLE = r"""set -euo pipefail
ROOT="${UNIFAB_ROOT:-}"
CHANGES=0

# set_file PATH VALUE [READBACK]: write VALUE unless the file already reads VALUE (or READBACK)
set_file() {
  local path="$ROOT$1" want="$2" readback="${3:-$2}" have=""
  if [ -r "$path" ]; then have="$(cat "$path")"; fi
  if [ "$have" != "$want" ] && [ "$have" != "$readback" ]; then
    mkdir -p "$(dirname "$path")"
    printf '%s\n' "$want" > "$path"
    CHANGES=$((CHANGES + 1))
  fi
}

# changed WHAT HAVE WANT: true (and counted) when HAVE differs from WANT
changed() {
  if [ "$2" != "$3" ]; then
    echo "unifab-qos: $1: '$2' -> '$3'"
    CHANGES=$((CHANGES + 1))
    return 0
  fi
  return 1
}
"""

EPILOGUE = r"""
echo "unifab-qos: ${CHANGES} setting(s) changed"
"""


def script(host: str, profile_name: str, bodies: Sequence[str], libraries: Sequence[str]) -> str:
    """The whole script: header, helpers, each NIC's section."""
    head = (
        "#!/usr/bin/env bash\n"
        f"# RoCE QoS of host {host_name(host)}, profile {profile_name}: rendered by `unifab render`.\n"
        "# Safe to run again: every setting is read first and written only when it differs.\n"
        "# UNIFAB_ROOT prefixes the /sys paths (empty on the host itself).\n"
    )
    return head + PREAMBLE + "".join(libraries) + "".join(bodies) + EPILOGUE
