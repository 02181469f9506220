"""What the LLM stages of the current run asked: requests, failures and cache hits per endpoint.

A run (and each post-run step) opens a session (:func:`opened`) with the folder of its response
cache; every :class:`~speechkit.llm.client.LLMClient` counts its requests into the current
session (:func:`current`: the innermost one open, whichever thread asks, so a stage's worker
threads count into their run's) and reads and writes that cache. Sessions nest: a step's session
inside a run's ends with the step and gives the run's back. Outside any session (a corrector used
from Python) a session without a cache counts.
"""
from __future__ import annotations

import copy
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from speechkit.llm.cache import ResponseCache


@dataclass
class EndpointUsage:
    """The requests sent to one endpoint and model.

    ``requests``: requests the stages made (answered from the cache or not); ``cache_hits``: of
    them answered from the response cache; ``failed``: of them failed for good (after retries),
    by ``failures`` reason; ``reported``: the model names the server's answers gave; ``probe``:
    what the check before the run found.
    """

    base_url: str
    model: str
    local_model: str | None = None
    sources: dict[str, str] = field(default_factory=dict)
    probe: str = "not probed"
    requests: int = 0
    cache_hits: int = 0
    failed: int = 0
    failures: Counter = field(default_factory=Counter)
    last_failure: str = ""
    reported: set[str] = field(default_factory=set)

    @property
    def failed_share(self) -> float:
        """The share of requests that failed (0 with no request)."""
        return self.failed / self.requests if self.requests else 0.0

    def as_dict(self) -> dict[str, Any]:
        """run.json's entry of this endpoint."""
        return {"base_url": self.base_url, "model": self.model, "local_model": self.local_model,
                "sources": dict(self.sources), "models_reported": sorted(self.reported), "probe": self.probe,
                "requests": self.requests, "cache_hits": self.cache_hits, "failed": self.failed,
                "failed_share": round(self.failed_share, 4), "failures": dict(sorted(self.failures.items())),
                "last_failure": self.last_failure}


class Session:
    """The usage of every endpoint in one run, and the run's response cache (None: no caching)."""

    def __init__(self, cache: ResponseCache | None = None) -> None:
        self.cache = cache
        self.endpoints: dict[tuple[str, str], EndpointUsage] = {}
        self._lock = threading.Lock()

    def usage(self, base_url: str, model: str) -> EndpointUsage:
        """The counters of ``model`` at ``base_url`` (created on first use)."""
        with self._lock:
            return self.endpoints.setdefault((base_url, model), EndpointUsage(base_url, model))

    def count(self, base_url: str, model: str, *, cached: bool = False, reported: str | None = None,
              failure: tuple[str, str] | None = None) -> None:
        """Count one request: answered from the cache, answered (``reported``: the model the server
        named), or failed (``failure``: reason and detail)."""
        usage = self.usage(base_url, model)
        with self._lock:
            usage.requests += 1
            usage.cache_hits += cached
            if reported:
                usage.reported.add(reported)
            if failure is not None:
                usage.failed += 1
                usage.failures[failure[0]] += 1
                usage.last_failure = failure[1]


_OUTSIDE = Session()
_OPEN: list[Session] = []  # the sessions open now, innermost last
_OPEN_LOCK = threading.Lock()


@contextmanager
def opened(cache_dir: str | Path | None, known: Mapping[tuple[str, str], EndpointUsage] | None = None,
           ) -> Iterator[Session]:
    """A new session (a run's or a step's), caching answers under ``cache_dir`` (None: no
    caching), current until the block ends; ``known``: each endpoint (base URL, model) as checking
    it before the run found it, when that was done in a session of its own (:mod:`speechkit.lifecycle`)."""
    session = Session(ResponseCache(cache_dir) if cache_dir is not None else None)
    session.endpoints.update(copy.deepcopy(dict(known or {})))
    with _OPEN_LOCK:
        _OPEN.append(session)
    try:
        yield session
    finally:
        with _OPEN_LOCK:
            _OPEN.remove(session)


def current() -> Session:
    """The session requests are counted in now: the innermost one open (else one without a cache)."""
    with _OPEN_LOCK:
        return _OPEN[-1] if _OPEN else _OUTSIDE
