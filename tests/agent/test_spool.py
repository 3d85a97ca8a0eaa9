"""The agent's spool: order, atomic writes, what a start-up scan removes (and what it never touches), the bound
(drop the oldest, keep the latest, the note the next push carries), a full disk (a real tmpfs), and backoff."""

from __future__ import annotations

import errno
import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from unifab.agent.backoff import Backoff
from unifab.agent.spool import STATE_NAME, Spool, SpoolError


class Recorder:
    """The spool's log: every (level, event, fields) it reported."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, object]]] = []

    def __call__(self, level: str, event: str, **fields: object) -> None:
        self.events.append((level, event, fields))


def spool_at(directory: Path, max_bytes: int = 1 << 20, max_snapshots: int = 100) -> Spool:
    spool = Spool(directory, max_bytes, max_snapshots, Recorder())
    spool.open()
    return spool


def events_of(spool: Spool) -> list[str]:
    log = spool.log
    assert isinstance(log, Recorder)
    return [e[1] for e in log.events]


def add(spool: Spool, body: bytes) -> object:
    seq = spool.next_seq()
    spool.state.last_seq = seq
    return spool.add(f"gpu001-{seq:08d}-x", seq, body)


def test_entries_come_back_in_order_with_their_payload(tmp_path: Path) -> None:
    spool = spool_at(tmp_path / "s")
    bodies = [os.urandom(100 + i) for i in range(5)]
    for body in bodies:
        add(spool, body)
    spool.save_state()
    again = spool_at(tmp_path / "s")
    assert [e.id for e in again.entries] == [f"gpu001-{i:08d}-x" for i in range(1, 6)]
    assert [again.payload(e) for e in again.entries] == bodies
    assert again.next_seq() == 6
    assert oct((tmp_path / "s").stat().st_mode & 0o777) == "0o700"
    again.remove(again.entries[0])
    assert [e.seq for e in spool_at(tmp_path / "s").entries] == [2, 3, 4, 5]


def test_next_seq_survives_a_lost_state_file(tmp_path: Path) -> None:
    spool = spool_at(tmp_path / "s")
    add(spool, b"a")
    add(spool, b"b")
    (tmp_path / "s" / STATE_NAME).unlink(missing_ok=True)
    assert spool_at(tmp_path / "s").next_seq() == 3  # from the entries themselves


def test_start_removes_only_the_spools_own_tmp_files(tmp_path: Path) -> None:
    d = tmp_path / "s"
    spool = spool_at(d)
    add(spool, b"kept")
    ours = [d / ".snap-000000000002.ufs.4242.tmp", d / ".agent-state.json.17.tmp"]
    foreign = [d / "notes.txt", d / ".snap-x.tmp", d / "snap-1.ufs", d / ".snap-000000000002.ufs.tmp", d / "x.tmp"]
    for path in ours + foreign:
        path.write_bytes(b"half a snapshot")
    (d / "collect" / "hosts").mkdir(parents=True)
    again = spool_at(d)
    assert not any(p.exists() for p in ours)
    assert all(p.read_bytes() == b"half a snapshot" for p in foreign)
    assert not (d / "collect").exists()
    assert [e.id for e in again.entries] == ["gpu001-00000001-x"]


def test_a_damaged_entry_is_set_aside_never_replayed(tmp_path: Path) -> None:
    d = tmp_path / "s"
    spool = spool_at(d)
    for body in (b"one" * 100, b"two" * 100, b"three" * 100):
        add(spool, body)
    first, second, third = spool.entries
    first.path.write_bytes(first.path.read_bytes()[:-10])  # truncated (not something the spool writes, but a disk)
    data = bytearray(second.path.read_bytes())
    data[-1] ^= 0xFF  # same length, wrong checksum: found when read
    second.path.write_bytes(bytes(data))
    again = spool_at(d)
    assert [e.id for e in again.entries] == [second.id, third.id]
    assert (d / (first.path.name + ".corrupt")).exists()
    assert again.payload(again.entries[0]) is None
    assert (d / (second.path.name + ".corrupt")).exists()
    assert [e.id for e in again.entries] == [third.id]
    assert set(events_of(again)) == {"spool_entry_corrupt"}


def test_a_full_spool_drops_the_oldest_keeps_the_latest_and_carries_the_note(tmp_path: Path) -> None:
    spool = spool_at(tmp_path / "s", max_snapshots=3)
    results = [add(spool, bytes([i]) * 50) for i in range(1, 7)]
    assert [e.seq for e in spool.entries] == [4, 5, 6]
    dropped = [[d.seq for d in r.dropped] for r in results]  # type: ignore[attr-defined]
    assert dropped == [[], [], [], [1], [2], [3]]
    # each new entry carries one drop; none of the dropped ones carried a note yet
    assert [e.dropped for e in spool.entries] == [1, 1, 1]
    assert sorted(p.name for p in (tmp_path / "s").glob("snap-*")) == [e.path.name for e in spool.entries]
    # an entry that carried a note and is dropped in turn hands its count to the new one
    results.append(add(spool, b"7" * 50))
    assert spool.entries[-1].dropped == 2  # snapshot 4 and the one 4 was carrying
    assert spool_at(tmp_path / "s").entries[-1].dropped == 2  # written in the entry, atomically


def test_the_byte_bound_keeps_the_latest_even_when_it_alone_is_too_big(tmp_path: Path) -> None:
    spool = spool_at(tmp_path / "s", max_bytes=2500)
    add(spool, b"a" * 600)
    add(spool, b"b" * 600)
    assert len(spool.entries) == 2
    result = add(spool, b"c" * 900)  # 600 + 600 + 900 + headers > 2500: the oldest goes
    assert [e.seq for e in spool.entries] == [2, 3] and not result.oversize  # type: ignore[attr-defined]
    big = add(spool, b"d" * 5000)
    assert [e.seq for e in spool.entries] == [4] and big.oversize  # type: ignore[attr-defined]
    assert spool.size_bytes == spool.entries[0].file_size > 5000


def test_the_entry_whose_push_is_in_doubt_is_never_dropped(tmp_path: Path) -> None:
    spool = spool_at(tmp_path / "s", max_snapshots=2)
    add(spool, b"1")
    add(spool, b"2")
    spool.state.in_doubt = spool.entries[0].id  # its push got no answer: the controller may hold it
    add(spool, b"3")
    assert [e.seq for e in spool.entries] == [1, 3]
    assert spool.entries[-1].dropped == 1


def test_a_drop_interrupted_by_a_crash_is_finished_at_start(tmp_path: Path) -> None:
    d = tmp_path / "s"
    spool = spool_at(d, max_snapshots=2)
    add(spool, b"1")
    add(spool, b"2")
    saved = {e.path: e.path.read_bytes() for e in spool.entries}
    add(spool, b"3")  # drops 1
    for path, body in saved.items():  # as if the agent died after the rename, before the unlink
        path.write_bytes(body)
    again = spool_at(d, max_snapshots=2)
    assert [e.seq for e in again.entries] == [2, 3]
    assert not (d / "snap-000000000001.ufs").exists()


def test_a_write_that_fails_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "s"
    spool = spool_at(d, max_snapshots=2)
    add(spool, b"1")
    add(spool, b"2")
    before = sorted(p.name for p in d.iterdir())
    real_write = os.write

    def no_space(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", no_space)
    with pytest.raises(SpoolError) as caught:
        add(spool, b"3")
    monkeypatch.setattr(os, "write", real_write)
    assert caught.value.errno == errno.ENOSPC and "No space left on device" in str(caught.value)
    assert sorted(p.name for p in d.iterdir()) == before  # no tmp left, nothing dropped
    assert [e.seq for e in spool.entries] == [1, 2]


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted in the test's directory (root only), unmounted at the end."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_real_full_disk_keeps_the_old_spool(tiny_tmpfs: Path) -> None:
    spool = spool_at(tiny_tmpfs / "spool")
    add(spool, os.urandom(8000))
    add(spool, os.urandom(8000))
    spool.save_state()
    filler = tiny_tmpfs / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)  # fill the rest of the disk
    try:
        while True:
            os.write(fd, os.urandom(1024))
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    before = {p.name: p.read_bytes() for p in (tiny_tmpfs / "spool").iterdir()}
    with pytest.raises(SpoolError) as caught:
        add(spool, os.urandom(20000))
    assert caught.value.errno == errno.ENOSPC
    assert {p.name: p.read_bytes() for p in (tiny_tmpfs / "spool").iterdir()} == before
    assert [e.seq for e in spool_at(tiny_tmpfs / "spool").entries] == [1, 2]
    filler.unlink()
    add(spool, b"room again")
    assert [e.seq for e in spool.entries] == [1, 2, 4]  # the failed write used up number 3


def test_state_round_trips_and_a_bad_state_file_is_reported(tmp_path: Path) -> None:
    spool = spool_at(tmp_path / "s")
    spool.state.last_digest, spool.state.dropped_total, spool.state.in_doubt = "abc", 7, "gpu001-00000001-x"
    spool.save_state()
    again = spool_at(tmp_path / "s")
    assert (again.state.last_digest, again.state.dropped_total, again.state.in_doubt) == ("abc", 7, "gpu001-00000001-x")
    (tmp_path / "s" / STATE_NAME).write_bytes(b"{not json")
    broken = spool_at(tmp_path / "s")
    assert broken.state.last_digest is None
    assert events_of(broken) == ["spool_state_unreadable"]
    assert orjson.loads(broken.state.to_json())["last_seq"] == 0


def test_an_unusable_spool_dir_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(SpoolError, match=r"spool_dir .*file/s: Not a directory"):
        spool_at(tmp_path / "file" / "s")


def test_backoff_is_full_jitter_capped_and_resets() -> None:
    backoff = Backoff(base=0.5, cap=4.0, rng=random.Random(7))
    delays = [backoff.next_delay() for _ in range(200)]
    ceilings = [min(4.0, 0.5 * 2**i) for i in range(200)]
    assert all(0 <= d <= c for d, c in zip(delays, ceilings, strict=True))
    assert max(delays[10:]) > 3.0 and min(delays[10:]) < 1.0  # spread over [0, cap], not clustered at it
    backoff.reset()
    assert all(backoff.next_delay() <= 0.5 for _ in range(1)) and backoff.failures == 1
