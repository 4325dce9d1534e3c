"""Running a campaign: the runs not yet in the store, in local processes or on a Dask
cluster, each written to the store as soon as it finishes, with a progress bar.

Both back-ends go through the ``concurrent.futures`` interface (a process pool, or the
executor of a ``distributed.Client``), so they share one loop and one store writer.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import functools
import multiprocessing
import os
import pickle
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from experiments.campaign import Campaign, RunSpec
from experiments.campaign_file import CampaignError
from experiments.execute import RunRecord, execute, instance_id
from experiments.store import Store
from instances import InstanceError

PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass(frozen=True)
class CampaignOutcome:
    total: int  # runs in the grid
    skipped: int  # already in the store when the campaign started
    ran: int
    errors: tuple[str, ...]  # "key: message" of the runs that failed now


@dataclass(frozen=True)
class _Backend:
    """Where runs execute: the executor, what its workers run for a spec, and how this
    process reads what they return as a record."""

    executor: cf.Executor
    task: Callable[[RunSpec], Any]
    record: Callable[[Any], RunRecord]


@contextlib.contextmanager
def _executor(scheduler: str | None, workers: int | None, runs: int) -> Iterator[_Backend]:
    """Where ``runs`` runs go: a Dask cluster, or local processes (``workers``, by
    default one per core), no more than the runs: each one is a Python that imports the
    solvers, for nothing where it gets no run."""
    if scheduler is None:
        _sweep_records()
        with (
            tempfile.TemporaryDirectory(prefix=f"{_RECORDS}{os.getpid()}-") as folder,
            _local_pool(min(workers or os.cpu_count() or 1, runs)) as ex,
        ):
            yield _Backend(ex, functools.partial(_execute_to_file, folder=folder), _read_record)
        return
    from distributed import Client  # only when a cluster is asked for

    with Client(scheduler, timeout="30s") as client:
        yield _Backend(client.get_executor(), execute, _same)


# the temporary folders holding the records of local runs: gpusched-runs-PID-XXXX
_RECORDS = "gpusched-runs-"


def _sweep_records() -> None:
    """Remove the record folders of campaign processes that died without removing them
    (killed by SIGKILL): a few files each, of runs never stored."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_RECORDS}*-*"):
        pid = folder.name.removeprefix(_RECORDS).split("-")[0]
        if not pid.isdigit() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:  # alive, but another user's
            continue


def _same(record: RunRecord) -> RunRecord:
    return record


def _execute_to_file(spec: RunSpec, folder: str) -> str:
    """In a pool process: run ``spec``, leave its record (or the exception of a bug) in a
    file of ``folder``, and return the file's path.

    So the message back through the pool's pipe is a few hundred bytes, written at once
    (a write of at most PIPE_BUF bytes to a pipe is atomic). A record of tens of kB sent
    whole could be cut by the kill of its worker (Ctrl-C, SIGTERM), and the pool's
    result thread would wait forever for the rest: the stopped campaign would hang."""
    try:
        outcome: RunRecord | Exception = execute(spec)
    except Exception as exc:  # a bug: raised in the campaign process, as it would be
        outcome = exc
    fd, path = tempfile.mkstemp(dir=folder, suffix=".pickle")
    with os.fdopen(fd, "wb") as f:
        try:
            pickle.dump(outcome, f)
        except Exception:  # an exception that does not pickle
            f.seek(0)
            f.truncate()
            pickle.dump(RuntimeError(f"{spec.key}: {outcome!r}"), f)
    return path


def _read_record(path: str) -> RunRecord:
    """The record a pool process left in ``path`` (a file of this campaign's private
    temporary folder), which goes; a bug's exception is raised here."""
    with open(path, "rb") as f:
        outcome = pickle.load(f)
    os.unlink(path)
    if isinstance(outcome, Exception):
        raise outcome
    assert isinstance(outcome, RunRecord)
    return outcome


@contextlib.contextmanager
def _local_pool(workers: int) -> Iterator[cf.ProcessPoolExecutor]:
    """A pool of local processes that never outlive the campaign process.

    "spawn": each worker is a child of this process, started from a clean interpreter
    (not a copy of this one, which may hold threads or an open SQLite connection), so
    that Linux's parent-death signal kills it when this process dies, however it dies
    (SIGKILL, SIGTERM). Under "forkserver" the workers were the fork server's children,
    and the fork server lives while any worker holds its pipe: nothing ever died.
    If the campaign stops early (Ctrl-C, a store that cannot be written), the runs at
    hand are killed, not finished for minutes: they are not in the store, and the same
    command reruns them."""
    ex = cf.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_die_with_campaign,
        initargs=(os.getpid(),),
    )
    try:
        _start_workers(ex, workers)
        yield ex
    except BaseException:
        # the pool's own processes (ProcessPoolExecutor has no public way to stop them
        # before Python 3.14's terminate_workers)
        for process in list(getattr(ex, "_processes", {}).values()):
            process.kill()
        raise
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


