#!/usr/bin/env bash
# Set up a virtualenv with the test dependencies, then run the whole suite, lint and type checks.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -e '.[dev]'
.venv/bin/pytest "$@"
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy --strict src/unifab
