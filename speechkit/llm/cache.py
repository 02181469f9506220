"""A content-hash cache of LLM answers: the same request to the same model gives the stored answer.

An entry is keyed by the SHA-256 of the endpoint's identity (its URL, or the model file's for
the local server, whose port changes from run to run) and the request body (model, messages,
sampling settings, response format); it holds the answer's text and the model the server
reported. Entries are written atomically, so concurrent runs sharing the folder never read a
torn entry; an unreadable entry (read by the bounded JSON reader) counts as absent and is
overwritten. Only answers the caller accepted are stored (redacted, as the client returns them,
and no longer than the client reads), never failures or answers that are not what was asked,
and never the API key (it is not part of a request body).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from speechkit.errors import FormatError
from speechkit.io.atomic import write_json
from speechkit.io.jsonfile import read_json


class ResponseCache:
    """Answers under ``root/<key>.json``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @staticmethod
    def key(identity: str, request: dict[str, Any]) -> str:
        """The entry name of ``request`` sent to the endpoint identified by ``identity``."""
        blob = json.dumps([identity, request], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, identity: str, request: dict[str, Any]) -> dict[str, Any] | None:
        """The stored ``{"content": ..., "model": ...}`` for ``request``, or None."""
        path = self.root / f"{self.key(identity, request)}.json"
        try:
            entry = read_json(path)
        except FormatError:
            return None
        return entry if isinstance(entry, dict) and isinstance(entry.get("content"), str) else None

    def put(self, identity: str, request: dict[str, Any], content: str, model: str | None) -> None:
        """Store the answer ``content`` (and the model the server reported) for ``request``."""
        write_json(self.root / f"{self.key(identity, request)}.json", {"content": content, "model": model})
