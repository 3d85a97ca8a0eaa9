"""YAML is read through one bounded loader (``unifab.errors.load_yaml``): a recursive alias, a billion-laughs
document or nesting deep enough to exhaust the stack is an error naming the file and line, in every command
that reads YAML, never a RecursionError, a hang or gigabytes of memory."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from unifab.errors import ParseError, YamlError, load_yaml

UNIFAB = [sys.executable, "-m", "unifab.cli"]

RECURSIVE = "version: 1\nqos: &x [*x]\n"
LAUGHS = "version: 1\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10)
)
DEEP = "version: 1\nqos: " + "[" * 5000 + "]" * 5000 + "\n"


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (RECURSIVE, 2, "recursive alias"),
        ("x: &x {a: *x}\n", 1, "recursive alias"),
        (LAUGHS, None, "aliases are expanded"),
        (DEEP, 2, "nesting depth"),
        ("qos: " + "[" * 150 + "]" * 150 + "\n", 1, "levels deep"),
        ("a: [1, 2\n", 2, "YAML"),
        ("a: 1\n---\nb: 2\n", 2, "more than one document"),
        ("a: *nowhere\n", 1, "names no anchor"),
        ("!!python/object/apply:os.system ['true']\n", 1, "constructor"),
    ],
)
def test_hostile_yaml_is_an_error_naming_file_and_line(text: str, line: int | None, needle: str) -> None:
    started = time.monotonic()
    with pytest.raises(YamlError) as err:
        load_yaml(text, "f.yaml")
    assert time.monotonic() - started < 5
    assert isinstance(err.value, ParseError)
    assert err.value.source == "f.yaml" and needle in str(err.value)
    if line is not None:
        assert err.value.line == line
    assert str(err.value).startswith("f.yaml")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "# only a comment\n",
        "a: 1\nb: [x, {c: 2.5, d: null, e: yes}]\n",
        "base: &b {mtu: 9000}\nport1: *b\nport2: {<<: *b, speed: 400G}\n",
        "- 1\n- - 2\n  - 3\n",
        "t: 2024-01-01\nn: ~\ns: 'quoted: x'\nbin: !!binary aGk=\n",
    ],
)
def test_ordinary_yaml_reads_as_safe_load_does(text: str) -> None:
    assert load_yaml(text, "f.yaml") == yaml.safe_load(text)


def test_shared_aliases_within_the_budget_are_read() -> None:
    text = "p: &p {mtu: 9000, pfc: [3]}\n" + "".join(f"swp{i}: *p\n" for i in range(500))
    doc = load_yaml(text, "f.yaml")
    assert doc["swp499"] == {"mtu": 9000, "pfc": [3]}


@pytest.mark.parametrize("name", ["recursive", "laughs", "deep"])
def test_render_names_the_intent_file_and_exits_2(tmp_path: Path, name: str) -> None:
    intent = tmp_path / f"{name}.yaml"
    intent.write_text({"recursive": RECURSIVE, "laughs": LAUGHS, "deep": DEEP}[name])
    proc = subprocess.run(
        [*UNIFAB, "render", str(intent), "--gpus", "8", "--out", str(tmp_path / "out"), "-q"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"unifab: error: {intent}"), proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["recursive", "laughs"])
def test_check_reports_a_hostile_bundle_intent_as_a_finding(tmp_path: Path, name: str) -> None:
    from unifab.twin.generate import generate

    bundle = tmp_path / "b"
    generate(bundle, gpus=8)
    (bundle / "fabric.yaml").write_text(RECURSIVE if name == "recursive" else LAUGHS)
    proc = subprocess.run(
        [*UNIFAB, "check", str(bundle), "-q", "--format", "json", "--fail-on", "never"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    [finding] = [f for f in json.loads(proc.stdout)["findings"] if f["subject"].get("path") == "fabric.yaml"]
    assert finding["check"] == "INPUT-UNREADABLE"
    assert ("recursive alias" if name == "recursive" else "aliases are expanded") in finding["message"]


def test_an_inventory_alias_bomb_is_a_parse_error_naming_the_line() -> None:
    from unifab.collect.inventory import load_inventory

    with pytest.raises(ParseError) as err:
        load_inventory("devices: &d [*d]\n", "inventory.yaml")
    assert err.value.source == "inventory.yaml" and err.value.line == 1
    assert "recursive alias" in str(err.value)
    with pytest.raises(ParseError, match="aliases are expanded"):
        load_inventory(LAUGHS.replace("version: 1\n", "devices: []\n"), "inventory.yaml")


def test_every_yaml_load_in_the_package_goes_through_the_bounded_loader() -> None:
    """No module but unifab/errors.py calls PyYAML's loaders (safe_load, load, compose, ...) itself."""
    import re

    src = Path(__file__).resolve().parents[2] / "src" / "unifab"
    calls = re.compile(r"yaml\.(safe_load|load|load_all|safe_load_all|compose|compose_all|full_load|unsafe_load)\(")
    offenders = [
        f"{p.relative_to(src)}:{n}"
        for p in src.rglob("*.py")
        if p.name != "errors.py" or p.parent != src
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if calls.search(line) and not line.lstrip().startswith(("#", "``"))
    ]
    assert offenders == []
