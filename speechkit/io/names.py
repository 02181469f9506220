"""Identifiers that become file names and format fields, and output paths built from them.

Workspace ids (meetings, people, artifacts) and the workspace name end up in file names
(``transcripts/<meeting>.json``, ``runs/<recipe>-<workspace>``) and in whitespace-separated
format fields (STM, RTTM, CTM). They must therefore be *safe identifiers*: 1 to 128 letters,
digits, ``_``, ``-`` and ``.``, starting with a letter or digit (so never ``.``, ``..``, a path
with ``/``, an absolute path or a name with spaces). :func:`check_id` enforces this when a
manifest loads; :func:`child_path` builds an output path from an id and refuses any result that
would leave its folder, whatever the id.

Session ids written to STM/RTTM/CTM follow :func:`session_token`: each run of whitespace becomes
``_`` (``my meeting`` -> ``my_meeting``), since those formats split fields on whitespace.
"""
from __future__ import annotations

import re
from pathlib import Path

from speechkit.errors import OutputError, brief

MAX_ID_LENGTH = 128
SAFE_ID = re.compile(r"[^\W_][\w.-]*")  # \w: letters and digits of any script, and _
ID_RULE = (f"1-{MAX_ID_LENGTH} letters, digits, '_', '-' or '.', starting with a letter or digit "
           f"(it becomes a file name)")
_WHITESPACE = re.compile(r"\s+")


def id_problem(value: object) -> str | None:
    """Why ``value`` is not a safe identifier, or None when it is one."""
    if not isinstance(value, str):
        return f"expected a string identifier, got {brief(value)}"
    if not value or len(value) > MAX_ID_LENGTH or not SAFE_ID.fullmatch(value):
        return f"{brief(value)} is not a safe identifier: use {ID_RULE}"
    return None


def is_safe_id(value: object) -> bool:
    return id_problem(value) is None


def session_token(session_id: str) -> str:
    """``session_id`` as one whitespace-free field of STM/RTTM/CTM: whitespace runs become ``_``."""
    token = _WHITESPACE.sub("_", session_id.strip())
    if not token:
        raise ValueError(f"empty session id {session_id!r}")
    return token


def child_path(folder: str | Path, name: str, suffix: str = "") -> Path:
    """``folder / (name + suffix)``, refused unless ``name`` is a safe identifier.

    No id, however built, yields a path outside ``folder``: ``..``, ``/``, absolute paths and
    names with separators are refused with an :class:`~speechkit.errors.OutputError`. (What is
    at the path, such as a symbolic link, is checked by :mod:`speechkit.io.atomic` when writing.)
    """
    folder = Path(folder)
    problem = id_problem(name)
    if problem:
        raise OutputError(folder, f"cannot name an output after {problem}")
    path = folder / f"{name}{suffix}"
    if len(path.name.encode("utf-8")) > 255 or "/" in suffix or "\0" in suffix:
        raise OutputError(folder, f"cannot name an output {brief(path.name)}")
    if path.parent != folder:  # cannot happen for a safe id; kept as the last line of defence
        raise OutputError(path, f"leaves the folder {folder}")
    return path
