"""One run at a time per run folder.

A run takes an exclusive lock on ``RUN_DIR/.speechkit.lock`` (``flock``; the operating system
drops it when the process ends, however it ends, so a killed run never leaves a stale lock).
A second run into the same folder while the first holds it is refused at once with a
:class:`~speechkit.errors.RunFolderBusyError` naming the folder and the process that holds it;
it never waits and never writes. The lock file itself stays: it holds the holder's pid and start
time while a run holds it and is emptied when the run ends (a killed run leaves its pid, which
means nothing once the process is gone); it is not an output.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from speechkit.errors import OutputError, RunFolderBusyError
from speechkit.io.atomic import check_output_folder

LOCK_NAME = ".speechkit.lock"


@contextmanager
def run_folder_lock(folder: str | Path) -> Iterator[Path]:
    """Hold the lock of run folder ``folder`` (created if missing) for the duration of the block."""
    import fcntl

    folder = Path(folder)
    check_output_folder(folder)
    lock = folder / LOCK_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise OutputError(lock if folder.is_dir() else folder, f"cannot lock the run folder: "
                                                              f"{exc.strerror or type(exc).__name__}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
            who = f" (pid {holder[0]})" if holder and holder[0].isdigit() else ""
            raise RunFolderBusyError(folder, f"another run is writing into this run folder{who}; wait for it "
                                             f"to finish or choose another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n".encode(), 0)
        try:
            yield lock
        finally:
            os.ftruncate(fd, 0)  # a finished run leaves an empty lock file: run folders stay comparable
    finally:
        os.close(fd)  # releases the lock
