"""Device-derived text made safe to show: the one gate between device output and a terminal, an HTML page
or an SVG.

Names, descriptions and messages come from devices (an LLDP system name is whatever the other end of a
cable says it is), so they may carry terminal escape sequences (``ESC[2J`` clears the screen, OSC 8 forges
a link, OSC 52 writes the clipboard), carriage returns that overwrite what was printed, or bidirectional
overrides that reorder what is read. :func:`display` shows every such character as a visible escape
(``\\x1b``, ``\\u202e``) instead; the text stays readable and the escape stays evidence. :func:`cell` adds
Rich markup escaping for table cells and Rich-printed lines. JSON output needs neither: JSON escapes control
characters itself.
"""

from __future__ import annotations

__all__ = ["cell", "display"]


def _visible(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def display(text: str, keep: str = "") -> str:
    """``text`` with every non-printable character (C0/C1 controls, ESC, DEL, bidi and other format
    characters, line and paragraph separators, non-ASCII spaces) shown as a visible escape; the characters
    in ``keep`` (``"\\n\\t"`` for a ``<pre>`` block) pass as they are."""
    if text.isprintable():  # the common case: nothing to do
        return text
    return "".join(c if c.isprintable() or c in keep else _visible(c) for c in text)


def cell(value: object) -> str:
    """A table cell or a Rich-printed line holding device text: :func:`display`, then Rich markup escaped
    (a name like ``[bold]`` or ``[/]`` is text, not markup)."""
    from rich.markup import escape

    return escape(display(value if isinstance(value, str) else str(value)))
