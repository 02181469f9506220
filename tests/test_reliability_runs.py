"""Runs over bad workspaces and interrupted runs, on the real-speech workspace of tests/test_runner.py.

- Enrollment missing for one person: that person's voice stays unnamed, the other is still named.
- An empty term set: number and term recall are n/a (null with a reason), never 0.
- A meeting's audio or an enrollment clip deleted after the workspace was loaded: an error naming
  the file; the meetings before it keep their transcripts.
- ``speechkit run`` killed with SIGKILL after the first meeting: no half-written file, and the
  rerun resumes from the stage cache to outputs byte-identical to an uninterrupted run.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from speechkit.cascade import Cascade
from speechkit.cli import main
from speechkit.errors import AudioError
from speechkit.io import manifest
from speechkit.io.manifest import load_workspace
from speechkit.io.rttm import read_rttm
from speechkit.io.stm import read_stm
from speechkit.recipe import load_recipe
from speechkit.runner import RunResult, run_workspace

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def partial_ws(tmp_path_factory, make_real_workspace) -> Path:
    """The real workspace with Sheila's enrollment removed and an empty term set."""
    root = make_real_workspace(tmp_path_factory.mktemp("partial"))
    data = yaml.safe_load((root / "workspace.yaml").read_text())
    for person in data["people"]:
        if person["id"] == "p_sheila":
            del person["enrollment"]
    data["terms"] = {"numbers": [], "jargon": []}
    (root / "workspace.yaml").write_text(yaml.safe_dump(data))
    (root / "audio" / "enroll-p_sheila.wav").unlink()
    return root


@pytest.fixture(scope="module")
def l3_cascade() -> Cascade:
    return Cascade(load_recipe("l3"))


@pytest.fixture(scope="module")
def partial_run(partial_ws, l3_cascade, tmp_path_factory) -> RunResult:
    out = tmp_path_factory.mktemp("partial-run")
    return run_workspace(load_recipe("l3"), load_workspace(partial_ws), out, cascade=l3_cascade, progress=False)


@pytest.mark.decodes
def test_people_without_enrollment_stay_unnamed_and_the_rest_are_named(partial_run):
    for mid, result in partial_run.results.items():
        names = sorted(result.record.result("identify").values())
        assert names[0] == "Diane Doe" and names[1].startswith("Speaker "), (mid, names)  # two voices
        assert "Sheila Doe" not in {s.speaker_name for s in result.transcript.segments}
    persons = [m["details"]["speakers"]["persons"] for m in partial_run.scores["meetings"].values()]
    diane = [p["p_diane"] for p in persons]
    assert sum(d["correctly_named_words"] for d in diane) >= 0.7 * sum(d["words"] for d in diane)
    assert all(p["p_sheila"]["correctly_named_words"] == 0 for p in persons)
    labels = {p["p_sheila"]["name"] for p in persons}
    assert len(labels) == 1 and labels.pop().startswith("Speaker ")  # one stable label across meetings
    context = json.loads((partial_run.out / "context" / "m1.json").read_text())
    assert {"source": "voice enrollments of the invited", "items": 1, "budget": None} in context["additions"]


@pytest.mark.decodes
def test_empty_term_set_makes_recalls_not_applicable(partial_run):
    scores = partial_run.scores
    for metric in ("number_recall", "term_recall"):
        assert scores["aggregate"][metric]["value"] is None
        assert "term set" in scores["not_applicable"][metric]
        for entry in scores["meetings"].values():
            assert entry[metric]["value"] is None and metric in entry["details"]["not_applicable"]
    # the rest is scored as usual: WER measured on one CPU's AVX-512, AVX2 and generic paths: 0.115 on each
    assert scores["aggregate"]["wer"]["value"] < 0.3


