"""What the command writes where, seen from another process: its tables alone on
standard output, and a reader that stops reading (``| head``) is no error."""

from __future__ import annotations

import subprocess
import sys

CLI = [sys.executable, "-m", "experiments.cli"]


def test_standard_output_holds_the_table_and_no_solver_banner():
    # HiGHS printed its banner on standard output at the process's first Highs(),
    # into a table piped to a file
    done = subprocess.run(
        [*CLI, "solve", "tiny", "--policy", "lp"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("policy lp: worst-case rollout")
    assert "HiGHS" not in done.stdout and "Running HiGHS" in done.stderr


def test_a_reader_that_stops_reading_ends_the_command_quietly():
    # was "gpusched: error: Broken pipe" with status 2
    proc = subprocess.Popen(
        [*CLI, "compare", "tiny"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the first line: every write meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141  # 128 + SIGPIPE, as a shell shows it
    assert "Running HiGHS" in err
    assert "error" not in err.lower() and "Traceback" not in err and "Exception" not in err
