"""What a program changed in folders it must not write: every entry's metadata before and after.

A snapshot (:func:`snapshot`) records, for every entry under some folders (links not followed),
its type, permission bits, size, modification time and inode; :func:`changes` lists what differs
between two. The ``command`` backend takes one before and one after its program's run over the
workspace, the run folder and the program's work folder, each but for what the program or other
runs may write (its outputs folder, the stage cache, other run folders): a file created, removed,
rewritten, replaced or touched there shows, even if it was put back as it was. A write that
restores the size and the modification time of a file in place (``os.utime``) does not, nor does
anything outside these folders: only a sandbox would see those.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from speechkit.io.lock import LOCK_NAME

Snapshot = dict[str, tuple[int, int, int, int, int]]


def snapshot(folders: Iterable[Path], skip: Iterable[Path] = ()) -> Snapshot:
    """Every entry under ``folders`` (links not followed) but ``skip`` and what lies under them,
    and but the folders of other runs (a folder holding a run's lock file, not one of ``folders``):
    its path -> (type, permission bits, size, modification time in ns, inode)."""
    roots = {os.path.abspath(f) for f in folders}
    left_out = {os.path.abspath(p) for p in skip}
    out: Snapshot = {}
    for root in sorted(roots):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not _left_out(os.path.join(dirpath, d), roots, left_out)]
            for name in dirnames + [f for f in filenames if os.path.join(dirpath, f) not in left_out]:
                path = os.path.join(dirpath, name)
                try:
                    st = os.lstat(path)
                except OSError:  # gone meanwhile: absent
                    continue
                out[path] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns,
                             st.st_ino)
    return out


def _left_out(folder: str, roots: set[str], left_out: set[str]) -> bool:
    return folder in left_out or (folder not in roots and os.path.lexists(os.path.join(folder, LOCK_NAME)))


def changes(before: Snapshot, after: Snapshot) -> list[tuple[str, str]]:
    """(path, 'created' / 'removed' / 'changed') for each entry that differs, by path."""
    out = [(path, "created") for path in after.keys() - before.keys()]
    out += [(path, "removed") for path in before.keys() - after.keys()]
    out += [(path, "changed") for path in before.keys() & after.keys() if before[path] != after[path]]
    return sorted(out)
