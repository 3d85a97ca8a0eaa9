"""``generate`` puts a bundle in place in one rename and never touches what someone else wrote to ``--out``."""

from __future__ import annotations

from pathlib import Path

import pytest

from unifab.errors import UsageError
from unifab.twin.generate import generate


def test_an_empty_output_directory_is_replaced_by_the_bundle(tmp_path: Path) -> None:
    out = tmp_path / "b"
    out.mkdir()
    result = generate(out, gpus=8, seed=1)
    assert result.root == out and (out / "truth.json").is_file() and (out / "hosts").is_dir()
    assert [p.name for p in tmp_path.iterdir()] == ["b"], "no staging directory is left beside it"


def test_a_file_written_into_the_output_meanwhile_is_kept_and_the_run_fails(tmp_path: Path) -> None:
    """The directory was empty when the run started; another writer puts a file there while devices are
    written. The final rename refuses (the directory is not empty any more): the file is intact, no twin
    file is mixed in, no staging directory remains."""
    out = tmp_path / "b"
    out.mkdir()
    theirs = out / "notes.txt"

    def someone_writes(_n: int) -> None:
        if not theirs.exists():
            theirs.write_text("mine\n")

    with pytest.raises(UsageError, match="was written to while the twin was generated"):
        generate(out, gpus=8, seed=1, progress=someone_writes)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"] and theirs.read_text() == "mine\n"
    assert [p.name for p in tmp_path.iterdir()] == ["b"]


def test_a_non_empty_output_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "b"
    out.mkdir()
    (out / "keep").write_text("x")
    with pytest.raises(UsageError, match="not an empty directory"):
        generate(out, gpus=8, seed=1)
    assert [p.name for p in out.iterdir()] == ["keep"] and [p.name for p in tmp_path.iterdir()] == ["b"]
