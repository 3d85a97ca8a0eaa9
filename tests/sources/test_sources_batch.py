"""DirectorySource.batch: each directory listed once, files opened relative to it, the same answers as without."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from unifab.sources import DirectorySource, OutsideBundleError, SourcePath, batched


def _tree(root: Path, outside: Path) -> None:
    (root / "hosts" / "h1" / "cmd").mkdir(parents=True)
    (root / "hosts" / "h1" / "cmd" / "a.txt").write_text("alpha\n")
    (root / "hosts" / "h1" / "cmd" / "b.txt").write_bytes(b"")
    (root / "hosts" / "h1" / "sys").mkdir()
    (root / "hosts" / "h1" / "sys" / "inside-link").symlink_to("../cmd/a.txt")
    (root / "hosts" / "h1" / "sys" / "outside-link").symlink_to(outside / "secret")
    (root / "hosts" / "h1" / "sys" / "dangling").symlink_to("nowhere")
    (root / "hosts" / "h1" / "sys" / "dirlink").symlink_to("../cmd")
    (root / "hosts" / "h1" / "sys" / "outdir").symlink_to(outside)
    os.mkfifo(root / "hosts" / "h1" / "sys" / "fifo")
    outside.mkdir(exist_ok=True)
    (outside / "secret").write_text("do not read\n")


PATHS = [
    "",
    "hosts",
    "hosts/h1",
    "hosts/h1/cmd",
    "hosts/h1/cmd/a.txt",
    "hosts/h1/cmd/b.txt",
    "hosts/h1/cmd/absent.txt",
    "hosts/h1/absent/deeper/x",
    "hosts/h1/cmd/a.txt/below",
    "hosts/h1/sys/inside-link",
    "hosts/h1/sys/outside-link",
    "hosts/h1/sys/dangling",
    "hosts/h1/sys/dirlink",
    "hosts/h1/sys/dirlink/a.txt",
    "hosts/h1/sys/outdir",
    "hosts/h1/sys/outdir/secret",
    "hosts/h1/sys/fifo",
]


def _answers(source: DirectorySource) -> list[object]:
    out: list[object] = []
    for rel in PATHS:
        out.append((rel, source.kind(rel), source.names(rel)))
        try:
            out.append(source.read_bytes(rel))
        except OSError as exc:
            out.append((type(exc).__name__, exc.errno))
    return out


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    root = tmp_path / "bundle"
    _tree(root, tmp_path / "outside")
    return root


def test_a_batch_answers_as_the_plain_source_does(bundle: Path) -> None:
    plain = DirectorySource(bundle)
    expected = _answers(plain)
    batched_source = DirectorySource(bundle)
    with batched_source.batch():
        got = _answers(batched_source)
        again = _answers(batched_source)  # the second time from the listings
    assert got == expected
    assert again == expected
    assert batched_source.refused == plain.refused
    assert "hosts/h1/sys/outside-link" in plain.refused


def test_a_batch_never_reads_outside_even_when_a_file_turns_into_a_link(bundle: Path, tmp_path: Path) -> None:
    source = DirectorySource(bundle)
    target = bundle / "hosts" / "h1" / "cmd" / "a.txt"
    with source.batch():
        assert source.kind("hosts/h1/cmd/a.txt") == "file"  # listed as a plain file
        target.unlink()
        target.symlink_to(tmp_path / "outside" / "secret")
        with pytest.raises(OutsideBundleError):
            source.read_bytes("hosts/h1/cmd/a.txt")


def test_changes_after_a_batch_are_seen(bundle: Path) -> None:
    source = DirectorySource(bundle)
    cmd = bundle / "hosts" / "h1" / "cmd"
    with source.batch():
        assert source.names("hosts/h1/cmd") == ["a.txt", "b.txt"]
        assert source.read_bytes("hosts/h1/cmd/a.txt") == b"alpha\n"
    (cmd / "a.txt").write_text("changed\n")
    (cmd / "c.txt").write_text("new\n")
    (cmd / "b.txt").unlink()
    with source.batch():
        assert source.names("hosts/h1/cmd") == ["a.txt", "c.txt"]
        assert source.read_bytes("hosts/h1/cmd/a.txt") == b"changed\n"
        assert source.kind("hosts/h1/cmd/b.txt") is None
        assert source.kind("hosts/h1/cmd/c.txt") == "file"


def _open_fds() -> int:
    return sum(1 for _ in Path("/proc/self/fd").iterdir())


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_batch_closes_what_it_opened(bundle: Path) -> None:
    source = DirectorySource(bundle)
    before = _open_fds()
    with batched(source):
        _answers(source)
        assert _open_fds() > before  # the listed directories are held open while the batch runs
    assert _open_fds() == before


def test_a_batch_of_a_non_directory_source_is_nothing(bundle: Path) -> None:
    from unifab.sources import MemorySource

    memory = MemorySource({"hosts/h1/cmd/a.txt": b"x"})
    with batched(memory):
        assert SourcePath(memory, "hosts/h1/cmd/a.txt").read_bytes() == b"x"


def test_plain_names_step_like_cleaned_paths(bundle: Path) -> None:
    root = SourcePath(DirectorySource(bundle))
    assert (root / "hosts" / "h1").rel == "hosts/h1"
    assert (root / "hosts/h1/").rel == "hosts/h1"
    assert (root / "." / "hosts").rel == "hosts"
    with pytest.raises(ValueError, match="bundle-relative"):
        root / ".."


def test_a_directory_that_turns_into_a_link_out_is_not_listed(bundle: Path, tmp_path: Path) -> None:
    source = DirectorySource(bundle)
    h1 = bundle / "hosts" / "h1"
    with source.batch():
        assert source.kind("hosts/h1/cmd") == "dir"  # hosts/h1 listed: cmd is a plain directory
        (h1 / "cmd").rename(h1 / "cmd-old")
        (h1 / "cmd").symlink_to(tmp_path / "outside")
        assert source.names("hosts/h1/cmd") == []
        with pytest.raises(OutsideBundleError):
            source.read_bytes("hosts/h1/cmd/secret")
    assert "hosts/h1/cmd" in source.refused


def test_another_thread_reads_past_a_batch_it_does_not_own(bundle: Path) -> None:
    import threading

    source = DirectorySource(bundle)
    seen: list[object] = []
    with source.batch():
        assert source.names("hosts/h1/cmd") == ["a.txt", "b.txt"]  # listed by this thread
        (bundle / "hosts" / "h1" / "cmd" / "c.txt").write_text("later\n")

        def other() -> None:
            with source.batch():  # not its batch: the ordinary path, which sees the new file
                seen.append(source.names("hosts/h1/cmd"))
                seen.append(source.read_bytes("hosts/h1/cmd/c.txt"))

        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert source.names("hosts/h1/cmd") == ["a.txt", "b.txt"]  # this thread still reads its listing
    assert seen == [["a.txt", "b.txt", "c.txt"], b"later\n"]
