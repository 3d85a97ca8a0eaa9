#!/usr/bin/env bash
# Set up a virtualenv with the test dependencies, then run the whole suite, lint and type checks.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -e '.[dev]'
# A fresh temp root per run, removed afterwards: twin bundles are tens of thousands of small files, and
# pytest's own rotation of /tmp/pytest-of-$USER can spend minutes deleting earlier runs' bundles. It sits
# on tmpfs (/dev/shm) when there is one with room, where writing and removing them costs no disk I/O.
tmproot=${TMPDIR:-/tmp}
if [[ -z ${UNIFAB_TEST_TMP:-} && -d /dev/shm && -w /dev/shm ]] \
  && (( $(df -Pk /dev/shm | awk 'NR==2 {print $4}') > 4 * 1024 * 1024 )); then
  tmproot=/dev/shm
fi
basetemp=$(mktemp -d "${UNIFAB_TEST_TMP:-$tmproot}/unifab-tests.XXXXXX")
trap 'rm -rf "$basetemp"' EXIT
# -n auto: one worker per core (pytest-xdist); worksteal evens out the long twin tests.
.venv/bin/pytest --basetemp="$basetemp" -n auto --dist worksteal "$@"
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy --strict src/unifab
