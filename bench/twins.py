"""Twin bundles for the figures: generated once per run with ``unifab twin generate``, shared, then removed.

Figures declare the sizes they need up front (``twin_sizes(quick)``); the runner claims them, and a
bundle is deleted as soon as no remaining figure needs it, which keeps the peak disk use to what
the figures running at that moment need.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from bench.common import ChildRun, log, run_child, unifab_argv

SEED = 7


def scenario_names() -> tuple[str, ...]:
    from unifab.twin.scenarios import SCENARIOS

    return tuple(SCENARIOS)


@dataclass(frozen=True, slots=True)
class Twin:
    gpus: int
    path: Path
    generate_s: float
    files: int | None = None

    @property
    def hosts(self) -> int:
        return sum(1 for p in (self.path / "hosts").iterdir() if p.is_dir())

    def links(self) -> int:
        """Planned cables in the bundle (rows of ``plan/cabling.csv`` after the header)."""
        with (self.path / "plan" / "cabling.csv").open("rb") as fh:
            return max(0, sum(1 for line in fh if line.strip()) - 1)


class TwinError(RuntimeError):
    pass


class TwinCache:
    def __init__(self, scratch: Path) -> None:
        self.root = scratch / "twins"
        self._twins: dict[int, Twin] = {}
        self._claims: dict[int, set[str]] = {}
        self.generations: dict[int, ChildRun] = {}

    def claim(self, user: str, gpus: int) -> None:
        self._claims.setdefault(gpus, set()).add(user)

    def release(self, user: str, gpus: int) -> None:
        """``user`` is done with this size (idempotent); the bundle goes when nobody else needs it."""
        users = self._claims.setdefault(gpus, set())
        users.discard(user)
        if not users and gpus in self._twins:
            twin = self._twins.pop(gpus)
            log(f"removing the {gpus:,}-GPU twin")
            shutil.rmtree(twin.path, ignore_errors=True)

    def get(self, gpus: int, *, timeout_s: float = 3600) -> Twin:
        """The bundle of this size, generating it on first use (timed: the figures report it)."""
        if gpus in self._twins:
            return self._twins[gpus]
        out = self.root / f"gpus-{gpus}"
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        argv = [*unifab_argv(), "twin", "generate", "--gpus", str(gpus), "--out", str(out), "--seed", str(SEED)]
        for name in scenario_names():
            argv += ["--scenario", name]
        log(f"generating a {gpus:,}-GPU twin (all scenarios, seed {SEED})")
        run = run_child(argv, timeout_s=timeout_s)
        self.generations[gpus] = run
        if not run.ok or run.returncode != 0:
            shutil.rmtree(out, ignore_errors=True)
            raise TwinError(f"unifab twin generate --gpus {gpus} failed: {run.describe_failure()}")
        twin = Twin(gpus, out, run.wall_s)
        self._twins[gpus] = twin
        return twin

    def cleanup(self) -> None:
        for gpus in list(self._twins):
            self._claims[gpus] = set()
            self.release("cleanup", gpus)
        shutil.rmtree(self.root, ignore_errors=True)
