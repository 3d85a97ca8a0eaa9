"""The JSON document ``unifab check --format json`` prints (the design's finding contract)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from unifab.jsonify import to_jsonable
from unifab.model import Finding, Severity


def severity_counts(findings: Sequence[Finding]) -> dict[str, int]:
    counts = Counter(f.severity for f in findings)
    return {s.value: counts.get(s, 0) for s in sorted(Severity, key=lambda s: -s.rank)}


def document(bundle: str, findings: Sequence[Finding]) -> dict[str, Any]:
    return {
        "bundle": bundle,
        "summary": {"findings": len(findings), "by_severity": severity_counts(findings)},
        "findings": [to_jsonable(f) for f in findings],
    }
