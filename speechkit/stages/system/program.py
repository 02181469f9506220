"""Running a user's program with a deadline, in its own process group, with a bounded log.

:func:`run_program` starts the program with its stdin closed and its stdout and stderr on one
pipe that speechkit reads as it comes, keeping a :class:`BoundedLog` (its first
:data:`LOG_HEAD_BYTES` and its last bytes, :data:`MAX_LOG_BYTES` in all): a program that prints
gigabytes costs neither memory nor disk. Past the deadline, or when speechkit is interrupted,
the whole process group is killed (the program, its children and theirs). When the program
exits, what it left running in its group is killed too, so nothing it started goes on writing
after its outputs are read. A process that left the group (``setsid``) cannot be stopped that
way: if it still holds the program's output open a short while after the program exited, the
run fails (:data:`DRAIN_S`); one that closed it is not seen (only a sandbox would see it).
"""
from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from speechkit.errors import ProgramError

#: The most bytes of a program's log kept: its first :data:`LOG_HEAD_BYTES` and its end.
MAX_LOG_BYTES = 1 << 20
#: The bytes of the start of a log kept when it is longer than :data:`MAX_LOG_BYTES`.
LOG_HEAD_BYTES = 64 << 10
#: How long after the program exits its output may stay open (what it started finishing writing).
DRAIN_S = 5.0
_CHUNK = 1 << 16


class BoundedLog:
    """The bytes a program writes, kept bounded: all of them up to ``limit``; beyond it the first
    ``head`` bytes, a line saying how many were left out, and the last ``limit - head``."""

    def __init__(self, limit: int = MAX_LOG_BYTES, head: int = LOG_HEAD_BYTES) -> None:
        self.limit, self.head_limit = limit, head
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        """Take ``data`` (what the program wrote next)."""
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        keep = self.limit - self.head_limit
        if len(self.tail) > 2 * keep:  # trimmed now and then: memory stays within 3 * limit
            del self.tail[:len(self.tail) - keep]

    @property
    def left_out(self) -> int:
        """How many bytes of the log are not kept."""
        return max(0, self.total - self.limit)

    def data(self) -> bytes:
        """The log as kept."""
        if not self.left_out:
            return bytes(self.head + self.tail)
        keep = self.limit - self.head_limit
        return (bytes(self.head) + f"\n[speechkit: {self.left_out:,} bytes of this log left out]\n".encode()
                + bytes(self.tail[-keep:]))

    def text(self) -> str:
        """The log as kept, as text (bytes that are not UTF-8 replaced)."""
        return self.data().decode("utf-8", "replace")

    def last_line(self) -> str:
        """The last line of the log that is not blank, stripped ('' when there is none)."""
        tail = bytes(self.tail[-4096:] if self.tail else self.head[-4096:]).decode("utf-8", "replace")
        return next((line.strip() for line in reversed(tail.splitlines()) if line.strip()), "")


@dataclass
class ProgramRun:
    """A program that ran to its end: its exit ``status`` (negative: killed by that signal) and
    the ``seconds`` it took."""

    status: int
    seconds: float

    def how_it_ended(self) -> str:
        """'exited with status 3' / 'was killed by signal SIGKILL'."""
        if self.status >= 0:
            return f"exited with status {self.status}"
        try:
            return f"was killed by signal {signal.Signals(-self.status).name}"
        except ValueError:
            return f"was killed by signal {-self.status}"


def run_program(argv: list[str], timeout_s: float, log: BoundedLog, name: str, where: Path) -> ProgramRun:
    """Run ``argv`` to its end within ``timeout_s`` seconds (the module docstring), what it writes
    going into ``log``; ``name`` is how errors call it, ``where`` what they name (its log file).
    Raises :class:`ProgramError` when it cannot start, runs past the deadline or leaves a process
    holding its output open (``log`` holds what it wrote until then)."""
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=write_end, stderr=write_end,
                                   start_new_session=True)
    except OSError as exc:
        os.close(read_end)
        raise ProgramError(argv[0], f"cannot run it: {exc.strerror or exc}") from None
    finally:
        os.close(write_end)
    started = time.monotonic()
    deadline = started + timeout_s
    try:
        with os.fdopen(read_end, "rb", buffering=0) as output:
            _read(process, output.fileno(), log, deadline, name, where, timeout_s)
        while not _exited(process):  # it closed its output and goes on
            if time.monotonic() >= deadline:
                raise _past_deadline(name, where, timeout_s)
            time.sleep(0.05)
    except BaseException:  # past the deadline, a process that holds its output, Ctrl-C: the group goes
        _stop(process)
        raise
    _stop(process)  # what it left in its group (the leader is not reaped yet: its group id cannot be reused)
    return ProgramRun(process.returncode, time.monotonic() - started)


def _read(process: subprocess.Popen, fd: int, log: BoundedLog, deadline: float, name: str, where: Path,
          timeout_s: float) -> None:
    """Read the program's output into ``log`` until every writer has closed it; when the program
    exits, kill what it left in its group and give the rest :data:`DRAIN_S` to close it."""
    drained_by = None
    while True:
        now = time.monotonic()
        if drained_by is None and _exited(process):
            _kill_group(process)  # what it left in its group, which may hold the output open
            drained_by = now + DRAIN_S
        limit = deadline if drained_by is None else min(deadline, drained_by)
        if now >= limit:
            if drained_by is not None and now < deadline:
                raise ProgramError(where, f"{name} exited, but a process it started still holds its output open "
                                          f"{DRAIN_S:g} s later: it left the program's process group, so speechkit "
                                          "cannot stop it; stop it yourself")
            raise _past_deadline(name, where, timeout_s)
        ready, _, _ = select.select([fd], [], [], min(limit - now, 0.25))
        if ready:
            data = os.read(fd, _CHUNK)
            if not data:
                return
            log.add(data)


def _past_deadline(name: str, where: Path, timeout_s: float) -> ProgramError:
    return ProgramError(where, f"{name} ran past its deadline of {timeout_s:g} s (stages.system.timeout_s) "
                               "and was stopped")


def _exited(process: subprocess.Popen) -> bool:
    """Whether the program has exited, without reaping it."""
    if process.returncode is not None:
        return True
    return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _stop(process: subprocess.Popen) -> None:
    """Kill the program's process group and wait for the program."""
    _kill_group(process)
    process.wait()
