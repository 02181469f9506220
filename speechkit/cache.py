"""The stage cache: each stage result stored on disk under a key derived from its inputs and config.

A rerun finds finished results and skips the work; a changed config or input changes the key,
so only what depends on it reruns. Entries are JSON written atomically, so an interrupted run
never leaves a half-written entry.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from speechkit.errors import AudioError
from speechkit.io.atomic import write_json


def digest(*parts: Any) -> str:
    """A short stable hash of JSON-serialisable parts."""
    blob = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:20]


def file_digest(path: str | Path) -> str:
    """A hash of an audio file's bytes (identifies audio independently of where it lies).

    A file that cannot be read (deleted after the workspace was loaded, a folder, no
    permission) raises :class:`AudioError` naming it.
    """
    h = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
    except FileNotFoundError:
        raise AudioError(path, "file not found") from None
    except OSError as exc:
        raise AudioError(path, f"cannot read: {exc.strerror or exc}") from None
    return h.hexdigest()[:20]


class StageCache:
    """JSON results under ``root/<stage>/<key>.json``; ``root=None`` disables caching."""

    def __init__(self, root: str | Path | None) -> None:
        self.root = Path(root) if root is not None else None
        self.hits: dict[str, int] = {}
        self.misses: dict[str, int] = {}

    def counts(self, order: Sequence[str] = ()) -> dict[str, dict[str, int]]:
        """run.json ``cache``: the hits and misses per stage, the stages of ``order`` first in
        that order, then the others (enrollments, ...) by name; never in the order two threads
        happened to reach the cache."""
        rank = {name: i for i, name in enumerate(order)}

        def ordered(counts: dict[str, int]) -> dict[str, int]:
            return dict(sorted(counts.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))
        return {"hits": ordered(self.hits), "misses": ordered(self.misses)}

    def get_or_compute(self, stage: str, key: str, compute: Callable[[], Any]) -> Any:
        """The cached JSON value for ``(stage, key)``, computing and storing it on a miss."""
        path = self.root / stage / f"{key}.json" if self.root is not None else None
        if path is not None and path.is_file():
            try:
                value = json.loads(path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError):
                value = None  # unreadable entry: recompute and overwrite it
            else:
                self.hits[stage] = self.hits.get(stage, 0) + 1
                return value
        # Round-trip through JSON so a fresh result is exactly what a rerun will read back.
        value = json.loads(json.dumps(compute()))
        self.misses[stage] = self.misses.get(stage, 0) + 1
        if path is not None:
            write_json(path, value)
        return value
