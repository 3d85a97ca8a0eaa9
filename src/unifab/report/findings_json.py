"""The JSON document ``unifab check --format json`` prints (the design's finding contract).

The shapes are :class:`~typing.TypedDict` s so that a program (a FastAPI route, a notebook) can type against
exactly what the CLI prints; docs/bundle.md shows an example.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, NotRequired, cast

from typing_extensions import TypedDict  # pydantic (FastAPI) reads these on Python < 3.12 only from here

from unifab.jsonify import to_jsonable
from unifab.model import Finding, Severity

__all__ = ["FindingDoc", "FindingsDocument", "FixDoc", "SummaryDoc", "document", "finding_doc", "severity_counts"]


class FixDoc(TypedDict):
    device: str
    commands: list[str]


class FindingDoc(TypedDict):
    check: str
    severity: str  # critical | error | warning | info
    subject: dict[str, str]
    message: str
    evidence: dict[str, Any]
    fix: list[FixDoc]
    impact: dict[str, Any]
    entities: list[str]


class SummaryDoc(TypedDict):
    findings: int
    by_severity: dict[str, int]
    by_kind: NotRequired[dict[str, int]]  # unifab topo diff: differences per TOPO-* kind
    plan: NotRequired[bool]  # unifab topo diff: whether the bundle has a planned cabling


class FindingsDocument(TypedDict):
    bundle: str
    summary: SummaryDoc
    findings: list[FindingDoc]


def severity_counts(findings: Sequence[Finding]) -> dict[str, int]:
    counts = Counter(f.severity for f in findings)
    return {s.value: counts.get(s, 0) for s in sorted(Severity, key=lambda s: -s.rank)}


def finding_doc(finding: Finding) -> FindingDoc:
    """One finding as its JSON object."""
    return cast(FindingDoc, to_jsonable(finding))


def document(bundle: str, findings: Sequence[Finding]) -> FindingsDocument:
    return {
        "bundle": bundle,
        "summary": {"findings": len(findings), "by_severity": severity_counts(findings)},
        "findings": [finding_doc(f) for f in findings],
    }
