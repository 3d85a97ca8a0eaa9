#!/usr/bin/env bash
# Set up a virtualenv with the test dependencies, then run the whole suite, lint and type checks.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -e '.[dev]'
# A fresh temp root per run, removed afterwards: twin bundles are large, and pytest's own rotation of
# /tmp/pytest-of-$USER can spend minutes deleting earlier runs' bundles.
basetemp=$(mktemp -d "${TMPDIR:-/tmp}/unifab-tests.XXXXXX")
trap 'rm -rf "$basetemp"' EXIT
.venv/bin/pytest --basetemp="$basetemp" "$@"
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy --strict src/unifab
