"""What every command shares: the exit codes, the --family option, the guard around the
work that writes (interrupts, closed pipes, full disks) and the check that an input file is
still the one the run opened."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, BinaryIO, NamedTuple

EXIT_OK = 0
EXIT_SKIPPED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
# SIGTERM (`kill`, `timeout`, a service manager's stop): the status a shell reports for it.
EXIT_TERMINATED = 143
# A closed pipe (`| head`): the status a shell reports for a filter killed by SIGPIPE, as
# `cat` and `grep` give it, so that `set -o pipefail` sees it and it is never success.
EXIT_CLOSED_PIPE = 141


class InputChanged(Exception):
    """A regular file that shrank or was replaced while the run read it (see Origin): the
    rows it held are gone, so the run stops, naming it (raised in a worker too)."""


class Origin(NamedTuple):
    """A regular file as the run opened it: which file it is, and its size then.  A worker
    reads its slice by the file's name, so it checks that the name still leads to that file
    (a log replaced under its name, as `mv`, `sed -i` or a log rotation do it, would mix the
    two files' rows) and that it did not shrink (`copytruncate` empties it in place)."""

    device: int
    inode: int
    size: int

    @classmethod
    def of(cls, handle: BinaryIO) -> Origin:
        found = os.fstat(handle.fileno())
        return cls(found.st_dev, found.st_ino, found.st_size)

    def check(self, path: str, handle: BinaryIO) -> None:
        """InputChanged when `handle`, open on `path`, is not this file as it was."""
        found = os.fstat(handle.fileno())
        if (found.st_dev, found.st_ino) != (self.device, self.inode):
            raise InputChanged(f"{path}: it was replaced while it was being read")
        if found.st_size < self.size:
            raise InputChanged(f"{path}: it shrank while it was being read")


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as Ctrl-C is (the output a prefix of whole lines, the workers stopped),
    ending with its own status."""


def stop_for(signum: int) -> KeyboardInterrupt:
    """What a run raises for a stopping signal (batch.run handles SIGINT and SIGTERM)."""
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def add_family(parser: argparse.ArgumentParser) -> None:
    """--family: the one definition, for every command (lint included)."""
    parser.add_argument(
        "--family",
        action="append",
        dest="families",
        metavar="NAME",
        help="marker family to accept (repeatable; default: cite)",
    )


def guarded(
    work: Callable[[], Any], output: str | None, report: Callable[[str], None]
) -> tuple[Any, int]:
    """(work(), 0), or (None, exit code) for an interrupt or a write error, the same for
    every command: a closed pipe (`| head`) ends the run quietly with 141; a full disk is exit
    2, named."""
    try:
        return work(), EXIT_OK
    except Terminated:
        report("citemark: terminated")
        return None, EXIT_TERMINATED
    except KeyboardInterrupt:
        report("citemark: interrupted")
        return None, EXIT_INTERRUPTED
    except InputChanged as error:
        report(f"citemark: cannot read {error}")
        return None, EXIT_BAD_INPUT
    except BrokenPipeError:
        # The reader went away: no message (it would go to a reader that is gone, or clutter
        # the terminal), and Python must stay quiet at exit.
        quiet_stdout()
        return None, EXIT_CLOSED_PIPE
    except OSError as error:
        report(f"citemark: cannot write {output or 'standard output'}: {error}")
        quiet_stdout()
        return None, EXIT_BAD_INPUT
    except Exception as error:
        # A worker process killed outright (the kernel's OOM killer, `kill -9`): the rows
        # of its task are lost to the run, which stops; the output holds those before it.
        # (concurrent.futures is looked up, not imported: a run without a pool never loads it.)
        futures = sys.modules.get("concurrent.futures")
        if futures is None or not isinstance(error, futures.BrokenExecutor):
            raise
        report("citemark: a worker process died (killed by a signal or out of memory); stopped")
        return None, EXIT_BAD_INPUT


def report(message: str) -> None:
    """A line to standard error, the run's own channel for what it skipped or why it stopped;
    none when standard error is closed (`2>&-`: Python's print would write it to standard
    output instead, into the results)."""
    if sys.stderr is not None:
        print(message, file=sys.stderr, flush=True)


def quiet_stdout() -> None:
    """Standard output to /dev/null: Python's flush at exit must not fail (and print) again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
