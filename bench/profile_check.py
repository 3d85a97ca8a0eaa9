"""Profile one ``unifab check`` (the same calls the CLI makes) with cProfile: ``python bench/profile_check.py BUNDLE``.

Prints the phase times, then the top functions by own time and by cumulative time. The bundle is read serially
(``--workers 1``, the default) so that the profile holds all of the reading. Optional
``--out FILE.prof`` keeps the raw profile for ``python -m pstats`` or snakeviz. Not a figure: a tool for
finding out *why* a figure is what it is.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python bench/profile_check.py")
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", type=Path, default=None, help="write the raw cProfile data here")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes to read the bundle with (default 1: the profiler sees only this process)",
    )
    args = parser.parse_args(argv)

    from unifab.checks.runner import run_checks
    from unifab.collect.bundle import load_bundle
    from unifab.jsonify import dumps
    from unifab.report.findings_json import document

    prof = cProfile.Profile()
    phases: dict[str, float] = {}
    prof.enable()
    t0 = time.perf_counter()
    fabric = load_bundle(args.bundle, workers=args.workers)
    t1 = time.perf_counter()
    findings = run_checks(fabric)
    t2 = time.perf_counter()
    text = dumps(document(str(args.bundle), findings))
    t3 = time.perf_counter()
    prof.disable()
    phases = {"load_bundle": t1 - t0, "run_checks": t2 - t1, "render_json": t3 - t2}
    print(f"bundle {args.bundle}: {len(fabric.hosts)} hosts, {len(fabric.links)} links, {len(findings)} findings")
    print("phases under the profiler: " + ", ".join(f"{k} {v:.2f} s" for k, v in phases.items()))
    print(f"JSON output {len(text):,} bytes")
    for key in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(key).print_stats(args.top)
        print(f"\n=== top {args.top} by {key} ===")
        print(buf.getvalue().split("\n", 6)[-1] if "ncalls" in buf.getvalue() else buf.getvalue())
    if args.out:
        prof.dump_stats(args.out)
        print(f"raw profile: {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
