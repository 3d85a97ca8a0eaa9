"""``ethtool -S <if>`` (ethtool, any version) with mlx5 counter names from old and new kernels, and bnxt_en's.

Format: a ``NIC statistics:`` header, then one ``     <name>: <value>`` line per counter (five spaces;
``%llu`` values). The record is the flat ``{counter: value}`` map in printed order, names as printed.

mlx5 names changed over time (kernel ``Documentation/.../mlx5/counters.rst`` for the current ones):
kernels up to ~4.7 print IEEE/RFC block names (``pause_ctrl_rx``, ``in_discards``, ``p64octets``...)
and ``prio<p>_rx_pause``-style per-priority names; newer kernels print ``rx_pause_ctrl_phy``,
``rx_discards_phy``, ``rx_prio<p>_pause``... ``canonical()`` maps the old names onto the new ones
(``OLD_NAMES``) so checks can ask for one spelling. Per-priority pause counters exist only for
priorities with PFC enabled; ``*_pause_duration`` is in microseconds.

Broadcom bnxt_en (``drivers/net/ethernet/broadcom/bnxt/bnxt_ethtool.c``) prints per-ring counters as
``[<ring>]: rx_ucast_packets``, ``[<ring>]: rx_discards``..., then port statistics with its own names
(``rx_pause_frames``, ``rx_pfc_ena_frames_pri<p>``, ``rx_stat_discard``; extended: ``link_down_events``,
``pfc_pri<p>_rx_duration_us``, ``rx_bytes_pri<p>``...), every priority always printed. ``canonical()`` maps
those that count what an mlx5 counter counts onto the mlx5 name (``BNXT_NAMES``, ``BNXT_PRIO_NAMES``); names
both drivers print with different scopes (``rx_bytes``) are left alone.

The header may be missing (some tools strip it). Names are everything before the last ``:`` of a
line, so drivers that prefix per-queue names (``[0]: rx_ucast_packets: 5``) read too. A name may
appear once.

Pasted captures often carry the commands that made them: ``# ethtool -S eth3 | grep pause``,
``$ ethtool -S eth3``, ``root@h1:~# ...`` (:func:`unifab.parse._text.is_prompt`), with blank lines between
the blocks of several ``| grep`` runs. Those lines are skipped anywhere (no counter line looks like one);
a ``NIC statistics:`` header may start each command's block.

With a :class:`~unifab.errors.ParseProblems` collector a bad counter line (not ``name: value``, a value
that is not a number, a name printed twice) costs that counter only; a file with no counter read raises.
"""

from __future__ import annotations

import re

from unifab.errors import ParseError, ParseProblems
from unifab.parse._text import is_prompt

__all__ = [
    "BNXT_NAMES",
    "BNXT_PRIO_NAMES",
    "HEADER",
    "OLD_NAMES",
    "OLD_PRIO_NAMES",
    "canonical",
    "canonical_name",
    "dump",
    "parse",
    "per_priority",
]

HEADER = "NIC statistics:"

# old mlx5 name -> current name, paired by the PPCNT field both read (old: en_stats.h of kernels
# <= ~4.7, e.g. isc-projects/ethq tests/mlx5_core; new: counters.rst). RFC 2819 ``oversize_pkts``
# and ``crc_align_errors`` have no current twin (``rx_oversize_pkts_phy`` reads 802.3 too-long frames).
OLD_NAMES: dict[str, str] = {
    "frames_tx": "tx_packets_phy",
    "frames_rx": "rx_packets_phy",
    "check_seq_err": "rx_crc_errors_phy",
    "octets_tx": "tx_bytes_phy",
    "octets_received": "rx_bytes_phy",
    "in_range_len_errors": "rx_in_range_len_errors_phy",
    "out_of_range_len": "rx_out_of_range_len_phy",
    "too_long_errors": "rx_oversize_pkts_phy",
    "symbol_err": "rx_symbol_err_phy",
    "mac_control_tx": "tx_mac_control_phy",
    "mac_control_rx": "rx_mac_control_phy",
    "unsupported_op_rx": "rx_unsupported_op_phy",
    "pause_ctrl_rx": "rx_pause_ctrl_phy",
    "pause_ctrl_tx": "tx_pause_ctrl_phy",
    "in_discards": "rx_discards_phy",
    "out_discards": "tx_discards_phy",
    "out_errors": "tx_errors_phy",
    "undersize_pkts": "rx_undersize_pkts_phy",
    "fragments": "rx_fragments_phy",
    "jabbers": "rx_jabbers_phy",
}
# old per-priority suffix ("prio3_rx_pause") -> current name pattern ("rx_prio3_pause")
OLD_PRIO_NAMES: dict[str, str] = {
    "rx_octets": "rx_prio{p}_bytes",
    "rx_frames": "rx_prio{p}_packets",
    "tx_octets": "tx_prio{p}_bytes",
    "tx_frames": "tx_prio{p}_packets",
    "rx_pause": "rx_prio{p}_pause",
    "rx_pause_duration": "rx_prio{p}_pause_duration",
    "rx_pause_transition": "rx_prio{p}_pause_transition",
    "tx_pause": "tx_prio{p}_pause",
    "tx_pause_duration": "tx_prio{p}_pause_duration",
}

