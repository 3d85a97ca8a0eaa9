"""Render the check catalog (id, what, why it hurts, how to fix) as Markdown from the registry.

``python -m unifab.checks.catalog > docs/checks.md`` regenerates the committed catalog; a test keeps
the two in step.
"""

from __future__ import annotations

from unifab.checks.registry import registry

__all__ = ["render_markdown"]


def render_markdown() -> str:
    lines = [
        "# Check catalog",
        "",
        "Generated from the registry by `python -m unifab.checks.catalog`; do not edit by hand.",
        "Check ids are stable: scripts may rely on them.",
        "",
    ]
    for spec in registry().values():
        lines += [f"## `{spec.id}`", "", f"**What:** {spec.title}.", "", f"**Why it hurts:** {spec.why}", ""]
        lines += [f"**How to fix:** {spec.fix}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(render_markdown(), end="")
