#!/usr/bin/env bash
# The tests: set up if needed, then run the whole pytest suite (solver tests included),
# one pytest-xdist worker per core (-n auto; pass -n 0 to run in one process), a worker
# that runs out taking the other's queued tests (--dist worksteal: the suite's slow tests
# are a few long solver proofs, and plain load scheduling left one worker idle at the end).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$repo/scripts/setup.sh"
cd "$repo"
exec .venv/bin/python -m pytest -n auto --dist worksteal "$@"
