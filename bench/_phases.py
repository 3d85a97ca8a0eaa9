"""Child process: where one in-process check of a bundle spends its time (``python bench/_phases.py BUNDLE``).

Phases: importing unifab, ``load_bundle`` (read + parse every file), ``run_checks`` (checks over
the loaded fabric, run twice: the second run is what a re-check over an already loaded fabric
costs), and rendering the JSON document. Prints one JSON object; uses only unifab's library API.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    bundle = Path(sys.argv[1])
    t0 = time.perf_counter()
    from unifab.checks.runner import run_checks
    from unifab.collect.bundle import load_bundle
    from unifab.jsonify import dumps
    from unifab.report.findings_json import document

    t1 = time.perf_counter()
    fabric = load_bundle(bundle)
    t2 = time.perf_counter()
    findings = run_checks(fabric)
    t3 = time.perf_counter()
    again = run_checks(fabric)
    t4 = time.perf_counter()
    text = dumps(document(str(bundle), findings))
    t5 = time.perf_counter()
    print(
        json.dumps(
            {
                "import_s": t1 - t0,
                "load_bundle_s": t2 - t1,
                "run_checks_s": t3 - t2,
                "run_checks_again_s": t4 - t3,
                "render_json_s": t5 - t4,
                "findings": len(findings),
                "findings_again": len(again),
                "json_bytes": len(text),
                "hosts": len(fabric.hosts),
                "switches": len(fabric.switches),
                "links": len(fabric.links),
            }
        )
    )


if __name__ == "__main__":
    main()
