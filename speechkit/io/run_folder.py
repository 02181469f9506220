"""Finding a finished run's folders and its workspace, for commands that read a run (judge, qa, probe)."""
from __future__ import annotations

from pathlib import Path

from speechkit.errors import FormatError
from speechkit.io.jsonfile import read_json
from speechkit.io.manifest import load_workspace
from speechkit.workspace import Workspace


def workspace_of_run(run: str | Path, workspace: str | Path | None = None) -> Workspace:
    """The workspace of run folder ``run``: ``workspace`` when given, else the one its run.json
    names (a relative ``workspace.root`` is relative to the run folder)."""
    if workspace is None:
        record = Path(run) / "run.json"
        if not record.is_file():
            raise FormatError(record, "not found; name the run's workspace with --workspace")
        info = read_json(record)
        named = info.get("workspace") if isinstance(info, dict) else None
        root = named.get("root") if isinstance(named, dict) else None
        if not isinstance(root, str) or not root:
            raise FormatError(record, "names no workspace (workspace.root); give it with --workspace")
        workspace = Path(run) / root  # an absolute root stays as it is
    return load_workspace(workspace)


def level_folders(path: str | Path) -> list[Path]:
    """The run folders under ``path``: itself when it holds run.json, else its level folders
    ``l1``, ``l2``, ``l3`` that do (what ``speechkit recipe --level all`` writes)."""
    path = Path(path)
    if not path.is_dir():
        raise FormatError(path, "run folder not found")
    if (path / "run.json").is_file():
        return [path]
    levels = [path / f"l{n}" for n in (1, 2, 3) if (path / f"l{n}" / "run.json").is_file()]
    if not levels:
        raise FormatError(path, "not a run folder: no run.json, and no level folders l1, l2, l3 holding one")
    return levels
