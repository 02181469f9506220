"""Helpers of the report tests: a report made, as a run makes it, from a run folder holding given scores."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from speechkit.io.run_folder import RunFolder
from speechkit.recipe import Recipe
from speechkit.report import write_report


def report_of(folder: Path, recipe: Recipe, workspace: str, scores: dict[str, Any], **info: Any) -> str:
    """Write ``folder``'s run.json (``recipe``, the workspace's name, ``info``) and scores.json, then
    its report as a finished run's; the report's Markdown."""
    folder.mkdir(parents=True, exist_ok=True)
    run = {"recipe": recipe.to_dict(), "workspace": {"name": workspace}, **info}
    (folder / "run.json").write_text(json.dumps(run))
    (folder / "scores.json").write_text(json.dumps(scores))
    write_report(RunFolder(folder))
    return (folder / "report.md").read_text()
