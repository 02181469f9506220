"""Recipes load and validate; the stage cache reuses results and survives a corrupt entry."""
from __future__ import annotations

from pathlib import Path

import pytest

from speechkit.cache import StageCache, digest
from speechkit.errors import FormatError
from speechkit.recipe import RecipeError, load_recipe, recipes_dir

REPO = Path(__file__).resolve().parents[1]


SHIPPED = sorted(p.stem for p in recipes_dir().glob("*.yaml"))


def test_recipes_ship_in_the_package_and_the_checkout_link_points_there():
    assert {"whisper", "ctc"} <= set(SHIPPED)
    assert (REPO / "recipes").resolve() == recipes_dir().resolve()


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_recipe_loads_at_every_level(name):
    for level in (1, 2, 3):
        recipe = load_recipe(name, level=level)
        assert recipe.level == level and recipe.name == f"{name}-l{level}"
        assert set(recipe.stages) >= {"vad", "asr", "diarize", "attribute", "identify"}
        assert recipe.as_dict()["stages"]["asr"]["backend"] in ("whisper", "ctc")


@pytest.mark.parametrize("name, family, level", [("l1", "whisper", 1), ("l3", "whisper", 3), ("ctc-l2", "ctc", 2)])
def test_level_names_are_the_family_recipe_at_that_level(name, family, level):
    assert load_recipe(name).as_dict() == load_recipe(family, level=level).as_dict()


def test_a_recipe_without_level_is_refused_at_run_time(tmp_path):
    from speechkit.io.manifest import load_workspace
    from speechkit.runner import run_meetings
    recipe = load_recipe("whisper")
    assert recipe.level is None
    with pytest.raises(RecipeError, match="no context level"):
        run_meetings(recipe, load_workspace(REPO / "workspaces" / "demo"), tmp_path, None, None)


def test_resolved_recipe_records_every_default():
    stages = load_recipe("l1").as_dict()["stages"]
    assert stages["vad"]["hysteresis"] == 0.15 and stages["vad"]["min_silence_s"] == 1.0
    assert stages["identify"] == {"backend": "cosine", "normalization": "snorm", "threshold": 0.5,
                                  "prior_threshold": 0.7, "prior_margin": 0.05}
    assert stages["diarize"]["threshold"] is None  # the embedder's own cluster threshold


def test_overrides_do_not_touch_the_original():
    recipe = load_recipe("l1")
    other = recipe.with_overrides(model="base", device="cpu")
    assert other.stages["asr"].options.model == "base" and other.device == "cpu"
    assert recipe.stages["asr"].options.model == "tiny.en"


# One misspelt or mistyped option per stage (and per backend where options differ).
BAD_OPTIONS = [
    ("vad", "{backend: silero, treshold: 0.5}", r"stages\.vad\.treshold: unknown option \(did you mean threshold\?\)"),
    ("vad", "{threshold: high}", r"stages\.vad\.threshold: expected a number"),
    ("asr", "{backend: whisper, beam_sise: 5}", r"stages\.asr\.beam_sise: unknown option \(did you mean beam_size\?\)"),
    ("asr", "{backend: ctc, beam_widht: 5}", r"stages\.asr\.beam_widht: unknown option \(did you mean beam_width\?\)"),
    ("asr", "{backend: nemo}", r"stages\.asr\.backend: unknown backend 'nemo'"),
    ("diarize", "{min_cluster: 2}", r"stages\.diarize\.min_cluster: unknown option \(did you mean min_cluster_s\?\)"),
    ("diarize", "{embedder_options: {wieghts: x}}", r"stages\.diarize\.embedder_options\.wieghts: unknown option"),
    ("diarize", "{backend: pyannote, modle: x}", r"stages\.diarize\.modle: unknown option \(did you mean model\?\)"),
    ("attribute", "{mode: x}", r"stages\.attribute\.mode: unknown option"),
    ("identify", "{treshold: 0.65}", r"stages\.identify\.treshold: unknown option \(did you mean threshold\?\)"),
    ("correct", "{backend: lexicon, min_scor: 0.8}", r"stages\.correct\.min_scor: unknown option \(did you mean min_score\?\)"),
    ("correct", "{backend: lexicon, guards: {max_drop: 1}}", r"stages\.correct\.guards\.max_drop: unknown option"),
    ("correct", "{backend: llm, api_key: sk-123}", r"stages\.correct\.api_key: an API key never goes in a recipe"),
]


@pytest.mark.parametrize("stage, options, pattern", BAD_OPTIONS)
def test_a_bad_option_in_any_stage_fails_on_load(tmp_path, stage, options, pattern):
    stages = {"vad": "{}", "asr": "{}", "diarize": "{}", stage: options}
    text = "stages:\n" + "".join(f"  {name}: {value}\n" for name, value in stages.items())
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(RecipeError, match=rf"bad\.yaml: {pattern}"):
        load_recipe(tmp_path / "bad.yaml")


def test_a_bad_recipe_exits_2_with_one_line_before_any_audio_is_read(tmp_path, capsys):
    from speechkit.cli import main
    (tmp_path / "r.yaml").write_text("stages: {vad: {}, asr: {}, diarize: {}, identify: {treshold: 0.6}}\n")
    code = main(["run", str(tmp_path / "r.yaml"), "--level", "1", "--workspace", str(REPO / "workspaces" / "demo"),
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().count("\n") == 0 and "stages.identify.treshold: unknown option (did you mean threshold?)" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("text, pattern", [
    ("level: 4\nstages: {}\n", r"bad\.yaml: level: expected 1, 2 or 3"),
    ("level: 1\nstages: {vad: {}, asr: {}}\n", r"stages\.diarize: missing"),
    ("level: 1\nstages: {vad: {}, asr: {}, diarize: {}, identify: {}, summarize: {}}\n", r"stages\.summarize: unknown stage"),
    ("level: 1\nstagess: {}\n", r"unknown key\(s\) stagess"),
    ("level: 1\nstages: {vad: {}, asr: {}, diarize: {}, identify: {}}\ncontext: {tokens: 3}\n", r"context: .*tokens"),
])
def test_bad_recipes_name_file_and_field(tmp_path, text, pattern):
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(FormatError, match=pattern):
        load_recipe(tmp_path / "bad.yaml")


def test_unknown_recipe_lists_shipped_ones():
    with pytest.raises(FormatError, match=r"recipe not found \(recipes shipped: .*whisper"):
        load_recipe("l9")


def test_cache_reuses_results_and_recovers_from_a_corrupt_entry(tmp_path):
    cache = StageCache(tmp_path)
    calls = []
    compute = lambda: calls.append(1) or {"regions": [[0.0, 1.5]]}  # noqa: E731
    key = digest("audio-hash", {"threshold": 0.5})
    assert cache.get_or_compute("vad", key, compute) == {"regions": [[0.0, 1.5]]}
    assert StageCache(tmp_path).get_or_compute("vad", key, compute) == {"regions": [[0.0, 1.5]]}
    assert len(calls) == 1
    (tmp_path / "vad" / f"{key}.json").write_text('{"regions": [[0.0,')  # torn write from an old tool
    assert StageCache(tmp_path).get_or_compute("vad", key, compute) == {"regions": [[0.0, 1.5]]}
    assert len(calls) == 2
    assert digest("audio-hash", {"threshold": 0.6}) != key
