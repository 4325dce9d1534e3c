"""A campaign's local pool never outlives the campaign process, however it is stopped:
SIGKILL or SIGTERM of the campaign process alone, Ctrl-C (SIGINT) to it or to its whole
process group. (Ten SIGKILLs of a 300-run campaign once left three workers running
30 s later in eight of ten tries: they were the fork server's children.)"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from experiments.runner import _sweep_records

CAMPAIGN = """
name = "long"
policies = ["pr", "rg", "sts"]
seeds = 40
[[scenarios]]
generator = "synthetic"
nodes = 2
jobs = 14
epochs = [3, 8]
"""
WORKERS = 2


def _finished(store: Path) -> int:
    try:
        with sqlite3.connect(store) as conn:
            return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def _interruptible() -> None:
    """In the campaign's process before it starts: Ctrl-C at its default, as a terminal
    gives a command. A process started with SIGINT ignored keeps it ignored, and so
    did the campaign when the test's own process ignored it (seen in the whole suite
    under pytest-xdist: the campaign ran to its end and exited 0)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _gone(p: psutil.Process) -> bool:
    try:
        return not p.is_running() or p.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize(
    ("how", "code"),
    [("SIGKILL", -9), ("SIGTERM", 143), ("SIGINT", 130), ("SIGINT to the group", 130)],
)
def test_no_pool_process_outlives_a_stopped_campaign(tmp_path, how, code):
    cfg, store = tmp_path / "c.toml", tmp_path / "s.sqlite"
    cfg.write_text(CAMPAIGN)
    cmd = [sys.executable, "-m", "experiments.cli", "campaign", str(cfg), "--store", str(store)]
    proc = subprocess.Popen(
        [*cmd, "--workers", str(WORKERS), "--quiet"],
        start_new_session=True,  # a group of its own, as a shell gives a command
        preexec_fn=_interruptible,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    campaign = psutil.Process(proc.pid)
    deadline = time.monotonic() + 180
    while _finished(store) < 1 and time.monotonic() < deadline:  # the pool is at work
        time.sleep(0.1)
    pool = campaign.children(recursive=True)
    assert len(pool) >= WORKERS and _finished(store) < 3 * 40, "stop it while it runs"
    sig = signal.Signals[how.split()[0]]
    if how.endswith("group"):
        os.killpg(proc.pid, sig)  # Ctrl-C in a terminal
    else:
        os.kill(proc.pid, sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # hung: fail, leaving no process behind
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"the campaign did not stop within 60 s of {how}") from None
    assert proc.returncode == code, err
    if sig != signal.SIGKILL:  # a clean stop: one line, no traceback, no warning
        assert "Traceback" not in err and "Warning" not in err, err
        assert "the same command resumes it" in err
    deadline = time.monotonic() + 10
    while not all(_gone(p) for p in pool) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [" ".join(p.cmdline())[:80] for p in pool if not _gone(p)]
    assert not alive, f"still running {how} + 10 s: {alive}"
    # the folder of the runs' records: removed by the campaign, or if it was killed,
    # by the next campaign's sweep
    records = Path(tempfile.gettempdir()).glob(f"gpusched-runs-{proc.pid}-*")
    assert bool(list(records)) == (sig == signal.SIGKILL)
    _sweep_records()
    assert not list(Path(tempfile.gettempdir()).glob(f"gpusched-runs-{proc.pid}-*"))


def test_a_watched_orphan_exits_where_no_parent_death_signal_exists(tmp_path):
    """The fallback of systems without ``prctl``: a process watching its parent exits
    once the parent has died and it is adopted."""
    pid_file = tmp_path / "pid"
    child = (
        "import os, sys; from experiments.runner import _watch_parent; "
        "_watch_parent(int(sys.argv[1]), every=0.05)"
    )
    parent = (
        "import os, subprocess, sys; "
        f"p = subprocess.Popen([sys.executable, '-c', {child!r}, str(os.getpid())]); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))"  # and exit, not waiting for it
    )
    subprocess.run([sys.executable, "-c", parent], check=True, timeout=60)
    orphan = psutil.Process(int(pid_file.read_text()))
    deadline = time.monotonic() + 30
    while not _gone(orphan) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(orphan)
