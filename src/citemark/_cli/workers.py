"""Running the tasks, in order: `process(job, task)` for each, in this process (-j 1, or a
single task), in threads (the compiled kernels that do a chunk without the GIL), or in
worker processes (`concurrent.futures`' pools, both), with at most `2 * jobs` tasks in flight
so that memory stays bounded by a few chunks whatever the size of the input."""

from __future__ import annotations

import os
import signal
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from itertools import chain
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from .commands import Job
from .work import Result, Task, process

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future


def ordered_results(job: Job, tasks: Iterator[Task], jobs: int, threads: bool) -> Iterator[Result]:
    """process(job, task) for each task, in order, at most 2 * jobs in flight.

    Worker processes ignore SIGINT and SIGTERM (Ctrl-C reaches the whole process group): the
    main process alone handles them, and on any exit, an interrupt included, the tasks not
    started are cancelled and the workers killed, not waited for, so a long task cannot hold
    the exit up.
    """
    tasks = iter(tasks)
    first = next(tasks, None)
    if first is None:
        return
    second = next(tasks, None)
    if jobs <= 1 or second is None:
        for task in chain([first], [second] if second is not None else [], tasks):
            yield process(job, task)
        return
    pool = _pool(jobs, threads)
    window: deque[Future[Result]] = deque()  # the tasks in flight, in task order
    try:
        with _stops_held():  # the first task starts the workers
            window.append(pool.submit(process, job, first))
        for task in chain([second], tasks):
            window.append(pool.submit(process, job, task))
            if len(window) >= 2 * jobs:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()
    finally:
        # (_stop cancels the tasks not started through the pool's own shutdown: a future
        # cancelled here, under the pool's manager thread, makes that thread fail on 3.11
        # when it marks the tasks of the killed workers broken)
        _stop(pool)


def _pool(jobs: int, threads: bool) -> Executor:
    # imported here: -j 1 never loads them
    if threads:
        from concurrent.futures import ThreadPoolExecutor

        return ThreadPoolExecutor(max_workers=jobs)
    from concurrent.futures import ProcessPoolExecutor

    context = _context()
    # The workers' lifeline (_die_with_main): only this process holds the write end (a pipe
    # is not inherited: the forkserver and the resource tracker start with the descriptors
    # they are given); each worker is given a copy of the read end, which reads its end of
    # file when this process ends, however it ends.  _stop closes both ends.
    reader, writer = context.Pipe(duplex=False)
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_worker_init, initargs=(reader,)
    )
    _lifelines[pool] = (reader, writer)
    return pool


# Each process pool's lifeline, both ends.
_lifelines: WeakKeyDictionary[Executor, tuple[Any, Any]] = WeakKeyDictionary()


# The signals that stop a run: the main process alone handles them (batch.run).
STOPS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _stops_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held (not lost) in this thread while it starts the workers: the
    processes it starts (the forkserver, the resource tracker, spawned workers) inherit the
    mask, so a Ctrl-C while one of them imports its modules ends nothing with a traceback;
    the main process takes the signal when the mask is restored."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask (Windows)
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _stop(pool: Executor) -> None:
    """Threads finish the task they are on; worker processes are killed (a pool's own
    shutdown would have the exit wait for the tasks they are running, and they hold STOPS)."""
    from concurrent.futures import ProcessPoolExecutor

    if not isinstance(pool, ProcessPoolExecutor):
        pool.shutdown(wait=True, cancel_futures=True)
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
    # The queue's feeder thread may be blocked writing a task into a full pipe that no worker
    # will read once they are killed; the pool's manager thread joins it on the way out,
    # and the interpreter's exit joins that thread: without this, the exit can hang.
    call_queue = getattr(pool, "_call_queue", None)
    if call_queue is not None:
        call_queue.cancel_join_thread()
    results = getattr(pool, "_result_queue", None)  # (shutdown forgets it too)
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in processes:
        if worker.is_alive():
            worker.kill()
    for worker in processes:
        worker.join()
    # A worker killed while it sent a result leaves the manager thread reading the rest of
    # that message, for ever: nothing else writes to the results' pipe but this process's
    # end of it, never used (results come from workers), which closed makes that read end.
    writer = getattr(results, "_writer", None)
    if writer is not None:
        writer.close()
    # With its workers gone the manager thread ends at once, closing the task queue, whose
    # feeder thread then ends too: the queues' semaphores are released here, not at some
    # later collection, which may run inside the multiprocessing resource tracker while it
    # registers another pool's (a reentrant call it refuses, leaking them).
    if manager is not None:
        manager.join(5)
    feeder = getattr(call_queue, "_thread", None)  # started by the queue's first task
    if feeder is not None:
        feeder.join(5)
    for end in _lifelines.pop(pool, ()):
        end.close()


def _worker_init(lifeline: Any = None) -> None:
    for stop in STOPS:
        signal.signal(stop, signal.SIG_IGN)
    _die_with_parent()
    if lifeline is not None:
        _die_with_main(lifeline)
    keep_freed_memory()


def _die_with_parent() -> None:
    """Linux: the worker is killed when its parent ends (the forkserver, or the main process
    itself where there is no forkserver)."""
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return
    pr_set_pdeathsig = 1  # linux/prctl.h
    prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() == 1:  # the parent ended before the call: nothing would signal it
        os._exit(1)


def _die_with_main(lifeline: Any) -> None:
    """The worker ends when the main process does, however it ends (`kill -9` included): a
    thread waits on `lifeline`, the read end of a pipe whose write end the main process
    alone holds and never writes to, and ends the worker at its end of file.

    The parent's death signal alone is not enough: a worker's parent is the forkserver, which
    ends when the pipe that the main process keeps open to it reads its end of file, but
    every worker is given a copy of that pipe's write end (to start processes of its own),
    so after a `kill -9` of the main process the forkserver and the workers would wait on
    each other for ever, and the resource tracker, whose pipe the workers hold too, with
    them.  With the workers gone, both end."""
    import threading

    def watch() -> None:
        with suppress(EOFError, OSError):
            lifeline.recv_bytes()  # nothing is ever sent: returns at the end of file
        os._exit(1)

    threading.Thread(target=watch, name="citemark-lifeline", daemon=True).start()


def _context() -> Any:
    # forkserver: workers start from a clean process (no threads, no open output files);
    # spawn where there is no forkserver.
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    # The server imports the work on a task and the pool's worker loop once, and every
    # worker is forked with them loaded: a worker starts in a fork, not in an import of the
    # package (a name that fails to import is passed over).
    context.set_forkserver_preload([process.__module__, "concurrent.futures.process"])
    return context


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def keep_freed_memory() -> None:
    """Every task allocates and frees buffers of a few MB (its bytes, its output); by default
    glibc gives such memory back to the system, and the next task faults its pages in again.
    Buffers up to 12 MB come from the heap, which keeps up to 24 MB free, so their pages stay
    mapped; larger ones (a very long line) are still given back when freed, so a long line
    peaks at 3x its size, not more.  The process is the command's (and its workers'): the
    library never calls this."""
    try:  # glibc names itself here (platform.libc_ver reads the executable: slower)
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return
    except (AttributeError, ValueError, OSError):  # not glibc, or no confstr (Windows)
        return
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 12 << 20)
    mallopt(_M_TRIM_THRESHOLD, 24 << 20)
