"""docs/architecture.md stays true: its worked examples (a VAD backend added by one module and one
registry entry; a stage added by one module, one line in STAGES and one in a recipe) are run as
written, through a recipe, on real speech."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechkit import stages
from speechkit.cascade import Cascade
from speechkit.io.manifest import load_workspace
from speechkit.recipe import RecipeError, load_recipe
from speechkit.runner import run_workspace
from speechkit.stages import vad

REPO = Path(__file__).resolve().parents[1]


def _example_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (REPO / "docs" / "architecture.md").read_text(), re.S)


@pytest.fixture
def energy_backend(tmp_path, monkeypatch):
    module, entry = _example_blocks()[:2]
    (tmp_path / "vad_energy.py").write_text(module)
    monkeypatch.syspath_prepend(str(tmp_path))
    name, target = re.match(r'\s*"(\w+)": "[\w.]+:(\w+)",', entry).groups()
    monkeypatch.setitem(vad.BACKENDS, name, f"vad_energy:{target}")
    yield name
    sys.modules.pop("vad_energy", None)


def test_the_documented_vad_backend_runs_from_a_recipe(energy_backend, tmp_path, realdata):
    recipe = tmp_path / "energy.yaml"
    recipe.write_text("stages:\n  vad: {backend: %s, level_dbfs: -35, threshold: 0.5}\n"
                      "  asr: {}\n  diarize: {}\n" % energy_backend)
    cascade = Cascade(load_recipe(recipe, level=1))
    record = cascade.record(realdata / "faster-whisper" / "jfk.flac")
    regions = cascade.run_stage("vad", record).regions
    assert sum(e - s for s, e in regions) > 6.0  # jfk.flac: 11 s, mostly speech
    assert record.keys["vad"] and record.timings["vad"] >= 0
    silence = tmp_path / "silence.wav"
    sf.write(silence, np.zeros(5 * 16000, np.float32), 16000)
    assert cascade.run_stage("vad", cascade.record(silence)).regions == []

    recipe.write_text(recipe.read_text().replace("level_dbfs", "level_dbfz"))
    with pytest.raises(RecipeError, match=r"stages\.vad\.level_dbfz: unknown option \(did you mean level_dbfs\?\)"):
        load_recipe(recipe)


def _stage_example() -> tuple[str, str, str]:
    """The "Adding a stage" example: its module, its STAGES line and its recipe line."""
    text = (REPO / "docs" / "architecture.md").read_text()
    section = text[text.index("## Adding a stage"):]
    module, entry = re.findall(r"```python\n(.*?)```", section, re.S)[:2]
    [recipe_line] = re.findall(r"```yaml\n(.*?)```", section, re.S)
    return module, entry, recipe_line


@pytest.fixture
def talk_stage(tmp_path, monkeypatch):
    """The documented stage, installed as the doc says: its module and one line in STAGES."""
    module, entry, recipe_line = _stage_example()
    name, target = re.match(r'\s*"(\w+)": "([\w.]+)",', entry).groups()
    local = f"{name}_stage_example"  # the module, importable from a temporary folder
    (tmp_path / f"{local}.py").write_text(module.replace(target, local))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(stages.STAGES, name, local)
    yield name, recipe_line
    sys.modules.pop(local, None)


def test_the_documented_stage_is_keyed_cached_and_in_run_json(talk_stage, tmp_path, make_real_workspace,
                                                              real_meetings):
    name, recipe_line = talk_stage
    ws = load_workspace(make_real_workspace(tmp_path / "ws"))
    recipe = tmp_path / "talk.yaml"
    shipped = (REPO / "speechkit" / "recipes" / "whisper.yaml").read_text()
    recipe.write_text(shipped.replace("stages:\n", "stages:\n" + recipe_line, 1))
    first = run_workspace(load_recipe(recipe, level=3), ws, tmp_path / "run", progress=False)
    run = json.loads((first.out / "run.json").read_text())
    per_meeting = run["stages"][name]
    assert set(per_meeting) == set(real_meetings)
    for mid, speakers in per_meeting.items():
        transcript = first.results[mid].transcript  # corrected or not, the speakers are the same
        assert set(speakers) <= {s.speaker_name or s.speaker for s in transcript.segments}
        assert all(e["words"] >= 2 and e["seconds"] > 0 for e in speakers.values())
    stored = sorted((first.out / "cache" / name).glob("*.json"))
    assert len(stored) == len(real_meetings) and run["cache"]["misses"][name] == len(real_meetings)

    again = run_workspace(load_recipe(recipe, level=3), ws, first.out, progress=False)
    rerun = json.loads((again.out / "run.json").read_text())
    assert rerun["cache"]["hits"][name] == len(real_meetings) and rerun["stages"][name] == per_meeting

    recipe.write_text(recipe.read_text().replace("min_words", "min_word"))
    with pytest.raises(RecipeError, match=rf"stages\.{name}\.min_word: unknown option \(did you mean min_words\?\)"):
        load_recipe(recipe)
