"""Recipe options from the command line: `--set KEY=VALUE` (checked as a recipe file's options are)
and `speechkit recipe --show-options` (generated from the option dataclasses)."""
from __future__ import annotations

import dataclasses

import pytest

from speechkit.cli import main
from speechkit.recipe import RecipeError, load_recipe, parse_settings, recipes_dir
from speechkit.stages import STAGES, backend_class, stage_module


def test_set_values_are_read_as_yaml_and_reach_the_stage_options():
    recipe = load_recipe("whisper").with_settings(parse_settings(
        ["asr.language=de", "diarize.max_speakers=3", "stages.asr.temperatures=[0.0, 0.5]",
         "asr.compute_type=null", "context.hotwords=7"]))
    asr, diarize = recipe.stages["asr"].options, recipe.stages["diarize"].options
    assert (asr.language, asr.temperatures, asr.compute_type) == ("de", (0.0, 0.5), None)
    assert diarize.max_speakers == 3 and recipe.context.hotwords == 7
    # the other options keep the recipe's values; a new backend starts from its defaults
    assert asr.beam_size == load_recipe("whisper").stages["asr"].options.beam_size
    assert load_recipe("whisper").with_settings({"diarize.backend": "pyannote"}).stages["diarize"].backend == "pyannote"


def test_set_reaches_a_post_run_step_and_adds_one_the_recipe_lacks():
    recipe = load_recipe("whisper")
    assert list(recipe.steps) == ["qa"]
    judged = recipe.with_settings(parse_settings(["steps.judge.model=Qwen/Qwen2.5-7B-Instruct",
                                                  "steps.judge.base_url=http://127.0.0.1:8000/v1",
                                                  "steps.judge.excerpt_segments=3"]))
    # the judge runs after qa, as in a recipe file's steps: block, and the run records its options
    assert list(judged.steps) == ["qa", "judge"]
    judge = judged.to_dict()["steps"]["judge"]
    assert (judge["model"], judge["base_url"], judge["excerpt_segments"]) == \
        ("Qwen/Qwen2.5-7B-Instruct", "http://127.0.0.1:8000/v1", 3)
    assert judged.steps["qa"] == recipe.steps["qa"] and recipe.steps.keys() == {"qa"}


@pytest.mark.parametrize("setting, problem", [
    ("asr.langauge=de", "--set: stages.asr.langauge: unknown option (did you mean language?)"),
    ("diarize.max_speakers=0", "--set: stages.diarize.max_speakers: expected an integer in [1, 1000], got 0"),
    ("asr.beam_size=five", "--set: stages.asr.beam_size: expected an integer, got 'five'"),
    ("asr.chunk_s=1e308", "--set: stages.asr.chunk_s: unknown option"),
    ("context.hotword=3", "--set: context.hotword: unknown option (did you mean hotwords?)"),
    ("asrr.language=de", "--set: asrr.language: expected STAGE.OPTION, steps.STEP.OPTION, context.OPTION or "
                         "statistics.OPTION; stages: vad, asr"),
    ("steps.jduge.model=x", "--set: steps.jduge.model: expected steps.STEP.OPTION; steps: qa, align, judge, probe "
                            "(did you mean steps.judge?)"),
    ("steps.judge=x", "--set: steps.judge: expected steps.STEP.OPTION"),
    ("steps.judge.max_retries=-1", "--set: steps.judge.max_retries: expected an integer in [0, 20], got -1"),
    ("steps.qa.modle=x", "--set: steps.qa.modle: unknown option"),
    ("language", "--set: expected KEY=VALUE"),
])
def test_bad_settings_are_refused_like_a_recipe_file(setting, problem):
    with pytest.raises(RecipeError) as caught:
        load_recipe("whisper").with_settings(parse_settings([setting]))
    assert str(caught.value).startswith(problem)


@pytest.mark.parametrize("command", [["recipe", "-L", "1"], ["run", "whisper", "-L", "1", "--workspace", "."],
                                     ["transcribe", "x.flac"]])
def test_every_running_command_takes_set_and_refuses_a_bad_one_before_work(command, tmp_path, capsys):
    assert main([*command, "--out", str(tmp_path / "out"), "--set", "diarize.max_speaker=3"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "error: --set: stages.diarize.max_speaker: unknown option (did you " \
                                      "mean max_speakers?)" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_show_options_lists_every_backend_option_with_type_default_and_doc(capsys):
    assert main(["recipe", "--show-options"]) == 0
    text = capsys.readouterr().out
    for stage in STAGES:
        for backend in stage_module(stage).BACKENDS:
            assert f"stages.{stage}  backend: {backend}" in text
            for f in dataclasses.fields(backend_class(stage, backend).Options):
                assert f"  {stage}.{f.name}: " in text
    assert "  asr.beam_size: int = 5  (in [1, 64])" in text  # type, default and bounds
    assert "``language`` (None detects it)" in text  # the dataclass's doc
    assert "  context.hotwords: int = 40  (in [0, 10000])" in text
    assert "  diarize.embedder_options.model: str = 'speechbrain-ecapa-voxceleb'" in text


def test_shipped_recipes_point_at_show_options():
    for path in recipes_dir().glob("*.yaml"):
        header = path.read_text().split("\nname:")[0]
        assert "docs/architecture.md" not in header, path
    assert "speechkit recipe --show-options" in (recipes_dir() / "whisper.yaml").read_text()


@pytest.mark.parametrize("command", [["transcribe", "x.flac"], ["serve", "--port", "0"]])
def test_a_step_option_is_refused_where_no_step_runs(command, tmp_path, capsys):
    assert main([*command, "--set", "steps.judge.model=x"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "error: --set: steps.judge.model: this command runs no post-run steps" in err
