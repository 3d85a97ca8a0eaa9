"""Imports only point down the layers of docs/architecture.md, and no two modules import each other in a ring.

Every ``import unifab...`` counts, wherever it stands (top level, inside a function, under TYPE_CHECKING):
a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Lowest first. A module may import its own package and any package of a lower layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("platforms",),
    ("jsonify", "profile", "layout"),
    ("qos", "model"),
    ("snapshot",),
    ("parse",),
    ("render",),
    ("checks",),
    ("intent_presets", "intent_health"),
    ("intent",),
    ("sources",),
    ("collect",),
    ("session", "fabric_plan", "change_plan", "report", "health"),
    ("twin",),
    ("api",),
    ("serve",),  # unifab serve: built on api (and the layers below), started by cli
    ("agent",),  # the host agent: collects through collect/, pushes to serve's ingest, applies render/'s NIC plan
    ("cli",),
    ("__main__",),
    ("",),  # the package root: re-exports unifab.api, lazily
)
RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}


def module_name(path: Path, root: Path = SRC) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree: ast.AST, modules: set[str]) -> Iterator[str]:
    """The project modules a module's code imports (``from a import b`` counts ``a.b`` when it is a module)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module for a in node.names
            ]
        else:
            continue
        for imported in names:
            name = imported
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name.startswith("unifab"):
                yield name


def graph(root: Path = SRC) -> dict[str, set[str]]:
    files = {module_name(p, root): p for p in (root / "unifab").rglob("*.py")}
    modules = set(files)
    return {m: set(imports(ast.parse(p.read_text(encoding="utf-8")), modules)) - {m} for m, p in files.items()}


def package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def backward_imports(edges: dict[str, set[str]]) -> list[str]:
    out = []
    for src, targets in sorted(edges.items()):
        for dst in sorted(targets):
            a, b = package(src), package(dst)
            if b in (a, ""):
                if b == "" and a not in ("api", "cli", "__main__", ""):
                    out.append(f"{src} -> {dst} (the package root is the public API, above every layer)")
                continue
            if a not in RANK or b not in RANK:
                out.append(f"{src} -> {dst}: {a if a not in RANK else b} has no layer in LAYERS")
            elif RANK[b] >= RANK[a]:
                out.append(f"{src} -> {dst}: {a} (layer {RANK[a]}) may not import {b} (layer {RANK[b]})")
    return out


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in edges:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_every_package_has_a_layer() -> None:
    packages = {package(m) for m in graph()} - {""}
    assert sorted(packages - set(RANK)) == []


def test_imports_only_point_down() -> None:
    assert backward_imports(graph()) == []


def test_no_import_cycles_between_modules() -> None:
    assert cycles(graph()) == []


def test_the_layer_test_catches_a_backward_import(tmp_path: Path) -> None:
    """A deliberate upward import (checks -> cli) and a ring (parse.a <-> parse.b) are reported."""
    pkg = tmp_path / "unifab"
    for sub in ("checks", "cli", "parse"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "checks" / "bad.py").write_text("from unifab.cli import app\n")
    (pkg / "cli" / "app.py").write_text("def app() -> None: ...\n")
    (pkg / "parse" / "a.py").write_text("def f() -> None:\n    from unifab.parse import b\n")
    (pkg / "parse" / "b.py").write_text("from unifab.parse.a import f\n")
    edges = graph(tmp_path)
    assert backward_imports(edges) == [
        f"unifab.checks.bad -> unifab.cli.app: checks (layer {RANK['checks']}) may not import cli (layer {RANK['cli']})"
    ]
    assert cycles(edges) == [["unifab.parse.a", "unifab.parse.b"]]


@pytest.mark.parametrize("limit", [800])
def test_module_sizes(limit: int) -> None:
    sizes = {module_name(p): len(p.read_text(encoding="utf-8").splitlines()) for p in (SRC / "unifab").rglob("*.py")}
    too_big = {m: n for m, n in sizes.items() if n > limit}
    assert too_big == {}
