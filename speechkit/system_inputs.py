"""What a context level gives each meeting of a workspace, written for a meeting system of a
user's own (``speechkit export inputs``; docs/systems.md).

Each scored meeting, in calendar order, gets its inputs folder (:mod:`speechkit.io.system_files`)
made from the context :func:`speechkit.context.run_context` gives the cascade's stages, so
the system gets what they get. At L2 and L3 that context holds the system's own outputs for the
earlier meetings: they are read from the folder it writes them into (``outputs``, the layout
``speechkit score --run`` reads), and a meeting whose earlier meetings have none there yet waits.
The ``command`` backend gives the same folders to a program, one meeting at a time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from speechkit.context import PriorMeeting, run_context
from speechkit.errors import FormatError, OutputError
from speechkit.io.atomic import check_target, write_text
from speechkit.io.names import child_path
from speechkit.io.system_files import read_system_outputs, system_folder, write_meeting_inputs
from speechkit.recipe import ContextBudget
from speechkit.workspace import Workspace

#: The file of the export listing the meetings in calendar order, one id a line.
MEETINGS = "meetings.txt"


@dataclass
class Exported:
    """What an export wrote: the ``written`` meetings' folders, and the meetings ``waiting`` for
    the system's outputs of an earlier meeting (``waiting_for``) at L2 and L3."""

    written: dict[str, Path] = field(default_factory=dict)
    waiting: list[str] = field(default_factory=list)
    waiting_for: str | None = None


def export_inputs(ws: Workspace, level: int, out: str | Path, budget: ContextBudget,
                  outputs: str | Path | None = None, meeting: str | None = None) -> Exported:
    """Write into ``out`` the inputs folder of each scored meeting of ``ws`` at ``level``
    (``out/<meeting>/``; ``meeting``: that one only) and ``meetings.txt``. At L2 and L3 the
    earlier meetings' outputs come from ``outputs``; the meetings after the first one without
    outputs there are left ``waiting`` (``meeting`` among them is an error)."""
    out = Path(out)
    ids = [m.id for m in ws.scored_meetings]
    if meeting is not None and meeting not in ids:
        raise FormatError(ws.manifest_path, f"no scored meeting {meeting!r} (meetings: {', '.join(ids)})")
    check_export_folder(ws, out, ids)
    done = Exported()
    prior: list[PriorMeeting] = []
    for m in ws.scored_meetings:
        if meeting in (None, m.id):
            context = run_context(ws, m, level, prior, budget)
            done.written[m.id] = child_path(out, m.id, "")
            write_meeting_inputs(done.written[m.id], m.id, m.audio, context)
        if m.id == meeting:
            break
        if level >= 2 and m.id != ids[-1]:
            if outputs is None or not system_folder(outputs).transcript(m.id).is_file():
                done.waiting, done.waiting_for = ids[ids.index(m.id) + 1:], m.id
                break
            prior.append(PriorMeeting.of(m.id, read_system_outputs(outputs, m.id).as_outputs()))
    if meeting is not None and meeting in done.waiting:
        where = system_folder(outputs).transcript(done.waiting_for) if outputs is not None else "--outputs"
        raise FormatError(where, f"meeting {meeting!r} at L{level} needs the system's outputs of the earlier "
                                 f"meeting {done.waiting_for!r} (give the folder it writes them into with --outputs)")
    write_text(out / MEETINGS, "".join(f"{mid}\n" for mid in ids))
    return done


def check_export_folder(ws: Workspace, out: Path, ids: list[str]) -> None:
    """Refuse, before anything is written, an export into the workspace (``out`` inside it) or
    onto it (a meeting's folder that holds it), and a meeting's folder or ``meetings.txt`` that
    is a link or no folder or file: nothing is written through a link, nor outside ``out``."""
    root = ws.root.resolve()
    target = out.resolve()
    if target == root or root in target.parents:
        raise OutputError(out, f"lies inside the workspace {ws.root}; the inputs are written outside it")
    check_target(out / MEETINGS)
    for mid in ids:
        folder = child_path(out, mid)
        if folder.is_symlink():
            raise OutputError(folder, "is a symbolic link; speechkit writes the meeting's inputs through no link: "
                                      "remove it or choose another folder")
        if folder.exists() and not folder.is_dir():
            raise OutputError(folder, "exists and is not a folder; expected the meeting's inputs folder or nothing")
        if root == folder.resolve() or folder.resolve() in root.parents:
            raise OutputError(folder, f"holds the workspace {ws.root}; writing the inputs there would change it")
