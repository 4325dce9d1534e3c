"""Running a campaign: the runs not yet in the store, in local processes or on a Dask
cluster, each written to the store as soon as it finishes, with a progress bar.

Both back-ends go through the ``concurrent.futures`` interface (a process pool, or the
executor of a ``distributed.Client``), so they share one loop and one store writer.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from tqdm import tqdm

from experiments.campaign import Campaign
from experiments.execute import RunRecord, execute
from experiments.store import Store

PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass(frozen=True)
class CampaignOutcome:
    total: int  # runs in the grid
    skipped: int  # already in the store when the campaign started
    ran: int
    errors: tuple[str, ...]  # "key: message" of the runs that failed now


@contextlib.contextmanager
def _executor(scheduler: str | None, workers: int | None) -> Iterator[cf.Executor]:
    if scheduler is None:
        with _local_pool(workers or os.cpu_count() or 1) as ex:
            yield ex
        return
    from distributed import Client  # only when a cluster is asked for

    with Client(scheduler, timeout="30s") as client:
        yield client.get_executor()


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
        yield ex
    except BaseException:
        # the pool's own processes (ProcessPoolExecutor has no public way to stop them
        # before Python 3.14's terminate_workers)
        for process in list(getattr(ex, "_processes", {}).values()):
            process.kill()
        raise
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


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


def run_campaign(
    campaign: Campaign,
    store_path: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: bool = True,
    stream: TextIO | None = None,
) -> CampaignOutcome:
    """Run every run of ``campaign`` that ``store_path`` does not hold yet."""
    specs = campaign.runs()
    with Store(store_path, writer=True) as store:
        store.begin_campaign(campaign)
        done = store.finished(campaign.name)
        todo = [s for s in specs if s.key not in done]
        skipped = len(specs) - len(todo)
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
                with _executor(scheduler, workers) as ex:
                    futures = [ex.submit(execute, s) for s in todo]
                    try:
                        for fut in cf.as_completed(futures):
                            rec: RunRecord = fut.result()
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
