"""speechkit: run open-source speech cascades over meeting audio and score them.

The Python API, in the order a run uses it::

    import speechkit

    recipe = speechkit.load_recipe("whisper", level=3)         # a shipped recipe at a context level
    workspace = speechkit.load_workspace("workspaces/demo")    # meetings, people, references, artifacts
    run = speechkit.run_workspace(recipe, workspace, "runs/demo-l3")   # transcripts, notes, scores, report
    scores = speechkit.score_workspace(workspace, run.out)     # scores.json's mapping, again
    print(scores["aggregate"]["wer"]["value"])

    levels = [speechkit.load_run(f"runs/demo-l{n}", f"L{n}") for n in (1, 3)]
    comparison = speechkit.compare_runs(levels)                # paired deltas with bootstrap CIs
    print(comparison.deltas["L3"]["wer"].estimate.value)

    result = speechkit.Cascade(recipe).run("meeting.flac")     # one recording, no workspace

- :func:`load_recipe` (:mod:`speechkit.recipe`): a recipe file or a shipped one by name;
  :class:`Recipe` (``to_dict`` / ``from_dict``: what run.json records reads back).
- :func:`load_workspace` (:mod:`speechkit.io.manifest`): a workspace folder; :class:`Workspace`.
- :func:`run_workspace` (:mod:`speechkit.runner`): every meeting in calendar order, then the
  post-run steps, scores.json, run.json and the report; returns a :class:`RunResult`.
- :class:`RunFolder` (:mod:`speechkit.io.run_folder`): where each file of a run lies.
- :func:`score_workspace` (:mod:`speechkit.scoring`): score a run folder against its workspace;
  :class:`ScoreOptions`; :class:`Scores` reads a scores.json back.
- :func:`load_run` and :func:`compare_runs` (:func:`speechkit.compare.compare`): runs of one
  workspace compared, metric by metric, with paired bootstrap CIs.
- :class:`Cascade` (:mod:`speechkit.cascade`): the stages of a recipe on one recording.

The names load their modules on first use, so ``import speechkit`` stays light.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: Public name -> the module that defines it and its name there.
_API = {
    "Cascade": ("speechkit.cascade", "Cascade"),
    "Recipe": ("speechkit.recipe", "Recipe"),
    "load_recipe": ("speechkit.recipe", "load_recipe"),
    "Workspace": ("speechkit.workspace", "Workspace"),
    "load_workspace": ("speechkit.io.manifest", "load_workspace"),
    "RunResult": ("speechkit.runner", "RunResult"),
    "run_workspace": ("speechkit.runner", "run_workspace"),
    "RunFolder": ("speechkit.io.run_folder", "RunFolder"),
    "ScoreOptions": ("speechkit.scoring", "ScoreOptions"),
    "score_workspace": ("speechkit.scoring", "score_workspace"),
    "Scores": ("speechkit.io.scores", "Scores"),
    "load_run": ("speechkit.compare", "load_run"),
    "compare_runs": ("speechkit.compare", "compare"),
}
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'speechkit' has no attribute {name!r}")
    module, attribute = _API[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
