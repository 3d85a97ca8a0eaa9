"""Run the registered checks over a fabric and return findings in a stable order."""

from __future__ import annotations

from collections.abc import Collection

from unifab.checks.context import CheckContext
from unifab.checks.registry import registry
from unifab.model import Fabric, Finding


def run_checks(fabric: Fabric, only: Collection[str] | None = None) -> list[Finding]:
    """Input findings from collection plus every registered check (or those in ``only``)."""
    ctx = CheckContext.build(fabric)
    findings = list(fabric.input_findings)
    for spec in registry().values():
        if spec.run is None or (only is not None and spec.id not in only):
            continue
        findings.extend(spec.run(ctx))
    if only is not None:
        findings = [f for f in findings if f.check in only]
    return sorted(findings, key=Finding.sort_key)
