"""Recipes load and validate; the stage cache reuses results and survives a corrupt entry."""
from __future__ import annotations

import pytest

from speechkit.cache import StageCache, digest
from speechkit.errors import FormatError
from speechkit.recipe import RECIPES_DIR, load_recipe


@pytest.mark.parametrize("name", ["l1", "l2", "l3", "ctc-l1", "ctc-l2", "ctc-l3"])
def test_shipped_recipes_load(name):
    recipe = load_recipe(name)
    assert recipe.level == int(name[-1])
    assert recipe.stage("asr")["backend"] == ("ctc" if name.startswith("ctc") else "whisper")
    # post-correction is part of L2/L3 only
    assert (recipe.stage("correct") is not None) == (recipe.level >= 2)


def test_overrides_do_not_touch_the_original():
    recipe = load_recipe("l1")
    other = recipe.with_overrides(model="base", device="cpu")
    assert other.stage("asr")["model"] == "base" and other.device == "cpu"
    assert recipe.stage("asr")["model"] == "tiny.en"


@pytest.mark.parametrize("text, pattern", [
    ("level: 4\nstages: {}\n", r"bad\.yaml: level: expected 1, 2 or 3"),
    ("level: 1\nstages: {vad: {}, asr: {}, diarize: {}}\n", r"stages\.identify: missing"),
    ("level: 1\nstages: {vad: {}, asr: {}, diarize: {}, identify: {}, summarize: {}}\n", r"stages\.summarize: unknown stage"),
    ("level: 1\nstagess: {}\n", r"unknown key\(s\) stagess"),
    ("level: 1\nstages: {vad: {}, asr: {}, diarize: {}, identify: {}}\ncontext: {tokens: 3}\n", r"context: .*tokens"),
])
def test_bad_recipes_name_file_and_field(tmp_path, text, pattern):
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(FormatError, match=pattern):
        load_recipe(tmp_path / "bad.yaml")


def test_unknown_recipe_lists_shipped_ones():
    with pytest.raises(FormatError, match=r"recipe not found \(recipes shipped: .*l3"):
        load_recipe("l9")
    assert (RECIPES_DIR / "l3.yaml").is_file()


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
