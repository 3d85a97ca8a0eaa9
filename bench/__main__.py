"""``python -m bench [--quick] [--only FIG ...] [--out bench/results]`` — run from the repository root."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from bench.common import BENCH_DIR
from bench.runner import FIGURES, run_figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="unifab benchmarks: speed and accuracy side by side, as ratios measured in one run. "
        "Prints one line per figure on stdout (progress on stderr) and writes <out>/latest.{json,md} "
        "(or quick.{json,md} with --quick).",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes only (< 2 minutes on 2 cores)")
    parser.add_argument(
        "--only",
        action="append",
        choices=list(FIGURES),
        metavar="FIG",
        help=f"run only this figure (repeatable): {', '.join(FIGURES)}",
    )
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results", help="results directory")
    parser.add_argument("--sizes", help="full-check sizes in GPUs, comma-separated (overrides the defaults)")
    parser.add_argument(
        "--size-budget-min",
        type=float,
        default=None,
        help="minutes one full-check size may take, generation included (default 25); larger sizes "
        "projected to exceed it are reported as not run",
    )
    parser.add_argument("--scratch", type=Path, default=None, help="parent directory for twin bundles (default /tmp)")
    parser.add_argument("--keep-scratch", action="store_true", help="keep the generated bundles")
    parser.add_argument(
        "--setup-peer",
        action="store_true",
        help="create the SuzieQ virtualenv if missing (pip from PyPI into a Python <= 3.9; a few minutes)",
    )
    args = parser.parse_args(argv)
    names = args.only or list(FIGURES)
    names = [n for n in FIGURES if n in names]  # run in the registry's order
    sizes = [int(s.replace("_", "").replace(",", "")) for s in args.sizes.split(",")] if args.sizes else None
    results = run_figures(
        names,
        quick=args.quick,
        out=args.out,
        scratch_parent=args.scratch,
        keep_scratch=args.keep_scratch,
        sizes=sizes,
        size_budget_s=args.size_budget_min * 60 if args.size_budget_min is not None else None,
        setup_peer=args.setup_peer,
        command="python -m bench " + shlex.join(sys.argv[1:] if argv is None else argv),
    )
    return 0 if all(r.skipped is None or "harness error" not in r.skipped for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
