"""The public API: ``import speechkit`` names what a Python user needs, lightly; ``help(speechkit)``
shows it; the README's example runs as written; a recipe reads back from what run.json records."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import speechkit
from speechkit.recipe import Recipe, RecipeError, load_recipe, recipes_dir

REPO = Path(__file__).resolve().parents[1]


def test_help_shows_every_public_name_and_importing_loads_none_of_their_modules():
    code = ("import sys, speechkit; print(sorted(m for m in sys.modules if m.startswith('speechkit.'))); "
            "help(speechkit)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    loaded, shown = out.split("\n", 1)
    assert loaded == "[]"  # each name loads its module on first use
    for name in ("load_recipe", "load_workspace", "run_workspace", "score_workspace", "compare_runs", "load_run",
                 "Cascade", "Recipe", "RunFolder", "Scores"):
        assert name in speechkit.__all__ and re.search(rf"^    (class )?{name}\b", shown, re.M), name
    assert speechkit.compare_runs is __import__("speechkit.compare").compare.compare
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        speechkit.nothing  # noqa: B018


@pytest.mark.decodes
@pytest.mark.slow  # two runs of the demo workspace
def test_the_readme_example_runs_as_written(tmp_path, monkeypatch):
    readme = (REPO / "README.md").read_text()
    [block] = re.findall(r"```python\n(.*?)```", readme.split("## Python API", 1)[1], re.S)[:1]
    (tmp_path / "workspaces").symlink_to(REPO / "workspaces")  # "from the checkout's root", its runs/ here
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    for level in ("l1", "l2"):
        assert json.loads((tmp_path / "runs" / "api-demo" / level / "scores.json").read_text())["meetings"]
        assert (tmp_path / "runs" / "api-demo" / level / "report.md").is_file()


@pytest.mark.parametrize("name", sorted(p.stem for p in recipes_dir().glob("*.yaml")))
def test_a_recipe_reads_back_from_its_dict_at_every_level(name):
    for level in (1, 2, 3):
        recipe = load_recipe(name, level=level)
        data = json.loads(json.dumps(recipe.to_dict()))  # as run.json holds it
        again = Recipe.from_dict(data, "run.json")
        assert again.to_dict() == recipe.to_dict() and again.family == recipe.family == name
        assert again.stages == recipe.stages and again.steps == recipe.steps


def test_a_recipe_dict_is_checked_as_a_recipe_file_is():
    data = load_recipe("l3").to_dict()
    data["stages"]["identify"]["treshold"] = 0.5
    with pytest.raises(RecipeError,
                       match=r"run\.json: stages\.identify\.treshold: unknown option \(did you mean threshold\?\)"):
        Recipe.from_dict(data, "run.json")
    with pytest.raises(RecipeError, match=r"run\.json: expected a mapping"):
        Recipe.from_dict(["whisper"], "run.json")
