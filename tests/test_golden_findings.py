"""Restructuring keeps behaviour: the findings of every pinned case equal the documents written before it.

The cases and the tool that wrote ``tests/golden/findings/*.json`` are in ``tests/golden/build.py``. A change
that means to change findings regenerates them (``python tests/golden/build.py --work $(mktemp -d)``) and
says why in its commit.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "golden"
_spec = importlib.util.spec_from_file_location("golden_build", HERE / "build.py")
assert _spec is not None and _spec.loader is not None
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


@pytest.mark.parametrize("case", sorted(build.CASES))
def test_findings_equal_the_pinned_document(case: str, tmp_path: Path) -> None:
    pinned = json.loads((build.FINDINGS / f"{case}.json").read_text())
    actual = json.loads(build.findings_json(case, tmp_path))
    assert actual["summary"] == pinned["summary"]
    assert actual == pinned


def test_every_pinned_document_has_a_case() -> None:
    assert sorted(p.stem for p in build.FINDINGS.glob("*.json")) == sorted(build.CASES)