# bnxt_en port statistic -> the mlx5 name of the same count (PHY-level frames, discards, link events).
# ``rx_good_frames``/``tx_good_frames`` exclude errored frames, as mlx5's ``*_packets_phy`` do.
BNXT_NAMES: dict[str, str] = {
    "rx_good_frames": "rx_packets_phy",
    "tx_good_frames": "tx_packets_phy",
    "rx_fcs_err_frames": "rx_crc_errors_phy",
    "rx_pause_frames": "rx_pause_ctrl_phy",
    "tx_pause_frames": "tx_pause_ctrl_phy",
    "rx_stat_discard": "rx_discards_phy",
    "tx_stat_discard": "tx_discards_phy",
    "rx_undrsz_frames": "rx_undersize_pkts_phy",
    "rx_ovrsz_frames": "rx_oversize_pkts_phy",
    "rx_jbr_frames": "rx_jabbers_phy",
    "rx_pcs_symbol_err": "rx_pcs_symbol_err_phy",
    "rx_corrected_bits": "rx_corrected_bits_phy",
    "link_down_events": "link_down_events_phy",
}
# bnxt_en per-priority name pattern -> mlx5 pattern (durations are microseconds in both)
BNXT_PRIO_NAMES: dict[str, str] = {
    "rx_pfc_ena_frames_pri{p}": "rx_prio{p}_pause",
    "tx_pfc_ena_frames_pri{p}": "tx_prio{p}_pause",
    "pfc_pri{p}_rx_duration_us": "rx_prio{p}_pause_duration",
    "pfc_pri{p}_tx_duration_us": "tx_prio{p}_pause_duration",
    "pfc_pri{p}_rx_transitions": "rx_prio{p}_pause_transition",
    "rx_bytes_pri{p}": "rx_prio{p}_bytes",
    "rx_packets_pri{p}": "rx_prio{p}_packets",
    "tx_bytes_pri{p}": "tx_prio{p}_bytes",
    "tx_packets_pri{p}": "tx_prio{p}_packets",
}
_BNXT_PRIO = {pattern.format(p=p): new.format(p=p) for pattern, new in BNXT_PRIO_NAMES.items() for p in range(8)}

_OLD_PRIO = re.compile(r"^prio([0-7])_(.+)$")
_NUM = re.compile(r"^\d+$")


def parse(text: str, source: str = "<input>", problems: ParseProblems | None = None) -> dict[str, int]:
    """Read ``ethtool -S`` output into ``{counter: value}``; a bad line costs its counter (see module doc)."""
    log = problems if problems is not None else ParseProblems.strict(source)
    stats: dict[str, int] = {}
    seen_header = False
    skipped = 0
    block_start = True  # at the start of the text or right after a prompt line
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        if is_prompt(raw):
            block_start = True
            continue
        if line == HEADER:
            if not block_start:
                log.add(f"expected {HEADER!r} once, before the counters", "a repeated header line", line=number)
            seen_header = True
            block_start = False
            continue
        block_start = False
        with log.skipping(f"line {number} ({line[:40]!r})") as row:
            name, value = _counter(line, number, source, stats)
            stats[name] = value
        skipped += row.failed
    if not stats and (not seen_header or skipped):
        if log.problems and skipped:
            raise log.problems[-1].error()
        raise ParseError(source, f"expected {HEADER!r} and counters, got empty text", line=1)
    return stats


def _counter(line: str, number: int, source: str, stats: dict[str, int]) -> tuple[str, int]:
    name, colon, value = line.rpartition(":")
    name, value = name.strip(), value.strip()
    if not colon or not name:
        raise ParseError(source, f"expected '<counter>: <value>', got {line[:60]!r}", line=number)
    if not _NUM.match(value):
        raise ParseError(source, f"expected an unsigned integer for {name}, got {value[:30]!r}", line=number)
    if name in stats:
        raise ParseError(source, f"expected {name} once", line=number)
    return name, int(value)


def dump(stats: dict[str, int]) -> str:
    """Write ``stats`` the way ``ethtool -S`` prints them."""
    return HEADER + "\n" + "".join(f"     {name}: {value}\n" for name, value in stats.items())


def canonical_name(name: str) -> str:
    """The current mlx5 spelling of ``name`` (unchanged when it is neither an old mlx5 nor a bnxt_en name)."""
    if name in OLD_NAMES:
        return OLD_NAMES[name]
    if name in BNXT_NAMES:
        return BNXT_NAMES[name]
    if name in _BNXT_PRIO:
        return _BNXT_PRIO[name]
    m = _OLD_PRIO.match(name)
    if m and m[2] in OLD_PRIO_NAMES:
        return OLD_PRIO_NAMES[m[2]].format(p=m[1])
    return name


def canonical(stats: dict[str, int]) -> dict[str, int]:
    """``stats`` with old mlx5 and bnxt_en names renamed; a current name printed too wins over its twin."""
    out: dict[str, int] = {}
    for name, value in stats.items():
        new = canonical_name(name)
        if new == name or new not in stats:
            out[new] = value
    return out


def per_priority(stats: dict[str, int], pattern: str) -> dict[int, int]:
    """``{priority: value}`` for a ``{p}`` pattern, e.g. ``per_priority(s, "rx_prio{p}_pause")``."""
    current = canonical(stats)
    return {p: current[pattern.format(p=p)] for p in range(8) if pattern.format(p=p) in current}
