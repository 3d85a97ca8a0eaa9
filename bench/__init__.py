"""unifab's benchmark harness: speed and accuracy, side by side, as ratios measured in one run.

Run ``python -m bench --quick`` (small, < 2 minutes) or ``python -m bench`` (the full run) from the
repository root. Each figure is one module (``fig_*.py``) listed in :data:`bench.runner.FIGURES`;
see ``bench/README.md`` for the method and how to add a figure.
"""