def _start_workers(ex: cf.ProcessPoolExecutor, workers: int) -> None:
    """Start every worker with Ctrl-C ignored from its first instruction: a worker
    still starting (importing, before its initializer) when Ctrl-C reached the process
    group printed a KeyboardInterrupt traceback. An ignored signal stays ignored across
    exec, and Python installs its own Ctrl-C handler only where none is set; each
    submit starts one worker while none is idle."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:
        return  # only the main thread may set handlers; None: not set from Python
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        started = [ex.submit(os.getpid) for _ in range(workers)]
    finally:
        signal.signal(signal.SIGINT, previous)
    cf.wait(started)


def _die_with_campaign(campaign_pid: int) -> None:
    """In a pool process: die with the campaign process, not when the run at hand ends.

    On Linux the kernel sends SIGKILL when the parent (the campaign process: the pool
    spawns from the thread that submits, which lives as long as the pool) dies;
    elsewhere a thread watches the parent. Ctrl-C reaches the whole process group: the
    campaign process alone answers it (it kills the pool), so a worker ignores it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    else:
        threading.Thread(target=_watch_parent, args=(campaign_pid,), daemon=True).start()
    if os.getppid() != campaign_pid:  # the campaign died before the signal was armed
        os._exit(1)


def _watch_parent(campaign_pid: int, every: float = 0.5) -> None:
    """Exit this process once its parent is no longer ``campaign_pid`` (an orphan is
    adopted by another process: the campaign died)."""
    while os.getppid() == campaign_pid:
        time.sleep(every)
    os._exit(1)


def _same_inputs(campaign: Campaign, store: Store, resumed: set[str]) -> None:
    """Refuse to resume where a file a scenario reads (an instance file, a stopping fit)
    has changed since its finished runs: the campaign's text names the file, not its
    contents, so the new runs would sit beside the old in one report, made from two
    different instances. One finished run per such scenario is rebuilt and compared
    by the instance it ran on."""
    ran = store.instance_ids(campaign.name)
    for sc in campaign.scenarios:
        files = [(k, v) for k, v in sc.params if k in ("path", "stops")]
        if not files or sc.label not in resumed:
            continue
        seed = next((seed for (label, seed) in ran if label == sc.label), None)
        if seed is None:
            continue
        where = f"{sc.label}.{'/'.join(k for k, _ in files)}"
        shown = files[0][1] if len(files) == 1 else [v for _, v in files]
        try:
            now = instance_id(sc.instance(seed))
        except (InstanceError, ValueError, OSError) as exc:
            raise CampaignError(where, shown, str(exc)) from None
        if now != ran[sc.label, seed]:
            raise CampaignError(
                where,
                shown,
                f"the file changed since the runs already in store {str(store.path)!r} "
                "(the instance differs); restore it, or run into another store",
            )


def run_campaign(
    campaign: Campaign,
    store_path: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = True,
    stream: TextIO | None = None,
    started: Callable[[int, int], None] | None = None,
) -> CampaignOutcome:
    """Run every run of ``campaign`` that ``store_path`` does not hold yet.

    ``started(todo, skipped)`` is called once the store has accepted the campaign (its
    text, the files its finished runs read), before any run starts: a caller that
    announces the work says nothing of runs a refusal would not make."""
    specs = campaign.runs()
    with Store(store_path, writer=True) as store:
        store.begin_campaign(campaign)
        done = store.finished(campaign.name)
        todo = [s for s in specs if s.key not in done]
        if todo and done:
            _same_inputs(campaign, store, {s.scenario.label for s in todo})
        skipped = len(specs) - len(todo)
        if started is not None:
            started(len(todo), skipped)
        errors: list[str] = []
        bar = tqdm(
            total=len(specs),
            initial=skipped,
            desc=campaign.name,
            unit="run",
            disable=not progress,
            file=stream or sys.stderr,
            mininterval=0.5,
        )
        with bar:
            if todo:
                with _executor(scheduler, workers, len(todo)) as backend:
                    futures = [backend.executor.submit(backend.task, s) for s in todo]
                    try:
                        for fut in cf.as_completed(futures):
                            rec = backend.record(fut.result())
                            store.save(rec)
                            if rec.status != "ok":
                                errors.append(f"{rec.spec.key}: {rec.error}")
                            bar.update()
                    except BaseException:
                        # a store that cannot be written (full disk), or an interrupt: the
                        # queued runs are dropped, not run for nothing
                        for f in futures:
                            f.cancel()
                        raise
    return CampaignOutcome(len(specs), skipped, len(todo), tuple(errors))
