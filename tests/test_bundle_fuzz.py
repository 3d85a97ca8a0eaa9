"""Whole-bundle fuzzing: a real twin bundle, mutated file by file, never makes the loader or a check crash.

Each example takes a 64-GPU twin (every scenario injected) held in a :class:`~unifab.sources.MemorySource`
and damages a few of its files the ways real collections go wrong: truncated mid-write, emptied, replaced by
binary garbage or by another device's file, a huge file, a file turned into a directory, a value swapped for a
hostile string (control characters, shell metacharacters, a very long name). The whole fabric is then loaded
and every check runs. What must hold on every example: no exception escapes, every damaged file that is
reported is reported by its own path, and the devices that were not touched are still read and checked.

Links, permissions and FIFOs cannot be expressed in memory; tests/sources/test_hostile_bundles.py puts them in
a real directory. The budget is fixed (``max_examples``) so CI time stays bounded; ``UNIFAB_FUZZ_EXAMPLES``
raises it for a longer local run.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unifab.checks.runner import run_checks
from unifab.collect.bundle import load_bundle
from unifab.model import Fabric
from unifab.sources import MemorySource

EXAMPLES = int(os.environ.get("UNIFAB_FUZZ_EXAMPLES", "25"))
HOSTILE = ("\x1b[2J\x1b]0;owned\x07", "Ethernet0;sudo reboot", "$(id)`id`", "a\nb", "x" * 5000, "\u202e", "\x00")


@pytest.fixture(scope="module")
def twin_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    from unifab.twin.generate import generate
    from unifab.twin.scenarios import SCENARIOS

    out = tmp_path_factory.mktemp("fuzz") / "bundle"
    generate(out, gpus=64, seed=5, scenarios=tuple(SCENARIOS), switch_os="mixed")
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def clean(twin_files: dict[str, bytes]) -> Fabric:
    return load_bundle(MemorySource(twin_files, label="twin"))


def _truncate(data: bytes, draw: Callable[..., int]) -> bytes:
    return data[: draw(st.integers(0, max(0, len(data) - 1)))]


def _garbage(data: bytes, draw: Callable[..., bytes]) -> bytes:
    return draw(st.binary(min_size=1, max_size=512))


def _hostile_value(data: bytes, draw: Callable[..., str]) -> bytes:
    """Swap one token of the file for a hostile string, keeping the rest of its structure."""
    text = data.decode("utf-8", "replace")
    words = [w for w in text.replace('"', " ").split() if w.isidentifier() or any(c.isdigit() for c in w)]
    if not words:
        return data
    victim = draw(st.sampled_from(words[:200]))
    return text.replace(victim, draw(st.sampled_from(HOSTILE)), 1).encode("utf-8", "surrogatepass")


def _huge(data: bytes, draw: Callable[..., int]) -> bytes:
    return data + b" " * (9 * 1024 * 1024)


MUTATIONS = {"truncate": _truncate, "garbage": _garbage, "hostile": _hostile_value, "huge": _huge}


def _device_of(path: str) -> str | None:
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] in ("hosts", "switches") else None


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_a_damaged_bundle_loads_checks_and_names_what_it_could_not_read(
    data: st.DataObject, twin_files: dict[str, bytes], clean: Fabric
) -> None:
    files = dict(twin_files)
    paths = sorted(files)
    victims = data.draw(st.lists(st.sampled_from(paths), min_size=1, max_size=4, unique=True), label="files")
    for path in victims:
        kind = data.draw(st.sampled_from([*MUTATIONS, "directory", "other-file"]), label=path)
        if kind == "directory":  # a directory where a file should be
            files.pop(path)
            files[f"{path}/stray.txt"] = b"not the file you expected\n"
        elif kind == "other-file":  # another device's file of another kind in its place
            files[path] = twin_files[data.draw(st.sampled_from(paths), label="donor")]
        else:
            files[path] = MUTATIONS[kind](files[path], data.draw)

    fabric = load_bundle(MemorySource(files, label="fuzzed"))
    findings = run_checks(fabric)  # no exception escapes either step

    for f in fabric.input_findings:
        named = f.evidence.get("file") or f.subject.get("id") or ""
        assert named, f"input finding names no file: {f}"
    touched = {d for d in map(_device_of, victims) if d}
    untouched_hosts = set(clean.hosts) - touched
    untouched_switches = set(clean.switches) - touched
    assert untouched_hosts <= set(fabric.hosts), "a host with no damaged file was not read"
    assert untouched_switches <= set(fabric.switches), "a switch with no damaged file was not read"
    assert all(f.check for f in findings)


def test_the_fuzzer_sees_damage(twin_files: dict[str, bytes]) -> None:
    """The fuzz test's premise: damaging a file the loader reads is reported by that file's path."""
    target = next(p for p in sorted(twin_files) if p.endswith("config_db.json"))
    files = dict(twin_files) | {target: b'{"PORT": {'}
    fabric = load_bundle(MemorySource(files, label="fuzzed"))
    assert any(target in str(f.evidence) or target in f.message for f in fabric.input_findings)
