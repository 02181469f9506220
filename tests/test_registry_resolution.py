"""Every model through the registry, as a user meets it: offline, a recipe whose model is not
here exits 2 with one line naming the model and `speechkit models fetch`; a model put where the
registry looks is what the shipped recipes use, through `make recipe`; every shipped recipe loads,
names registered models, and runs end to end where its models are on this machine."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from speechkit import registry
from speechkit.errors import ModelNotAvailableError
from speechkit.io.manifest import load_workspace
from speechkit.llm.client import ClientOptions
from speechkit.recipe import load_recipe, recipes_dir
from speechkit.runner import run_workspace

REPO = Path(__file__).resolve().parents[1]
RECIPES = sorted(p.stem for p in recipes_dir().glob("*.yaml"))
#: Recipes whose end-to-end run with the packaged model is another test's subject.
RUN_ELSEWHERE = {"whisper-llm": "tests/test_llm_server.py", "command": "tests/test_system_command.py",
                 "openai-stack": "tests/test_stacks.py", "gemini-stack": "tests/test_stacks.py"}


def offline_env(models: Path, tmp: Path) -> dict[str, str]:
    """The environment of a machine without a network whose local models are in ``models``."""
    return {**os.environ, "SPEECHKIT_MODELS_DIR": str(models), "HF_HUB_OFFLINE": "1",
            "HF_HUB_CACHE": str(tmp / "hf"), "PYTHONPATH": str(REPO)}


def make_recipe(env: dict[str, str], **variables: object) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", "recipe", *(f"{k}={v}" for k, v in variables.items())],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def workspace(make_real_workspace, tmp_path_factory) -> Path:
    return make_real_workspace(tmp_path_factory.mktemp("ws"))


def test_offline_ctc_recipe_exits_2_naming_the_fetch_command(workspace, tmp_path):
    env = offline_env(tmp_path / "models", tmp_path)
    result = make_recipe(env, L=3, ASR="ctc", WS=workspace, OUT=tmp_path / "out")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line and not line.startswith("make")]
    assert len(errors) == 1, result.stderr
    assert "models not on this machine: wav2vec2-base-960h (stages.asr.model)" in errors[0]  # preflight
    assert "`speechkit models fetch wav2vec2-base-960h`" in errors[0]


@pytest.mark.slow  # every CTC recipe at every level on a built model
def test_shipped_ctc_recipes_run_end_to_end_on_a_model_where_the_registry_looks(workspace, tiny_model, tmp_path):
    """The test-built wav2vec2 put in the registry's local folder under the recipe's model name;
    then `make recipe` runs ctc and ctc-llm (the second reuses the first's cached stages)."""
    models = tmp_path / "models"
    shutil.copytree(tiny_model, models / "wav2vec2-base-960h")
    env = offline_env(models, tmp_path)
    out = tmp_path / "out"
    for family in ("ctc", "ctc-llm"):
        result = make_recipe(env, L=3, ASR=family, WS=workspace, OUT=out)
        assert result.returncode == 0, result.stderr[-2000:]
        run = json.loads((out / "run.json").read_text())
        assert run["recipe"]["name"] == f"{family}-l3"
        assert run["recipe"]["stages"]["asr"]["model"] == "wav2vec2-base-960h"
        assert json.loads((out / "scores.json").read_text())["aggregate"]["wer"]["value"] > 0
    assert run["recipe"]["stages"]["correct"]["backend"] == "llm"
    assert all(stats["backend"] == "llm" and not stats["failures"] for stats in run["stages"]["correct"].values())


@pytest.mark.parametrize("name", RECIPES)
def test_every_shipped_recipe_loads_and_names_registered_models(name):
    for level in (1, 2, 3):
        recipe = load_recipe(name, level=level)
        assert recipe.level == level and recipe.name == f"{name}-l{level}"
    assert load_recipe(f"{name}-l2").level == 2  # the NAME-lN form
    # an endpoint's stage (LLM client options) names the endpoint's model, not a registry entry
    local = {stage: spec for stage, spec in recipe.stages.items() if not isinstance(spec.options, ClientOptions)}
    named = [(stage, model) for stage, spec in local.items() for model in registry.models_named(spec.as_dict())]
    assert {"vad", "asr"} & set(local) <= {stage for stage, _ in named}
    assert "vad" in local or set(recipe.stages) == {"system"}  # a whole system: none
    for stage, model in named:
        record = registry.get(model)  # a registered name, not a path or a typo
        spec = recipe.stages[stage].as_dict()
        assert record.backend in {spec["backend"], spec.get("embedder")}, (name, stage, model)


@pytest.mark.decodes
@pytest.mark.parametrize("name", [r for r in RECIPES if r not in RUN_ELSEWHERE])
def test_every_shipped_recipe_runs_end_to_end_or_names_what_to_fetch(name, workspace, offline_models, tmp_path):
    """With only the packaged models: a recipe whose models are all here runs end to end at L3;
    one that needs another model stops with the fetch command for it (the tests that build those
    models run these recipes end to end: test_pyannote_backend, test_ecapa_backend, above)."""
    recipe = load_recipe(name, level=3).with_overrides(device="cpu")
    needed = [m for spec in recipe.stages.values() for m in registry.models_named(spec.as_dict())]
    needed += [r for m in needed for r in registry.get(m).requires]
    absent = [m for m in needed if not registry.available(m)]
    ws = load_workspace(workspace)
    if absent:
        with pytest.raises(ModelNotAvailableError, match=f"speechkit models fetch {absent[0]}"):
            run_workspace(recipe, ws, tmp_path / "out", progress=False)
        return
    run = run_workspace(recipe, ws, tmp_path / "out", progress=False)
    assert set(run.results) == {"m1", "m2"}
    assert all(r.transcript.segments for r in run.results.values())
    assert 0 < run.scores["aggregate"]["wer"]["value"] < 1
