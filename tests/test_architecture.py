"""docs/architecture.md stays true: its worked example (a VAD backend added by one module and one
registry entry) is run as written, through a recipe, on real speech."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechkit.cascade import Cascade
from speechkit.recipe import RecipeError, load_recipe
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
