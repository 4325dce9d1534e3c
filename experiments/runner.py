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
        # forkserver: workers start from a clean interpreter, not a copy of this one
        # (which may hold threads or an open SQLite connection)
        ctx = multiprocessing.get_context("forkserver")
        with cf.ProcessPoolExecutor(
            max_workers=workers or os.cpu_count(),
            mp_context=ctx,
            initializer=_die_with_campaign,
            initargs=(os.getpid(),),
        ) as ex:
            yield ex
        return
    from distributed import Client  # only when a cluster is asked for

    with Client(scheduler, timeout="30s") as client:
        yield client.get_executor()


def _die_with_campaign(campaign_pid: int) -> None:
    """In a pool process: be killed when the campaign process dies, not minutes later
    when the run at hand ends. The pool's parent is the forkserver, which exits when the
    campaign process does; Linux's parent-death signal then kills this process."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    try:  # the campaign may have died before the signal was armed
        os.kill(campaign_pid, 0)
    except ProcessLookupError:
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
