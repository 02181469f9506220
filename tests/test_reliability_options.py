"""Hostile and careless input, round five (issue 48): options and files beyond the one-line
refusals of test_cli_catalogue.py: what is accepted is checked to work (a shared stage cache, an
export into a link to a folder, overlapping UEM regions), and deeply nested gold notes and
questions are one error line at any depth."""
from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from reliability_helpers import QUESTIONS, make_notes_run, make_workspace, refused, seg, snapshot

from speechkit.cli import main
from speechkit.errors import OutputError
from speechkit.io.uem import read_uem
from speechkit.lifecycle import Job, check_cache_folder
from speechkit.metrics.diarization import diarization_errors
from speechkit.transcript import Transcript

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "echo_system.py"


@pytest.fixture
def tiny(tmp_path):
    ws, _ = make_workspace(tmp_path)
    from speechkit.io.manifest import load_workspace
    return load_workspace(ws)


def test_a_cache_folder_is_shared_but_no_run_folder_is_one(tiny, tmp_path):
    """A run's stage cache may be another run's ``cache/`` (or a folder below it), or a folder of its
    own; never a run folder, nor a folder inside one but its cache."""
    other = tmp_path / "other"
    (other / "transcripts").mkdir(parents=True)
    (other / "run.json").write_text("{}")
    out = tmp_path / "mine"
    for cache in (other / "cache", other / "cache" / "x", tmp_path / "shared", out / "cache", None):
        check_cache_folder(Job(tiny, out, cache))  # accepted
    for cache, problem in ((other, f"is a run folder; give a stage cache of its own (such as {other / 'cache'}"),
                           (other / "transcripts", f"lies inside the run folder {other}, outside its stage cache"),
                           (out, "is a run folder"), (out / "notes", f"lies inside the run folder {out}")):
        with pytest.raises(OutputError, match="^" + str(cache).replace("/", "\\/") + ": " + problem.split(" (")[0]):
            check_cache_folder(Job(tiny, out, cache))


def test_two_runs_share_one_run_folders_cache(tiny, tmp_path, monkeypatch, capsys):
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    program = shlex.join([sys.executable, str(EXAMPLE)])
    first, second = tmp_path / "first", tmp_path / "second"
    for out in (first, second):
        assert main(["run", "command", "-L", "1", "-w", str(tiny.root), "--out", str(out), "--cache-dir",
                     str(first / "cache"), "--system-command", program]) == 0
    assert (first / "scores.json").read_bytes() == (second / "scores.json").read_bytes()
    assert not (second / "cache").exists()  # the shared one was used
    assert main(["run", "command", "-L", "1", "-w", str(tiny.root), "--out", str(tmp_path / "third"), "--cache-dir",
                 str(first), "--system-command", program]) == 1
    assert f"error: {first}: is a run folder; give a stage cache of its own" in capsys.readouterr().err
    assert not (tmp_path / "third").exists()


def test_export_inputs_into_a_link_to_a_folder_writes_into_that_folder_only(tiny, tmp_path):
    target = tmp_path / "elsewhere" / "inputs"
    target.mkdir(parents=True)
    os.symlink(target, tmp_path / "link")
    before = snapshot(tiny.root)
    assert main(["export", "inputs", str(tiny.root), "-L", "1", str(tmp_path / "link")]) == 0
    assert (tmp_path / "link").is_symlink()  # followed, as every output folder named by a link to one
    assert sorted(p.name for p in target.iterdir()) == ["m1", "m2", "meetings.txt"]
    assert json.loads((target / "m1" / "inputs.json").read_text())["meeting"] == "m1"
    assert snapshot(tiny.root) == before


def test_overlapping_uem_regions_score_as_their_union(tmp_path):
    ref = Transcript("m1", [seg("a", 0.0, "one two three four"), seg("b", 3.0, "five six seven eight")])
    hyp = Transcript("m1", [seg("a", 0.0, "one two three four five six")])
    (tmp_path / "x.uem").write_text("m1 1 0 2.5\nm1 1 1.5 4.5\nm1 1 4.0 4.5\n")
    regions = read_uem(tmp_path / "x.uem").regions_of("m1")
    assert regions == ((0.0, 2.5), (1.5, 4.5), (4.0, 4.5))
    assert diarization_errors(ref, hyp, 0.0, regions) == diarization_errors(ref, hyp, 0.0, [(0.0, 4.5)])


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [900, 100_000])
@pytest.mark.parametrize("file, key, problem", [
    ("notes.json", "summary", "summary: expected a string, got list"),
    ("notes.json", "action_items", "action_items[0]: expected an object, got list"),
    ("questions.json", "questions", "questions[0]: expected an object, got list"),
    ("run-notes", "summary", "summary: expected a string, got list")])
def test_deeply_nested_gold_notes_questions_and_run_notes_are_one_error_line(tmp_path, capsys, file, key, problem,
                                                                             depth):
    """Nested under the parser's limit the field is of the wrong type; past it the file is invalid JSON."""
    ws, out = make_notes_run(tmp_path)
    path = out / "notes" / "m1.json" if file == "run-notes" else ws / "meetings" / "m1" / file
    data = json.loads(path.read_text())
    data[key] = "@@"
    path.write_text(json.dumps(data).replace('"@@"', _nested(depth)))
    line = refused(tmp_path, ["score", "--workspace", ws, "--run", out, "--resamples", "0"], capsys, str(path.name))
    assert str(path) in line or f"notes/{path.name}" in line
    assert ("invalid JSON: values nested too deeply" if depth > 1000 else problem) in line, line


def test_a_nested_value_in_a_question_field_is_refused_with_a_short_quote(tmp_path, capsys):
    ws, out = make_notes_run(tmp_path)
    questions = json.loads(json.dumps(QUESTIONS["m1"]))
    questions["questions"][0]["answer"] = json.loads(_nested(500))
    (ws / "meetings" / "m1" / "questions.json").write_text(json.dumps(questions))
    line = refused(tmp_path, ["score", "--workspace", ws, "--run", out, "--resamples", "0"], capsys,
                   "questions[0].answer: expected a non-empty string")
    assert len(line) < 400, line
