#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian machine: the system libraries cyipopt builds
# against, then a virtual environment in .venv with gpusched (editable) and its dev tools.
# Sourced by scripts/demo.sh and scripts/test.sh; does nothing that is already done.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

if ! pkg-config --exists ipopt 2>/dev/null || ! command -v pkg-config >/dev/null; then
    echo "[setup] installing system packages for Ipopt (cyipopt)" >&2
    sudo_cmd=""
    if [ "$(id -u)" != "0" ]; then sudo_cmd="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq coinor-libipopt-dev liblapack-dev libblas-dev pkg-config >/dev/null
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
    .venv/bin/python -m pip install -q -e ".[dev]"
    touch "$stamp"
fi
