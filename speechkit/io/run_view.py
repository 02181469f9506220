"""A finished run as its report reads it: built once from the run folder.

A :class:`RunView` holds what every report section reads: the run's run.json (the recipe, the
stages' records, the LLM usage, the stage cache's counts), its scores (:class:`~speechkit.io.scores.Scores`)
and the folder itself, where a post-run step's section finds the step's file. A fresh report and
one rebuilt after a step come from the same view of the same folder, so they are the same bytes.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from speechkit.errors import FormatError
from speechkit.io.jsonfile import read_json
from speechkit.io.run_folder import RunFolder
from speechkit.io.scores import Scores, read_scores


@dataclass(frozen=True)
class RunView:
    """One run folder's run.json (``info``) and scores, and the plots its report drew (name -> file)."""

    run: RunFolder
    info: Mapping[str, Any]
    scores: Scores
    plots: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, run: RunFolder) -> RunView:
        """The view of a finished run folder (it holds run.json and scores.json)."""
        info = run.info()
        return cls(run, info, read_scores(run.scores))

    @property
    def recipe(self) -> Mapping[str, Any]:
        """The fully resolved recipe run.json records."""
        recipe = self.info.get("recipe")
        if not isinstance(recipe, dict):
            raise FormatError(self.run.run_json, "expected the recipe's object", field="recipe")
        return recipe

    @property
    def recipe_name(self) -> str:
        return str(self.recipe.get("name"))

    @property
    def level(self) -> int | None:
        return self.recipe.get("level")

    @property
    def stages(self) -> Mapping[str, Any]:
        """The recipe's stages and their options."""
        return self.recipe.get("stages") or {}

    @property
    def workspace_name(self) -> str:
        return str((self.info.get("workspace") or {}).get("name"))

    @property
    def title(self) -> str:
        return f"speechkit report: {self.recipe_name} on {self.workspace_name}"

    def stage_summaries(self, stage: str) -> Mapping[str, Any]:
        """Per meeting, what stage ``stage``'s result reported (run.json ``stages.<stage>``; {}: nothing)."""
        return (self.info.get("stages") or {}).get(stage) or {}

    def block(self, name: str) -> Mapping[str, Any]:
        """A block of run.json by name (``asr``, ``llm``, ``cache``; {}: absent)."""
        return self.info.get(name) or {}

    def document(self, name: str) -> Any:
        """A run file a post-run step wrote (``judged.json``), read back; None when there is none."""
        path = self.run.file(name)
        return read_json(path) if path.is_file() else None
