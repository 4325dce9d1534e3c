#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian machine: the system packages (Ipopt for cyipopt,
# Chromium for the report test), then a virtual environment in .venv with gpusched
# (editable) and its dev tools.
# Sourced by scripts/demo.sh and scripts/test.sh; does nothing that is already done.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

# Debian packages: Ipopt for cyipopt; Chromium, in which the report test opens the
# HTML report headless. apt-get update runs once, and only when something is missing.
need=()
if ! command -v pkg-config >/dev/null || ! pkg-config --exists ipopt 2>/dev/null; then
    need+=(coinor-libipopt-dev liblapack-dev libblas-dev pkg-config)
fi
if ! command -v chromium >/dev/null; then
    need+=(chromium)
fi
if [ "${#need[@]}" -gt 0 ]; then
    echo "[setup] installing system packages: ${need[*]}" >&2
    sudo_cmd=""
    if [ "$(id -u)" != "0" ]; then sudo_cmd="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi

py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating .venv" >&2
    "$py" -m venv .venv
fi
stamp=.venv/.gpusched-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "[setup] installing gpusched and its dependencies into .venv" >&2
    .venv/bin/python -m pip install -q --upgrade pip
    # pip byte-compiles every module it installs on one core (about 45 of the 80 s of a
    # fresh set-up); compileall does it on every core. Compiled here, not left to the
    # imports: where PYTHONDONTWRITEBYTECODE is set, every test process compiled numpy
    # and the rest afresh (82 s more CPU in the suite). A module that does not compile
    # (a package's test data) is skipped, as pip skips it.
    .venv/bin/python -m pip install -q --no-compile -e ".[dev,forest]"
    .venv/bin/python -m compileall -q -j 0 .venv/lib >/dev/null 2>&1 || true
    touch "$stamp"
fi
