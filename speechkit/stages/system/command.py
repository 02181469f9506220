"""The ``command`` backend of the ``system`` stage: a program the user names on the command line,
run once per meeting.

``speechkit recipe --asr command --system-command 'python my_system.py' -L 2`` runs
``python my_system.py INPUTS OUTPUTS`` for each meeting in calendar order: ``INPUTS`` is the
meeting's inputs folder (:mod:`speechkit.io.system_files`: at L2 and L3 with the system's own
outputs for the earlier meetings), ``OUTPUTS`` an empty folder it writes its transcript (and
speaker turns, notes, answers) into. The program comes from the command line only (the option is
a :func:`~speechkit.core.options.command_line` field), never from a recipe or a workspace.

The program runs in its own process group with the caller's environment and working folder, its
stdin closed and its stderr and stdout going to its log. Past ``timeout_s`` the whole group is
stopped. A program that cannot start, exits with a status other than 0, runs past its deadline or
writes what cannot be read fails the run with one line (``error: PATH: problem``), and its work
folder (inputs, outputs, log) is kept where the line says; after a meeting that succeeds it is
removed, and the log goes into the run folder.
"""
from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from speechkit.core.options import StageOptions, bounded, command_line
from speechkit.errors import ProgramError
from speechkit.io.system_files import read_system_outputs, write_meeting_inputs
from speechkit.meeting_context import MeetingContext
from speechkit.stages.system import SystemResult

#: The most bytes of a program's log kept in the run folder (its end).
MAX_LOG_BYTES = 1 << 20
#: The flag that names the program.
FLAG = "--system-command"


@dataclass(frozen=True)
class CommandOptions(StageOptions):
    """``timeout_s`` (0, 86400]: the program's deadline on one meeting (s); past it the program, and
    what it started, is stopped and the run fails. ``program``: the program and its arguments,
    given only on the command line (``--system-command 'python my_system.py'``), never in a recipe.
    """

    timeout_s: float = bounded(600.0, gt=0, le=86_400)
    program: tuple[str, ...] = command_line(FLAG)


class CommandSystem:
    """Runs the program on one meeting's inputs folder and reads back what it wrote."""

    Options = CommandOptions

    def __init__(self, options: CommandOptions, device: str = "auto") -> None:
        if not options.program:
            raise ProgramError(FLAG, "the command backend runs the program named on the command line "
                                     f"({FLAG} 'python my_system.py'); none given")
        self.options = options

    def run_meeting(self, meeting: str, audio: Path, context: MeetingContext) -> SystemResult:
        """The program's outputs for ``meeting``; raises :class:`ProgramError` or a FormatError
        (keeping the work folder) when it fails."""
        work = Path(tempfile.mkdtemp(prefix=f"speechkit-system-{meeting}-"))
        inputs, outputs, log = work / "inputs", work / "outputs", work / "program.log"
        write_meeting_inputs(inputs, meeting, audio, context)
        outputs.mkdir()
        started = time.perf_counter()
        status = self._call([*self.options.program, str(inputs), str(outputs)], log)
        seconds = time.perf_counter() - started
        if status != 0:
            last = next((line for line in reversed(_tail(log).splitlines()) if line.strip()), "")
            raise ProgramError(log, f"{shlex.join(self.options.program)} exited with status {status} on meeting "
                                    f"{meeting!r}" + (f": {last.strip()[:200]}" if last else " (its log is empty)"))
        written = read_system_outputs(outputs, meeting)
        text = _tail(log)
        shutil.rmtree(work, ignore_errors=True)
        return SystemResult(written, text, seconds)

    def _call(self, argv: list[str], log: Path) -> int:
        """Run ``argv`` with its output going to ``log``; its exit status."""
        with open(log, "wb") as sink:
            try:
                process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink,
                                           start_new_session=True)
            except OSError as exc:
                raise ProgramError(argv[0], f"cannot run it: {exc.strerror or exc}") from None
            try:
                return process.wait(self.options.timeout_s)
            except subprocess.TimeoutExpired:
                _stop(process)
                raise ProgramError(log, f"{shlex.join(self.options.program)} ran past its deadline of "
                                        f"{self.options.timeout_s:g} s (stages.system.timeout_s) and was "
                                        "stopped") from None
            except BaseException:  # Ctrl-C: the program goes too
                _stop(process)
                raise


def _stop(process: subprocess.Popen) -> None:
    """Kill the program's process group and wait for the program."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _tail(log: Path) -> str:
    """The last :data:`MAX_LOG_BYTES` of the log, as text."""
    with open(log, "rb") as handle:
        handle.seek(max(0, log.stat().st_size - MAX_LOG_BYTES))
        return handle.read().decode("utf-8", "replace")
