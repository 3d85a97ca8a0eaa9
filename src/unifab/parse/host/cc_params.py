"""Upstream mlx5 DCQCN parameters: debugfs ``/sys/kernel/debug/mlx5/<pci-bdf>/cc_params/`` (kernel >= 4.11).

One file per parameter (``drivers/infiniband/hw/mlx5/cong.c``), each read as ``%u\\n``:
``rp_clamp_tgt_rate rp_clamp_tgt_rate_ati rp_time_reset rp_byte_reset rp_threshold rp_ai_rate
rp_max_rate rp_hai_rate rp_min_dec_fac rp_min_rate rp_rate_to_set_on_first_cnp rp_dce_tcp_g
rp_dce_tcp_rtt rp_rate_reduce_monitor_period rp_initial_alpha_value rp_gd np_min_time_between_cnps
np_cnp_dscp np_cnp_prio_mode np_cnp_prio``, plus ``rtt_resp_dscp_valid rtt_resp_dscp`` with the
``roce_cc_general`` capability. The directory exists only when the firmware allows CC query and
modify. This is the upstream twin of MLNX_OFED's ``/sys/class/net/<if>/ecn/`` tree (``sysfs-ecn``).

``parse_tree`` takes ``{file name: contents}`` relative to ``cc_params/`` (a leading ``cc_params/``
is dropped; files in other subdirectories are ignored); ``parse`` takes the same flattened to
``name: value`` lines. Unknown names are kept (newer kernels add parameters) when they hold a number.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from unifab.errors import ParseError, ParseProblems

__all__ = ["LIMITS", "PARAMS", "PREFIX", "CcParams", "dump", "dump_tree", "parse", "parse_tree"]

PARAMS = (
    "rp_clamp_tgt_rate",
    "rp_clamp_tgt_rate_ati",
    "rp_time_reset",
    "rp_byte_reset",
    "rp_threshold",
    "rp_ai_rate",
    "rp_max_rate",
    "rp_hai_rate",
    "rp_min_dec_fac",
    "rp_min_rate",
    "rp_rate_to_set_on_first_cnp",
    "rp_dce_tcp_g",
    "rp_dce_tcp_rtt",
    "rp_rate_reduce_monitor_period",
    "rp_initial_alpha_value",
    "rp_gd",
    "np_min_time_between_cnps",
    "np_cnp_dscp",
    "np_cnp_prio_mode",
    "np_cnp_prio",
    "rtt_resp_dscp_valid",
    "rtt_resp_dscp",
)
# the largest value each field of the CONG_PARAMS PRM layout can hold (what a read can show)
LIMITS = {"np_cnp_dscp": 63, "np_cnp_prio": 7, "np_cnp_prio_mode": 1, "rtt_resp_dscp": 63, "rtt_resp_dscp_valid": 1}
_U32 = 0xFFFFFFFF
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_NUM = re.compile(r"^\d+$")
PREFIX = "cc_params/"


@dataclass(frozen=True, slots=True)
class CcParams:
    params: dict[str, int]  # file name -> value, sorted by name

    @property
    def np_cnp_dscp(self) -> int | None:
        """DSCP the notification point writes into generated CNPs."""
        return self.params.get("np_cnp_dscp")

    @property
    def np_cnp_prio(self) -> int | None:
        """PCP of generated CNPs (used when ``np_cnp_prio_mode`` is 0)."""
        return self.params.get("np_cnp_prio")

    @property
    def np_cnp_prio_mode(self) -> int | None:
        """1: CNP priority follows the received packet; 0: ``np_cnp_prio`` is used."""
        return self.params.get("np_cnp_prio_mode")


def _read(
    files: Mapping[str, str], locate: dict[str, tuple[str, int]], source: str, log: ParseProblems | None = None
) -> CcParams:
    log = log if log is not None else ParseProblems.strict(source)
    params: dict[str, int] = {}
    for rel, content in files.items():
        name = rel.strip("/").removeprefix(PREFIX)
        if "/" in name:
            continue  # another debugfs directory (QPs/, CQs/, ...)
        with log.skipping(rel.strip("/")):  # a file that cannot be read leaves that parameter unknown
            params[name] = _param(name, content.strip(), *locate.get(rel, (f"{source}/{rel}", 1)))
    if not params and log.problems:
        raise log.problems[0].error()
    if not params:
        raise ParseError(source, "expected cc_params files (np_cnp_dscp, rp_gd, ...)", line=1)
    return CcParams(dict(sorted(params.items())))


def _param(name: str, value: str, where: str, line: int) -> int:
    if not _NAME.match(name):
        raise ParseError(where, f"expected a cc_params file name, got {name[:40]!r}", line=line)
    if not _NUM.match(value) or int(value) > LIMITS.get(name, _U32):
        limit = LIMITS.get(name, _U32)
        raise ParseError(where, f"expected an unsigned integer 0..{limit} in {name}, got {value[:30]!r}", line=line)
    return int(value)


def parse_tree(files: Mapping[str, str], source: str = "<input>", problems: ParseProblems | None = None) -> CcParams:
    """Read ``cc_params/`` from ``{relative path: contents}``; with a lenient ``problems`` a file that cannot be
    read costs that parameter only."""
    return _read(files, {}, source, problems)


def parse(text: str, source: str = "<input>") -> CcParams:
    """Read the flattened form: one ``name: value`` line per file (``cc_params/name: value`` too)."""
    files: dict[str, str] = {}
    locate: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        path, sep, value = line.partition(":")
        path = path.strip()
        if not sep or not path:
            raise ParseError(source, "expected 'name: value'", line=number)
        if path in files:
            raise ParseError(source, f"expected {path} once", line=number)
        files[path], locate[path] = value, (source, number)
    return _read(files, locate, source)


def dump_tree(record: CcParams) -> dict[str, str]:
    """The debugfs files as the kernel prints them (``%u\\n``)."""
    return {name: f"{value}\n" for name, value in record.params.items()}


def dump(record: CcParams) -> str:
    """The flattened form ``parse`` reads."""
    return "".join(f"{name}: {value}\n" for name, value in record.params.items())
