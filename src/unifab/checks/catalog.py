"""Render the check catalog (id, what, why it hurts, how to fix, link tiers, buffer model) as Markdown.

``python -m unifab.checks.catalog > docs/checks.md`` regenerates the committed catalog; a test keeps
the two in step. The prose comes from the registry (:mod:`unifab.checks.registry`), the link tiers and
buffer models from :data:`unifab.checks.coverage.COVERAGE`.
"""

from __future__ import annotations

from unifab.checks.coverage import COVERAGE
from unifab.checks.registry import registry

__all__ = ["render_markdown"]


def render_markdown() -> str:
    lines = [
        "# Check catalog",
        "",
        "Generated from the registry by `python -m unifab.checks.catalog`; do not edit by hand.",
        "Check ids are stable: scripts may rely on them.",
        "",
        "**Link tiers** says which links a check judges: host↔leaf (a NIC's cable to its leaf), leaf↔spine and "
        "spine↔super-spine (switch↔switch links, judged alike whatever the switches' roles); n/a when it judges "
        "a device, a host's insides, a job or an input file. **Buffer model** names the model and formula a "
        "buffer check sizes against.",
        "",
    ]
    for spec in registry().values():
        lines += [f"## `{spec.id}`", "", f"**What:** {spec.title}.", "", f"**Why it hurts:** {spec.why}", ""]
        lines += [f"**How to fix:** {spec.fix}", ""]
        cov = COVERAGE.get(spec.id)
        if cov is None:  # tests/checks/test_catalog.py fails on it; the page still renders
            continue
        lines += [f"**Link tiers:** {', '.join(cov.tiers)}" + (f" — {cov.scope}." if cov.scope else "."), ""]
        if cov.buffer:
            lines += [f"**Buffer model:** {cov.buffer}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(render_markdown(), end="")
