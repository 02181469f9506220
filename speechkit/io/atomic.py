"""Atomic file writes: a reader never sees a half-written file.

Every output is written to a temporary file ``.NAME.*.tmp`` beside its target, fsynced and
renamed onto the target. The target must be absent or a regular file: a folder, a symbolic
link, a device node, a FIFO or a socket is never replaced (nor written through); that is an
:class:`~speechkit.errors.OutputError` naming the path, as is any operating-system error while
writing. New files get the permissions any other tool's output gets, ``0666`` less the umask;
a file that is replaced keeps its permission bits.

:func:`check_output_file` and :func:`check_output_folder` make the same checks before a command
starts its work, so that a bad ``--out`` fails at once rather than after an hour of transcription.
"""
from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from speechkit.errors import OutputError

TEMP_SUFFIX = ".tmp"
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_target(path: str | Path) -> None:
    """Raise :class:`OutputError` unless ``path`` is absent or a regular file (a link is refused too)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        raise OutputError(path, "cannot be created: a folder on its path is a file, not a folder") from None
    except OSError as exc:
        raise OutputError(path, f"cannot write here: {_reason(exc)}") from None
    if stat.S_ISLNK(st.st_mode):
        raise OutputError(path, "is a symbolic link; speechkit neither writes through nor replaces links: "
                                "remove the link or choose another path")
    if stat.S_ISREG(st.st_mode):
        return
    kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
    hint = ("; give a file path inside it" if stat.S_ISDIR(st.st_mode)
            else ", not a regular file; refusing to replace it")
    raise OutputError(path, f"is {kind}{hint}")


def refuse_inputs(path: str | Path, inputs: Mapping[str, str | Path | None]) -> None:
    """Raise :class:`OutputError` if ``path`` is one of ``inputs`` (``{"the reference": ref_path}``)."""
    for what, other in inputs.items():
        if other is None:
            continue
        try:
            same = os.path.samefile(path, other)
        except OSError:
            same = False
        if same:
            raise OutputError(path, f"is {what} of this command; writing there would destroy it: "
                                    f"choose another output path")


def _existing_ancestor(path: Path) -> Path:
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        if ancestor.is_symlink():  # a dangling link
            raise OutputError(ancestor, "is a symbolic link to nothing")
        ancestor = ancestor.parent
    return ancestor


def _probe(folder: Path, target: Path) -> None:
    """Create and remove a temporary file in ``folder`` (the only sure test of writing there)."""
    if not folder.is_dir():
        raise OutputError(target, f"cannot create it: {folder} is not a folder")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".speechkit-probe.", suffix=TEMP_SUFFIX, dir=folder)
    except OSError as exc:
        raise OutputError(target, f"cannot write in {folder}: {_reason(exc)}") from None
    os.close(fd)
    os.unlink(tmp)


def check_output_file(path: str | Path, inputs: Mapping[str, str | Path | None] | None = None) -> None:
    """Check, before any work, that ``path`` can be written as an output file (nothing is left behind)."""
    path = Path(path)
    check_target(path)
    refuse_inputs(path, inputs or {})
    _probe(path.parent if path.parent.exists() else _existing_ancestor(path), path)


def check_output_folder(folder: str | Path) -> None:
    """Check, before any work, that ``folder`` is a folder (or can be created) that can be written in."""
    folder = Path(folder)
    if folder.exists():
        if not folder.is_dir():
            raise OutputError(folder, "exists and is not a folder; give a folder for the outputs")
        _probe(folder, folder)
    elif folder.is_symlink():
        raise OutputError(folder, "is a symbolic link to nothing")
    else:
        _probe(_existing_ancestor(folder), folder)


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # no /proc: read it the portable way
    os.umask(mask)
    return mask


def _mode(path: Path) -> int:
    """The permission bits of the file that replaces ``path``."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success it is fsynced and renamed onto ``path``.

    If the block raises, the temporary file is removed and ``path`` is left untouched. ``path``
    must be absent or a regular file (see :func:`check_target`).
    """
    path = Path(path)
    check_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    except OSError as exc:
        raise OutputError(path, f"cannot write: {_reason(exc)}") from None
    try:
        try:
            os.fchmod(fd, _mode(path))
        except OSError:  # a file system without permission bits: nothing to follow
            pass
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as handle:
            yield handle
            try:
                handle.flush()
                os.fsync(handle.fileno())
            except OSError as exc:
                raise OutputError(path, f"cannot write: {_reason(exc)}") from None
        check_target(path)  # something may have appeared there meanwhile
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise OutputError(path, f"cannot write: {_reason(exc)}") from None
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path, "w") as handle:
        try:
            handle.write(text)
        except OSError as exc:
            raise OutputError(path, f"cannot write: {_reason(exc)}") from None


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as handle:
        try:
            handle.write(data)
        except OSError as exc:
            raise OutputError(path, f"cannot write: {_reason(exc)}") from None


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def remove_leftovers(folder: str | Path) -> list[Path]:
    """Delete the temporary files (``.NAME.*.tmp``) that writers killed mid-write left under ``folder``.

    Call it only on a folder that no other process is writing to (a run folder at the start of a
    run, under its lock: :mod:`speechkit.io.lock`).
    """
    folder = Path(folder)
    leftovers = [p for p in folder.rglob(f".*{TEMP_SUFFIX}") if p.is_file()] if folder.is_dir() else []
    for path in leftovers:
        path.unlink(missing_ok=True)
    return leftovers
