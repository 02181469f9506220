"""The ``command`` backend of the ``system`` stage: a program the user names on the command line,
run once per meeting.

``speechkit recipe --asr command --system-command 'python my_system.py' -L 2`` runs
``python my_system.py INPUTS OUTPUTS`` for each meeting in calendar order: ``INPUTS`` is the
meeting's inputs folder (:mod:`speechkit.io.system_files`: at L2 and L3 with the system's own
outputs for the earlier meetings), ``OUTPUTS`` an empty folder it writes its transcript (and
speaker turns, notes, answers) into. The program comes from the command line only (the option is
a :func:`~speechkit.core.options.command_line` field), never from a recipe or a workspace.

The program runs with the caller's environment and working folder as
:func:`~speechkit.stages.system.program.run_program` runs it: in its own process group, its stdin
closed, its stderr and stdout kept as a bounded log; past ``timeout_s`` the whole group is
killed, and what it left running there when it exits. While it runs, the workspace, the run
folder and its work folder must not change but for its outputs folder
(:mod:`~speechkit.stages.system.watch`). A program that cannot start, exits with a status other
than 0, runs past its deadline, changes what it must not or writes what cannot be read fails the
run with one line (``error: PATH: problem``), and its work folder (inputs, outputs, log) is kept
where the line says; after a meeting that succeeds it is removed, and the log goes into the run
folder.
"""
from __future__ import annotations

import shlex
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from speechkit.core.options import StageOptions, bounded, command_line
from speechkit.errors import ProgramError
from speechkit.io.atomic import write_bytes
from speechkit.io.system_files import read_system_outputs, write_meeting_inputs
from speechkit.meeting_context import MeetingContext
from speechkit.stages.system import SystemResult
from speechkit.stages.system.program import BoundedLog, run_program
from speechkit.stages.system.watch import changes, snapshot

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

    def run_meeting(self, meeting: str, audio: Path, context: MeetingContext, watched: Sequence[Path] = (),
                    shared: Sequence[Path] = ()) -> SystemResult:
        """The program's outputs for ``meeting``; raises :class:`ProgramError` or a FormatError
        (keeping the work folder) when it fails. ``watched``: folders it must not change (the
        workspace, the run folder), but for ``shared`` ones that other runs may write (the stage cache)."""
        work = Path(tempfile.mkdtemp(prefix=f"speechkit-system-{meeting}-"))
        inputs, outputs, log = work / "inputs", work / "outputs", work / "program.log"
        write_meeting_inputs(inputs, meeting, audio, context)
        outputs.mkdir()
        name = shlex.join(self.options.program)
        folders, skip = [work, *watched], [outputs, *shared]
        before = snapshot(folders, skip)
        kept = BoundedLog()
        try:
            done = run_program([*self.options.program, str(inputs), str(outputs)], self.options.timeout_s, kept,
                               name, log)
            changed = changes(before, snapshot(folders, skip))
        finally:
            write_bytes(log, kept.data())
        if changed:
            path, how = changed[0]
            more = f" (and {len(changed) - 1} other path(s))" if len(changed) > 1 else ""
            raise ProgramError(path, f"{how} while {name} ran on meeting {meeting!r}{more}: a system writes only "
                                     f"into its outputs folder; its log: {log}")
        if done.status != 0:
            last = kept.last_line()
            raise ProgramError(log, f"{name} {done.how_it_ended()} on meeting {meeting!r}"
                                    + (f": {last[:200]}" if last else " (its log is empty)"))
        written = read_system_outputs(outputs, meeting)
        shutil.rmtree(work, ignore_errors=True)
        return SystemResult(written, kept.text(), done.seconds)