def _copy_run(partial_ws: Path, partial_run: RunResult, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the workspace and of the finished run's stage cache (so nothing is recomputed)."""
    ws = shutil.copytree(partial_ws, tmp_path / "ws")
    shutil.copytree(partial_run.out / "cache", tmp_path / "run" / "cache")
    return ws, tmp_path / "run"


@pytest.mark.decodes
def test_audio_deleted_after_load_is_an_error_naming_it(partial_ws, partial_run, tmp_path, monkeypatch, capsys):
    ws, out = _copy_run(partial_ws, partial_run, tmp_path)
    loaded = manifest.load_workspace

    def load_then_delete(path):
        workspace = loaded(path)
        workspace.meeting("m2").audio.unlink()
        return workspace

    monkeypatch.setattr(manifest, "load_workspace", load_then_delete)
    assert main(["run", "l3", "--workspace", str(ws), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    missing = ws / "audio" / "m2.wav"
    assert f"speechkit run: error: {missing}: file not found" in err and "Traceback" not in err
    assert (out / "transcripts" / "m1.json").is_file()  # the meeting before it is kept
    assert not (out / "transcripts" / "m2.json").exists() and not (out / "scores.json").exists()


@pytest.mark.decodes
def test_enrollment_deleted_after_load_is_an_error_naming_it(partial_ws, partial_run, l3_cascade, tmp_path):
    ws, out = _copy_run(partial_ws, partial_run, tmp_path)
    workspace = load_workspace(ws)
    clip = workspace.person("p_diane").enrollments[0]
    clip.unlink()
    with pytest.raises(AudioError, match=f"^{re.escape(str(clip))}: file not found$"):
        run_workspace(load_recipe("l3"), workspace, out, cascade=l3_cascade, progress=False)


# Interrupted runs ----------------------------------------------------------------------------

def _speechkit(*args: str) -> list[str]:
    return [sys.executable, "-m", "speechkit", *args]


def _half_written(out: Path) -> tuple[list[str], list[Path]]:
    """Files under ``out`` that do not parse, and the temporary files of atomic writes."""
    bad, leftovers = [], []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        if path.name.startswith(".") and path.name.endswith(".tmp"):
            leftovers.append(path)
            continue
        if path.name == ".speechkit.lock":  # the run folder's lock (speechkit.io.lock), not an output
            continue
        try:
            if path.suffix == ".json":
                json.loads(path.read_text(encoding="utf-8"))
            elif path.suffix == ".stm":
                read_stm(path)
            elif path.suffix == ".rttm":
                read_rttm(path)
            else:
                bad.append(f"{path}: unexpected before the run's end")
        except Exception as exc:  # noqa: BLE001 - any failure to parse is what we look for
            bad.append(f"{path}: {exc}")
    return bad, leftovers


def _outputs(out: Path) -> dict[str, bytes]:
    """Every file of a run folder but run.json (timings, cache counters) and the report's plots."""
    skip = {"run.json", "report.html", "aggregate.png", "wer.png"}
    return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name not in skip}


@pytest.fixture(scope="module")
def real_ws(tmp_path_factory, make_real_workspace) -> Path:
    return make_real_workspace(tmp_path_factory.mktemp("real"))


@pytest.mark.decodes
@pytest.mark.slow  # a run killed and resumed, against a whole run
def test_killed_run_resumes_to_byte_identical_outputs(real_ws, tmp_path, real_meetings):
    out = tmp_path / "run"
    args = _speechkit("run", "l2", "--workspace", str(real_ws), "--out", str(out))
    # The uninterrupted run, moved aside afterwards so the interrupted one writes the same paths
    # (scores.json records the run folder's absolute path).
    subprocess.run(args, cwd=REPO, check=True, capture_output=True)
    reference = _outputs(out.rename(tmp_path / "reference"))

    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first = out / "transcripts" / "m1.json"
    while not first.exists():
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "transcripts" / "m2.json").exists() and not (out / "scores.json").exists()

    bad, _ = _half_written(out)  # temporary files of atomic writes may be left: the rerun removes them
    assert bad == []
    # A kill during a write leaves the writer's temporary file: plant two to see the rerun remove them.
    planted = [out / "transcripts" / ".m2.json.k1ll3d.tmp", out / "cache" / "asr" / ".0123abcd.json.k1ll3d.tmp"]
    for path in planted:
        path.write_text('[{"session_id": "m2", "words": "half')

    subprocess.run(args, cwd=REPO, check=True, capture_output=True)
    assert list(out.rglob(".*.tmp")) == []  # the rerun removed the leftovers
    run = json.loads((out / "run.json").read_text())
    for stage in ("vad", "asr", "diarize"):  # the first meeting's results come from the cache
        assert run["cache"]["hits"].get(stage, 0) >= 1, run["cache"]
        assert run["cache"]["misses"].get(stage, 0) <= len(real_meetings) - 1, run["cache"]
    assert _outputs(out) == reference
