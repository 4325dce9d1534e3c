#!/usr/bin/env bash
# The demo: set up if needed, then roll out FIFO on a bundled instance and print the
# evaluator's cost table.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$repo/scripts/setup.sh"
exec "$repo/.venv/bin/gpusched" demo "$@"
