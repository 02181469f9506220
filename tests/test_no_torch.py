"""The default cascade without the torch runtime (about 600 MB of memory that bare faster-whisper
never loads): importing speechkit, and running the default recipe at L1 and L3 over real speech
(VAD, ASR, diarization, identification from enrollments, correction, notes, questions, scores),
load neither torch nor the packages that import it (silero_vad, resemblyzer)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TORCH_PACKAGES = ("torch", "torchaudio", "silero_vad", "resemblyzer", "speechbrain", "pyannote.audio")

RUN = """
import json, sys
from pathlib import Path

def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in {packages!r} or m.startswith("pyannote.audio"))

import speechkit, speechkit.cli
report = {{"import": loaded()}}
from speechkit.io.manifest import load_workspace
from speechkit.recipe import load_recipe
from speechkit.runner import run_workspace
ws = load_workspace(sys.argv[1])
for level in (1, 3):
    run = run_workspace(load_recipe("whisper", level=level), ws, Path(sys.argv[2]) / f"l{{level}}", progress=False)
    report[f"l{{level}}"] = loaded()
    report[f"l{{level}}_names"] = sorted({{s.speaker_name for r in run.results.values()
                                           for s in r.transcript.segments if s.speaker_name}})
    report[f"l{{level}}_words"] = sum(len(r.transcript.text.split()) for r in run.results.values())
print("REPORT " + json.dumps(report))
"""


@pytest.mark.decodes
@pytest.mark.slow
def test_default_recipe_at_l1_and_l3_loads_no_torch(make_real_workspace, tmp_path):
    ws = make_real_workspace(tmp_path / "ws")
    done = subprocess.run([sys.executable, "-c", RUN.format(packages=TORCH_PACKAGES), str(ws), str(tmp_path / "runs")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.split("REPORT ", 1)[1])
    assert report["import"] == report["l1"] == report["l3"] == []
    # the runs did the work: words at both levels, and L3 named the speakers from their enrollments
    assert report["l1_words"] > 20 and report["l3_words"] > 20
    assert report["l1_names"] == [] and report["l3_names"]
