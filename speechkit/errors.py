"""Errors that speechkit raises for bad input. Each names the file and what is wrong."""
from __future__ import annotations

import re
from pathlib import Path

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown_path(path: str | Path) -> str:
    """``path`` as an error line shows it: control characters escaped (a newline in a file name
    as ``\\n``), so that the message stays one line and names the file unambiguously."""
    return _CONTROL.sub(lambda m: _ESCAPES.get(m.group(), f"\\x{ord(m.group()):02x}"), str(path))


class SpeechkitError(Exception):
    """Base class of every error speechkit reports to a user."""


class FormatError(SpeechkitError, ValueError):
    """A file in a transcript or manifest format could not be parsed or is invalid.

    The message reads ``path:line: field: problem`` with the parts that are known.
    """

    def __init__(self, path: str | Path | None, problem: str, *, line: int | None = None,
                 field: str | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.problem = problem
        where = shown_path(self.path) if self.path else "<input>"
        if line is not None:
            where += f":{line}"
        prefix = f"{where}: " + (f"{field}: " if field else "")
        super().__init__(prefix + problem)


class ManifestError(FormatError):
    """A workspace manifest is malformed or refers to something that does not exist."""


class PathError(SpeechkitError):
    """An error about one file: the message reads ``path: problem``."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{shown_path(self.path)}: {problem}")


class AudioError(PathError):
    """An audio file cannot be decoded or holds no usable signal."""


class ModelNotAvailableError(SpeechkitError):
    """A model is not present on this machine; the message says how to get it (exit code 2)."""

    exit_code = 2


class OutputError(PathError):
    """An output path cannot or must not be written (a folder, a device, a link, an input file, ...)."""


class ProgramError(PathError):
    """A user's program run as a meeting system failed, ran past its deadline or could not start;
    ``path`` is what to read about it (its stderr)."""


class DeviceError(SpeechkitError, ValueError):
    """A requested compute device is unknown or not present on this machine."""


class RunFolderBusyError(OutputError):
    """Another run is writing into the same run folder."""


def brief(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to about ``limit`` characters, computed without expanding deep or huge values.

    Error messages quote the offending value with it, so that a YAML alias bomb or a megabyte
    string never ends up whole in a message.
    """
    import reprlib

    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxtuple, r.maxdict, r.maxset = 2, 4, 4, 4, 4
    r.maxstring = r.maxother = r.maxlong = limit
    text = r.repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
