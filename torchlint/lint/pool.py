"""Worker processes that may die: a death costs the one file it was working
on, never the run, and the workers never outlive the parent.

``concurrent.futures`` cannot say which task killed a worker (every pending
future fails alike) and waits for all pending work on exit, so a crash or a
Ctrl-C costs the whole run.  Here each worker handles one task at a time over
its own pipe, so the parent knows what a dead worker was doing, and the
parent stops its workers as soon as it is interrupted.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from functools import partial
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Deque, Generic, List, Optional, Sequence, Tuple, TypeVar, Union

from torchlint.source.parsing import on_deep_stack, run_as_sacrificial_process

R = TypeVar("R")

_PR_SET_PDEATHSIG = 1
_STOP_GRACE_SECONDS = 1.0


@dataclass(frozen=True)
class Died:
    """A task whose worker died or failed; ``reason`` says how."""

    reason: str


@dataclass
class _Worker(Generic[R]):
    process: Any  # multiprocessing.Process (its type differs per start method)
    connection: Connection
    task: Optional[int] = None


def _die_with_parent(parent: int) -> None:
    """End this worker when the parent ends, however it ends."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl
            pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="torchlint-parent-watch", daemon=True).start()


def _serve(connection: Connection, work: Callable[..., Any], parent: int,
           initializer: Optional[Callable[[], None]]) -> None:
    """A worker's life: run tasks from the pipe until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides about Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent(parent)
    run_as_sacrificial_process()
    from torchlint.source.reads import watched

    watched(None)  # a replay record is the parent's: what a worker reads reaches it through the run record
    if initializer is not None:
        initializer()
    # The whole loop on the deep stack: what needs it (a file's lint) runs there without a hand-over.
    on_deep_stack(_tasks, connection, work)


def _tasks(connection: Connection, work: Callable[..., Any]) -> None:
    """Run tasks from the pipe until told to stop."""
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        index, arguments = message
        try:
            result: Any = work(*arguments)
        except BaseException as error:  # reported as this task's failure
            result = Died(f"raised {type(error).__name__}: {error}")
        try:
            connection.send((index, result))
        except Exception as error:  # e.g. a result that cannot be pickled
            connection.send((index, Died(f"could not send its result: {type(error).__name__}: {error}")))


def _reason(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"was killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


def run_pool(
    work: Callable[..., R],
    tasks: Sequence[Tuple[Any, ...]],
    jobs: int,
    on_result: Callable[[int, "Union[R, Died]"], None],
    initializer: Optional[Callable[[], None]] = None,
) -> None:
    """Call ``work(*task)`` for each task in up to ``jobs`` processes and
    hand each result (or :class:`Died`) to ``on_result`` in the parent, as
    it arrives (``initializer`` runs first in each worker).  A worker that dies is replaced; its task is not retried.
    On any exception (Ctrl-C included) the workers are stopped before it
    propagates."""
    methods = multiprocessing.get_all_start_methods()
    context: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    queue: Deque[int] = deque(range(len(tasks)))
    workers: List[_Worker[R]] = []
    finished = False

    def start() -> _Worker[R]:
        ours, theirs = context.Pipe()
        process = context.Process(target=_serve, args=(theirs, work, os.getpid(), initializer), daemon=True)
        process.start()
        theirs.close()
        worker: _Worker[R] = _Worker(process, ours)
        workers.append(worker)
        return worker

    def assign(worker: _Worker[R]) -> None:
        index = queue.popleft()
        try:
            worker.connection.send((index, tasks[index]))
        except OSError:  # the worker died while idle: the task never started
            queue.appendleft(index)
            workers.remove(worker)
            worker.process.join()
            worker.connection.close()
            return
        worker.task = index

    try:
        while queue or any(w.task is not None for w in workers):
            for worker in list(workers):
                if worker.task is None and queue:
                    assign(worker)
            while queue and len(workers) < jobs:
                assign(start())
            busy = [w for w in workers if w.task is not None]
            ready = set(wait([w.connection for w in busy] + [w.process.sentinel for w in busy]))
            for worker in busy:
                if worker.connection not in ready and worker.process.sentinel not in ready:
                    continue
                index = worker.task
                assert index is not None
                received = _receive(worker.connection)
                if received is not None:
                    worker.task = None
                    on_result(index, received)
                    continue
                if worker.connection in ready or not worker.process.is_alive():
                    worker.process.join()
                    workers.remove(worker)
                    worker.connection.close()
                    on_result(index, Died(_reason(worker.process.exitcode)))
        finished = True
    finally:
        _stop(workers, graceful=finished)


def each_in_workers(jobs: int, count: int) -> "Optional[Callable[[Callable[[int], Any], int], List[Any]]]":
    """A way to compute ``[work(0), ..., work(n - 1)]`` in up to ``jobs``
    forked processes (the project index's per-file work), or None where that
    does not pay: one job, fewer than ``2 * jobs`` items, or no ``fork`` (the
    work is a closure over the run's texts, which only ``fork`` shares
    without pickling)."""
    if jobs <= 1 or count < 2 * jobs or "fork" not in multiprocessing.get_all_start_methods():
        return None
    return partial(_each, jobs=jobs)


def _each(work: Callable[[int], R], count: int, *, jobs: int) -> "List[Union[R, Died]]":
    """``work`` over ``range(count)`` in contiguous chunks (about eight a
    worker, so that a slow file leaves no core idle for long); a chunk whose
    worker died gives :class:`Died` for each of its items."""
    size = max(1, -(-count // (jobs * 8)))
    chunks = [(start, min(start + size, count)) for start in range(0, count, size)]
    results: "List[Union[R, Died]]" = [Died("not run")] * count

    def chunk(start: int, stop: int) -> List[R]:
        return [work(index) for index in range(start, stop)]

    def done(index: int, result: "Union[List[R], Died]") -> None:
        start, stop = chunks[index]
        for offset in range(stop - start):
            results[start + offset] = result if isinstance(result, Died) else result[offset]

    run_pool(chunk, chunks, jobs, done)
    return results


def _receive(connection: Connection) -> "Optional[Any]":
    """The worker's result if one is waiting, else None (the worker died)."""
    try:
        if connection.poll():
            _, result = connection.recv()
            return result
    except (EOFError, OSError):
        pass
    return None


def _stop(workers: Sequence[_Worker[Any]], *, graceful: bool) -> None:
    """Stop every worker: ask politely after a clean run; otherwise SIGTERM,
    then SIGKILL after a grace period.  A second Ctrl-C meanwhile is ignored
    so that nothing is left behind."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main else None
    try:
        for worker in workers:
            try:
                if graceful:
                    worker.connection.send(None)
                else:
                    worker.process.terminate()
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + _STOP_GRACE_SECONDS * (5 if graceful else 1)
        for worker in workers:
            worker.process.join(max(deadline - time.monotonic(), 0))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.connection.close()
    finally:
        if in_main and previous is not None:
            signal.signal(signal.SIGINT, previous)
