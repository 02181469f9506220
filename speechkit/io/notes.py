"""Notes files (``speechkit-notes/1`` JSON): read and validate, write atomically.

The format is documented in docs/workspace-format.md ("Gold notes"); the records are in
:mod:`speechkit.notes` (which bounds their lists and texts). A notes file holds at most
:data:`MAX_FILE_BYTES`. Every problem is a :class:`~speechkit.errors.FormatError` naming the file
and the field (``notes.json: action_items[1].assignee_id: unknown person id 'p9'``).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from speechkit.errors import FormatError
from speechkit.io._lines import present_input
from speechkit.io.atomic import write_text
from speechkit.io.fields import FieldError
from speechkit.io.jsonfile import read_json
from speechkit.notes import GoldNotes, Notes

N = TypeVar("N", bound=Notes)
#: The most bytes of a notes file.
MAX_FILE_BYTES = 32 << 20


def default_notes_path(meeting: str) -> str:
    """Where a workspace keeps a meeting's gold notes when its manifest names none (relative path)."""
    return f"meetings/{meeting}/notes.json"


def _read(path: str | Path, kind: type[N], meeting: str | None) -> N:
    """``kind.from_dict`` of the file; its ``meeting`` field, when it has one, must be ``meeting``."""
    data = read_json(path, MAX_FILE_BYTES)
    try:
        notes = kind.from_dict(data)
    except FieldError as exc:
        raise FormatError(path, exc.problem, field=exc.field or None) from None
    if meeting is not None and data.get("meeting", meeting) != meeting:
        raise FormatError(path, f"belongs to meeting {data['meeting']!r}, not {meeting!r}"[:200], field="meeting")
    return notes


def read_notes(path: str | Path, meeting: str | None = None) -> Notes:
    """Read a run's notes of one meeting (:meth:`speechkit.io.run_folder.RunFolder.notes`); ``meeting`` as for
    :func:`read_gold_notes`. Gold-only fields (``facts``, ``closed_action_items``) are refused."""
    return _read(path, Notes, meeting)


def run_notes(path: str | Path, meeting: str) -> Notes | None:
    """A run's notes of ``meeting`` at ``path`` (:meth:`speechkit.io.run_folder.RunFolder.notes`),
    None when there is nothing there; a folder, device, FIFO or link leaving the notes folder there
    is an error."""
    return read_notes(path, meeting) if present_input(path, Path(path).parent, "the run's notes folder") else None


def read_gold_notes(path: str | Path, meeting: str | None = None,
                    people: Mapping[str, str] | None = None) -> GoldNotes:
    """Read gold notes and check them against their meeting and the workspace people.

    ``meeting``: the id the file's ``meeting`` field must equal, when it has one. ``people``:
    person id -> canonical name; every ``assignee_id`` must be one, and the item's ``assignee``
    must be that person's canonical name.
    """
    notes = _read(path, GoldNotes, meeting)
    if people is not None:
        for key, items in (("action_items", notes.action_items), ("closed_action_items", notes.closed_items)):
            for i, item in enumerate(items):
                if item.assignee_id is None:
                    continue
                if item.assignee_id not in people:
                    raise FormatError(path, f"unknown person id {item.assignee_id!r}"[:200],
                                      field=f"{key}[{i}].assignee_id")
                if item.assignee != people[item.assignee_id]:
                    raise FormatError(path, f"{item.assignee!r} is not the canonical name "
                                            f"{people[item.assignee_id]!r} of {item.assignee_id}"[:200],
                                      field=f"{key}[{i}].assignee")
    return notes


def write_notes(path: str | Path, notes: Notes, meeting: str | None = None) -> None:
    """Write ``notes`` (or gold notes) as a notes file, atomically; the same notes give the same bytes."""
    write_text(path, json.dumps(notes.to_dict(meeting), indent=1, ensure_ascii=False) + "\n")
