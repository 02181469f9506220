"""A job of an executor: one workspace, the run folder it goes to, and the stage cache it uses."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from speechkit.workspace import Workspace


@dataclass(frozen=True)
class Job:
    """One workspace to run, the run folder it goes to, and the stage cache folder it reads and
    writes (``cache``; None: the run folder's own ``cache/``). Jobs may share a cache folder."""

    workspace: Workspace
    out: Path
    cache: Path | None = None

    @property
    def cache_dir(self) -> Path:
        """The stage cache folder the job uses."""
        return Path(self.cache) if self.cache is not None else Path(self.out) / "cache"
