"""The people CSV of an import: who the speakers are, by id.

    id,name,nicknames,role,enrollments
    p1,Priya Raman,Pri;P,Engineering lead,clips/priya.wav

``id`` and ``name`` are required; ``nicknames`` and ``enrollments`` (audio clips, paths relative
to the CSV's folder) hold several values separated by ``;``. ``enrollment`` is accepted for
``enrollments``. Every problem names the file and line. A CSV the importer finds inside the folder
it imports may name clips inside that folder only (``../../private/call.flac`` or an absolute path
elsewhere is an error); a CSV the user names with ``--people`` may name clips anywhere.
"""
from __future__ import annotations

import csv
from pathlib import Path

from speechkit.corpora.records import SourcePerson
from speechkit.errors import AudioError, FormatError
from speechkit.io._lines import read_text, text_lines
from speechkit.io.names import id_problem

PEOPLE_COLUMNS = ("id", "name", "nicknames", "role", "enrollments")


def read_people(path: Path, inside: Path | None = None) -> list[SourcePerson]:
    """The people CSV (see the module docstring); errors name the line.

    ``inside``: a folder every enrollment clip must lie in (links resolved), None for anywhere.
    """
    rows = csv.reader(text_lines(read_text(path)))  # read_text drops a spreadsheet's byte order mark
    header = [h.strip().lower() for h in next(rows, [])]
    if "enrollment" in header:
        header[header.index("enrollment")] = "enrollments"
    unknown = [h for h in header if h not in PEOPLE_COLUMNS]
    if unknown or "id" not in header or "name" not in header:
        raise FormatError(path, f"header must name the columns id and name, and may add nicknames, role, "
                                f"enrollments; got {', '.join(header) or 'nothing'}", line=1)
    people, seen = [], {}
    for number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            raise FormatError(path, f"{len(row)} fields, the header has {len(header)}", line=number)
        cells = {h: (row[i].strip() if i < len(row) else "") for i, h in enumerate(header)}
        for key in ("id", "name"):
            if not cells[key]:
                raise FormatError(path, f"{key}: missing", line=number)
        problem = id_problem(cells["id"])
        if problem:
            raise FormatError(path, f"id: {problem}", line=number)
        if cells["id"] in seen:
            raise FormatError(path, f"id: duplicate id {cells['id']!r} (first on line {seen[cells['id']]})",
                              line=number)
        seen[cells["id"]] = number
        clips = []
        for clip in _split(cells.get("enrollments", "")):
            clip_path = (path.parent / clip)
            if inside is not None and not clip_path.resolve().is_relative_to(inside.resolve()):
                raise FormatError(path, f"enrollments: {clip!r} lies outside the imported folder {inside}; a people "
                                        "CSV found in the folder may name clips inside it only (name the CSV with "
                                        "--people to allow clips elsewhere)", line=number)
            if not clip_path.is_file():
                raise FormatError(path, f"enrollments: file {clip!r} not found in {path.parent}", line=number)
            try:
                from speechkit.core.audio import audio_duration
                audio_duration(clip_path)
            except AudioError as exc:
                raise FormatError(path, f"enrollments: {exc}", line=number) from None
            clips.append(clip_path)
        people.append(SourcePerson(cells["id"], cells["name"], tuple(_split(cells.get("nicknames", ""))),
                                   cells.get("role") or None, tuple(clips)))
    if not people:
        raise FormatError(path, "no people listed")
    return people


def _split(cell: str) -> list[str]:
    return [v.strip() for v in cell.split(";") if v.strip()]
