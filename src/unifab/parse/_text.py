"""Small helpers shared by the text parsers: decoding, integer tokens, name sort order, pasted-capture
clean-up (shell/CLI prompt lines) and fixed-width table cells that fall back to tokens."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar, cast

from unifab.errors import ParseError

__all__ = [
    "blank_prompts",
    "column_starts",
    "decode_utf8",
    "fixed_cells",
    "is_prompt",
    "natural_key",
    "parse_int",
    "parse_uint",
    "pasted",
    "prompt_command",
]

_NATURAL = re.compile(r"(\d+)")

# A line a person pasted along with the output: ``# ethtool -S eth3 | grep pause`` or a bare ``#``,
# ``$ lldpctl``, ``leaf1#show lldp neighbors``, ``admin@sonic:~$ show interfaces status``,
# ``[root@host ~]# ethtool -S eth0``, ``user@router> show interfaces``, ``{master:0}`` (Junos), a
# Markdown fence. It starts in column 0; output lines of the formats read here never do this (their
# first word is followed by a blank, ``:`` + blank, or ``,``, never directly by ``#``/``$``/``>``).
_PROMPT = re.compile(
    r"""
    \#\s*(?P<cmd1>.*)                                              # '# command', '#comment', a bare '#'
    | [$%>](?:\s(?P<cmd4>.*))?                                     # '$ command', '% command', a bare '$'
    | \[[^\]]+\][#$%>]\s*(?P<cmd2>.*)                             # '[root@host ~]# command'
    | [\w.\-]+(?:@[\w.\-]+)?(?::[^\s#$%>]*)?(?:\([\w.\-/]+\))?[#$%>]\s*(?P<cmd3>.*)
                                        # 'leaf1#cmd', 'user@host:~$ cmd', 'r1> cmd', 'sonic(config)# cmd'
    | \{[\w:\-]+\}                                                  # Junos '{master:0}' banner
    | ```.*                                                        # Markdown code fence
    """,
    re.VERBOSE,
)


def decode_utf8(text: str | bytes, source: str) -> str:
    """``text`` as a string: bytes are decoded as UTF-8, or a :class:`ParseError` names the bad byte."""
    if isinstance(text, bytes):
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(source, f"UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return text


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting Ethernet2 before Ethernet10."""
    return tuple((1, int(p)) if p.isdigit() else (0, p) for p in _NATURAL.split(name) if p)


def parse_int(token: str, source: str, line: int | None, what: str, key: str | None = None) -> int:
    """``int(token)`` that raises a :class:`ParseError` naming the place and the expectation."""
    try:
        return int(token.strip())
    except ValueError:
        raise ParseError(source, f"expected {what}, got {token.strip()!r}", line=line, key=key) from None


def parse_uint(
    token: str,
    source: str,
    what: str,
    *,
    line: int | None = None,
    key: str | None = None,
    hi: int | None = None,
    max_digits: int | None = None,
    strip: bool = False,
) -> int:
    """A non-negative decimal integer: ASCII digits only (no sign, ``_`` or blanks; ``strip`` drops
    surrounding blanks first), at most ``max_digits`` of them and at most ``hi`` when given.

    Otherwise a :class:`ParseError` at ``line`` / ``key``: "``what`` as a non-negative integer, got
    ``token``", or "``what`` in 0..``hi``, got N".
    """
    text = token.strip() if strip else token
    if not (text.isdigit() and text.isascii() and (max_digits is None or len(text) <= max_digits)):
        raise ParseError(source, f"{what} as a non-negative integer, got {token!r}", line=line, key=key)
    value = int(text)
    if hi is not None and value > hi:
        raise ParseError(source, f"{what} in 0..{hi}, got {value}", line=line, key=key)
    return value


def is_prompt(line: str) -> bool:
    """Whether ``line`` is a shell/CLI prompt, a ``#`` comment, a Junos banner or a Markdown fence that
    a person pasted along with the output (see ``_PROMPT``); indented lines never are."""
    return bool(line) and not line[0].isspace() and _PROMPT.fullmatch(line.rstrip()) is not None


def prompt_command(line: str) -> str | None:
    """The command typed at a prompt line (``"ptmctl -d"`` from ``cumulus@leaf1:~$ ptmctl -d``), ``None``
    when ``line`` is no prompt or names no command (a bare ``leaf1#``, a banner, a fence)."""
    if not line or line[0].isspace():
        return None
    match = _PROMPT.fullmatch(line.rstrip())
    if match is None:
        return None
    command = next((g for g in match.group("cmd1", "cmd2", "cmd3", "cmd4") if g), "")
    return command.strip() or None


def blank_prompts(text: str, *, anywhere: bool = False) -> str:
    """``text`` with its pasted prompt/comment lines (:func:`is_prompt`) made empty, line numbers kept.

    By default only the lines before the first output line and after the last one are blanked (a
    leading ``$ command`` and a trailing ``leaf1#``); with ``anywhere`` every such line is, for formats
    whose own lines can never look like one (``ethtool -S`` pastes of several ``| grep`` runs).
    """
    if not anywhere and _plain_edges(text):
        return text  # the common case, a file as the tool wrote it: O(1), whatever its size
    lines = text.splitlines(keepends=True)
    prompt = [not line.strip() or is_prompt(line) for line in lines]
    if anywhere:
        keep = [not p for p in prompt]
    else:
        first = next((i for i, p in enumerate(prompt) if not p), len(lines))
        last = max((i for i, p in enumerate(prompt) if not p), default=-1)
        keep = [first <= i <= last for i in range(len(lines))]
    out = []
    for line, kept in zip(lines, keep, strict=True):
        if kept:
            out.append(line)
        else:
            out.append("\n" if line.endswith(("\n", "\r")) else "")
    return "".join(out)


def _plain_edges(text: str) -> bool:
    """Whether the first and the last line of ``text`` are output (not blank, not a pasted prompt)."""
    newline = text.find("\n")
    first = text if newline < 0 else text[:newline]
    end = len(text)
    while end and text[end - 1] in "\r\n":  # no copy of the text: it may be megabytes of CONFIG_DB
        end -= 1
    last = text[text.rfind("\n", 0, end) + 1 : end]
    return bool(first.strip()) and bool(last.strip()) and not is_prompt(first) and not is_prompt(last)


F = TypeVar("F", bound=Callable[..., Any])


def pasted(parse: F) -> F:
    """``parse`` that first blanks the prompt, comment and fence lines a person pasted before and after the output
    (:func:`blank_prompts`, line numbers kept): ``root@gpu01:~# ibv_devinfo`` above a capture, a bare ``leaf1#``
    below it. Its first argument is the text; bytes pass unchanged (decoding them, and naming a bad byte, is the
    parser's own job)."""

    @functools.wraps(parse)
    def reading(text: object, *args: Any, **kwargs: Any) -> Any:
        return parse(blank_prompts(text) if isinstance(text, str) else text, *args, **kwargs)

    return cast(F, reading)


def column_starts(header: str) -> list[tuple[str, int]]:
    """The words of a table header with the column each starts in: ``[("Port", 0), ("Name", 11), ...]``."""
    return [(m.group(), m.start()) for m in re.finditer(r"\S+", header)]


def fixed_cells(line: str, starts: list[int]) -> list[str] | None:
    """``line`` cut at the column ``starts`` (the first is 0), each cell stripped -- or ``None`` when the
    columns do not line up: a cut would split a word, or the first cell is empty.

    A paste that collapsed the padding (chat tools, some terminals) shifts every cell left of its
    header column; the caller then reads the row by tokens instead.
    """
    for start in starts[1:]:
        if 0 < start < len(line) and not line[start - 1].isspace() and not line[start].isspace():
            return None
    ends = [*starts[1:], None]
    cells = [line[s:e].strip() for s, e in zip(starts, ends, strict=True)]
    return cells if cells and cells[0] else None
