"""The batch engine behind `citemark strip|clean|extract|stats`: rows in, rows out, in order.

The inputs are read as a stream of tasks (`inputs`: a text file; a chunk of JSONL lines; a
Parquet record batch), each done by `work.process` (`workers`: in this process, in threads
or in worker processes), and the results written in input order as they come back
(`outputs`); what each command does is in `commands`, the counts of `stats` in `stats`, the
progress bar in `progress`.  `run` here ties them together and owns Ctrl-C and SIGTERM.

Bad rows (JSONL: not UTF-8, not JSON, no string at the field path; Parquet: a text that is
not UTF-8) stop the run, naming the file and line, or with `skip_bad` are left out and
reported, one by one; no row is ever lost without a report: rows out = rows in - rows
reported as skipped.  A null text is a row without text, never a bad row.  Blank JSONL lines
are no rows: they are counted, and the text commands copy them.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from typing import Any

from .commands import Job, cleans_in_pass
from .common import stop_for
from .inputs import Inputs
from .outputs import Output
from .progress import Progress
from .stats import Stats
from .work import jsonl_kernel
from .workers import STOPS, keep_freed_memory, ordered_results


@dataclass
class Outcome:
    rows: int = 0
    skipped: int = 0
    blanks: int = 0
    unreadable: int = 0
    stopped: bool = False
    interrupted: bool = False
    stats: Stats | None = None


def run(
    job: Job,
    inputs: Inputs,
    output: Output,
    *,
    jobs: int,
    progress: Progress,
    report: Callable[[str], None],
) -> Outcome:
    """Every task's result written in order.  Ctrl-C (KeyboardInterrupt, raised from here) or
    SIGTERM (common.Terminated) never cuts a write: the output is always a prefix of whole
    results, so of whole lines; a Parquet output is finished only by a run that reached its
    end (`Output.close`)."""
    outcome = Outcome(stats=Stats() if job.command == "stats" else None)
    keep_freed_memory()
    threads = (
        job.input_format == "parquet" and job.command != "stats" and _arrow_releases_gil()
    ) or (
        job.input_format == "jsonl"
        and (job.command in _JSONL_THREADED or cleans_in_pass(job))
        and job.output_format == "jsonl"
        and _jsonl_compiled()
    )
    writing = False
    pending: int | None = None  # a stopping signal that came during a write

    def on_stop(signum: int, frame: Any) -> None:
        nonlocal pending
        if writing:
            pending = signum  # raised once the write is whole
        else:
            raise stop_for(signum)

    previous = _install(on_stop)
    complete = False  # the run reached its end: a Parquet output is finished
    try:
        tasks = iter(inputs)
        results = ordered_results(job, tasks, jobs, threads)
        before = 0  # lines of the file before the result's task (for tasks not counted)
        # A run that stops early closes the reading too (its file with it), here, not
        # whenever the collector finds the generator.
        with progress, closing(tasks), closing(results):  # type: ignore[type-var]
            for result in results:
                if result.first_row is None:
                    result.renumber(before)
                else:
                    before = result.first_row
                before += result.rows + result.blanks
                writing = True
                output.write(result.output)
                writing = False
                if pending is not None:
                    raise stop_for(pending)
                for file, line, why in result.skips:
                    report(f"citemark: skipped {file}:{line}: {why}")
                outcome.rows += result.rows
                outcome.skipped += len(result.skips)
                outcome.blanks += result.blanks
                if outcome.stats is not None and result.stats is not None:
                    outcome.stats.merge(result.stats)
                progress.advance(result.rows, result.nbytes)
                if result.error is not None:
                    file, line, why = result.error
                    report(f"citemark: {file}:{line}: {why}")
                    report("citemark: stopped (use --skip-bad to skip and report bad lines)")
                    outcome.stopped = True
                    break
        if not inputs.problems and not outcome.stopped:
            output.open()  # every input read: an empty result is still a file
        complete = not outcome.stopped
    finally:
        writing = True  # a second Ctrl-C while the output is closed waits for it
        try:
            # Interrupted, stopped at a bad row or by an error: a Parquet output is not
            # finished (no footer, or no file), so that it cannot pass for a whole one.
            output.close(complete=complete and pending is None)
        finally:
            _restore(previous)
    if pending is not None:
        raise stop_for(pending)
    outcome.unreadable = inputs.problems
    return outcome


def _install(handler: Callable[[int, Any], None]) -> dict[int, Any]:
    """`handler` for Ctrl-C and SIGTERM; the handlers it replaced."""
    previous: dict[int, Any] = {}
    try:
        for stop in STOPS:
            previous[stop] = signal.signal(stop, handler)
    except ValueError:  # not the main thread (an embedding program): leave its handlers be
        pass
    return previous


def _restore(previous: dict[int, Any]) -> None:
    for stop, handler in previous.items():
        signal.signal(stop, handler)


# JSONL commands whose compiled kernel does a chunk without the GIL (but for the rare token
# left to Python): threads, not processes, so no worker starts and no result crosses a pipe.
_JSONL_THREADED = frozenset({"strip", "extract"})


def _jsonl_compiled() -> bool:
    from .._kernels.loader import compiled

    return compiled(jsonl_kernel())


def _arrow_releases_gil() -> bool:
    from .. import arrow

    return arrow.IMPLEMENTATION == "cython"
