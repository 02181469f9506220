"""Atomic file writes: a reader never sees a half-written file."""
from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator


TEMP_SUFFIX = ".tmp"


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success it is fsynced and renamed onto ``path``.

    If the block raises, the temporary file is removed and ``path`` is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path, "w") as handle:
        handle.write(text)


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as handle:
        handle.write(data)


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def remove_leftovers(folder: str | Path) -> list[Path]:
    """Delete the temporary files (``.NAME.*.tmp``) that writers killed mid-write left under ``folder``.

    Call it only on a folder that no other process is writing to (a run folder at the start of a run).
    """
    folder = Path(folder)
    leftovers = [p for p in folder.rglob(f".*{TEMP_SUFFIX}") if p.is_file()] if folder.is_dir() else []
    for path in leftovers:
        path.unlink(missing_ok=True)
    return leftovers
