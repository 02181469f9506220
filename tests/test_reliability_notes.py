"""Hostile and careless input, round four (issue 40): gold notes and questions, edited run folders,
``--set`` values, on the tiny workspace with gold notes and questions (reliability_helpers.make_notes_run).

Every refusal is checked through the command line: exit code 1 or 2, one ``error:`` line naming
the problem, no traceback, and nothing under the temporary tree created, changed or removed.
"""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from reliability_helpers import QUESTIONS, error_line, make_notes_run, refused

from speechkit.cli import main
from speechkit.errors import FormatError
from speechkit.io.jsonfile import parse_json
from speechkit.io.questions import MAX_FILE_BYTES, MAX_QUESTIONS, MAX_TEXT_CHARS
from speechkit.metrics import notes as notes_metrics
from speechkit.notes import MAX_ITEMS, ActionItem, Decision
from speechkit.text_similarity import LexicalSimilarity

DEAD_ENDPOINT = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--max-retries", "0"]


@pytest.fixture
def notes_run(tmp_path) -> tuple[Path, Path]:
    return make_notes_run(tmp_path)


def _command(name: str, ws: Path, out: Path) -> list:
    """The command that reads the gold notes, the gold questions or the run's notes."""
    return {"score": ["score", "--workspace", ws, "--run", out, "--resamples", "0"],
            "qa": ["qa", out], "judge": ["judge", out, *DEAD_ENDPOINT], "probe": ["probe", out, *DEAD_ENDPOINT]}[name]


# --- item 4: run.json's workspace of the wrong type; item 13: a relative workspace.root ---

@pytest.mark.parametrize("command", ["qa", "judge"])
@pytest.mark.parametrize("workspace", ["ws", ["ws"], 3, {"root": ["ws"]}])
def test_a_run_json_workspace_that_is_no_mapping_with_a_root_is_one_error_line(notes_run, tmp_path, capsys,
                                                                                 command, workspace):
    ws, out = notes_run
    (out / "run.json").write_text(json.dumps({"workspace": workspace}))
    refused(tmp_path, _command(command, ws, out), capsys, "run.json: names no workspace (workspace.root)")


def test_a_relative_workspace_root_is_relative_to_the_run_folder(notes_run, tmp_path, monkeypatch, capsys):
    ws, out = notes_run
    (out / "run.json").write_text(json.dumps({"workspace": {"name": "tiny", "root": "../ws"}}))
    elsewhere = tmp_path / "a" / "b"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # ../ws from here does not exist
    assert not (elsewhere / ".." / "ws").exists()
    assert main(["qa", str(out)]) == 0
    assert json.loads((out / "qa.json").read_text())["workspace"] == str(ws.resolve())


# --- item 4: lone surrogates; item 8: duplicate keys; item 9: the version's type ---

@pytest.mark.parametrize("text, problem", [
    ('{"q": "Who \\ud800 owns?"}', "a string holds a lone surrogate (not a character): 'Who \\ud800 owns?'"),
    ('{"q": ["x", {"k\\udc00": 1}]}', "a string holds a lone surrogate"),
    ('[{"a": "\\udfff\\ud800"}]', "a string holds a lone surrogate"),
    ('{"a": 1, "b": {"c": 2, "c": 3}}', "duplicate key 'c' in an object"),
])
def test_the_json_reader_refuses_lone_surrogates_and_duplicate_keys(text, problem):
    with pytest.raises(FormatError, match="^" + re.escape(f"f.json: invalid JSON: {problem}")):
        parse_json(text, "f.json")
    with pytest.raises(FormatError, match="invalid JSON"):
        parse_json(text.encode(), "f.json")  # bytes as read from a file


def test_the_json_reader_keeps_surrogate_pairs_and_escaped_backslashes():
    assert parse_json('["\\ud83d\\ude00", "\\\\ud800"]', "f.json") == ["\U0001F600", "\\ud800"]


def _edit(path: Path, text: str) -> None:
    if path.is_symlink() or path.exists():
        path.unlink()
    path.write_text(text)


@pytest.mark.parametrize("target, command, text, problem", [
    # a gold question's text with a lone surrogate: used to load, then fail in the atomic writer
    ("questions", "qa", json.dumps(QUESTIONS["m1"]).replace("Who owns", "Who \\ud800 owns"), "lone surrogate"),
    ("questions", "qa", json.dumps(QUESTIONS["m1"])[:-1] + ', "questions": []}', "duplicate key 'questions'"),
    ("questions", "qa", json.dumps({**QUESTIONS["m1"], "version": True}), "version: expected the integer 1, got True"),
    ("questions", "qa", json.dumps({**QUESTIONS["m1"], "version": 1.0}), "version: expected the integer 1, got 1.0"),
    ("gold notes", "score", '{"format": "speechkit-notes/1", "summary": "a", "summary": "b"}',
     "duplicate key 'summary'"),
    ("gold notes", "score", '{"format": "speechkit-notes/1", "summary": "Robert \\udc80 Smith"}', "lone surrogate"),
    ("run notes", "score", '{"format": "speechkit-notes/1", "outline": ["x"], "outline": []}', "duplicate key"),
    ("run notes", "qa", '{"format": "speechkit-notes/1", "summary": "\\ud800"}', "lone surrogate"),
])
def test_bad_gold_and_run_files_are_one_error_line(notes_run, tmp_path, capsys, target, command, text, problem):
    ws, out = notes_run
    path = {"questions": ws / "meetings" / "m1" / "questions.json", "gold notes": ws / "meetings" / "m1" / "notes.json",
            "run notes": out / "notes" / "m1.json"}[target]
    _edit(path, text)
    line = refused(tmp_path, _command(command, ws, out), capsys, problem)
    assert str(path) in line


# --- item 6: a folder, a FIFO or a link to /dev/zero in place of an optional input; item 7: links out ---

def _replace(path: Path, kind: str, outside: Path) -> None:
    path.unlink()
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dangling-link":
        path.symlink_to(path.parent / "gone.json")
    else:  # a link to a valid file outside the folder
        path.symlink_to(outside)


KINDS = {"folder": "is a directory", "fifo": "is not a regular file", "dev-zero": "is not a regular file",
         "dangling-link": "file not found"}


@pytest.mark.parametrize("target, command", [("gold notes", "score"), ("questions", "qa"), ("run notes", "score"),
                                             ("run notes", "qa"), ("run notes", "judge"), ("run notes", "probe")])
@pytest.mark.parametrize("kind", [*KINDS, "link-out"])
def test_what_is_not_a_regular_file_inside_its_folder_is_never_taken_for_absent(notes_run, tmp_path, capsys,
                                                                                 target, command, kind):
    ws, out = notes_run
    path = {"questions": ws / "meetings" / "m1" / "questions.json", "gold notes": ws / "meetings" / "m1" / "notes.json",
            "run notes": out / "notes" / "m1.json"}[target]
    outside = tmp_path / "elsewhere.json"
    outside.write_text(path.read_text())  # a valid file of the kind: only where it lies is wrong
    _replace(path, kind, outside)
    expect = KINDS.get(kind) or ("leaves the run's notes folder" if target == "run notes"
                                 else "leaves the workspace folder")
    line = refused(tmp_path, _command(command, ws, out), capsys, expect)
    assert str(path.relative_to(tmp_path)) in line


# --- items 5, 12, 14: caps on entries and on texts, and the file sizes ---

def _notes_with(items: int, description: str = "check the costs") -> str:
    return json.dumps({"format": "speechkit-notes/1", "summary": "x",
                       "action_items": [{"description": f"{description} {i}"} for i in range(items)]})


@pytest.mark.parametrize("target, text, problem", [
    ("gold notes", _notes_with(MAX_ITEMS + 1),
     f"action_items: {MAX_ITEMS + 1:,} entries; at most {MAX_ITEMS:,} per meeting"),
    ("run notes", _notes_with(MAX_ITEMS + 1), f"action_items: {MAX_ITEMS + 1:,} entries; at most {MAX_ITEMS:,}"),
    ("gold notes", _notes_with(1, "x" * 10_001),
     "action_items[0].description: a text of 10,003 characters; at most 10,000"),
    ("questions", json.dumps({**QUESTIONS["m1"], "questions": [
        {**QUESTIONS["m1"]["questions"][0], "id": f"q{i}"} for i in range(MAX_QUESTIONS + 1)]}),
     f"questions: {MAX_QUESTIONS + 1:,} questions; at most {MAX_QUESTIONS:,} per meeting"),
    ("questions", json.dumps({**QUESTIONS["m1"], "questions": [
        {**QUESTIONS["m1"]["questions"][0], "question": "Who owns " + "x" * 10_000_000 + "?"}]}),
     f"questions[0].question: a text of 10,000,010 characters; at most {MAX_TEXT_CHARS:,}"),
])
def test_entries_and_texts_beyond_their_caps_are_refused_in_one_line(notes_run, tmp_path, capsys, target, text,
                                                                     problem):
    ws, out = notes_run
    path = {"questions": ws / "meetings" / "m1" / "questions.json", "gold notes": ws / "meetings" / "m1" / "notes.json",
            "run notes": out / "notes" / "m1.json"}[target]
    _edit(path, text)
    start = time.perf_counter()
    refused(tmp_path, _command("qa" if target == "questions" else "score", ws, out), capsys, problem)
    assert time.perf_counter() - start < 20  # a 10 MB question text used to take 35 s in extractive qa


def test_a_questions_file_over_its_size_limit_is_refused_before_it_is_parsed(notes_run, tmp_path, capsys):
    ws, out = notes_run
    question = QUESTIONS["m1"]["questions"][0]
    many = [{**question, "id": f"q{i}"} for i in range(MAX_FILE_BYTES // len(json.dumps(question)) + 1000)]
    path = ws / "meetings" / "m1" / "questions.json"
    _edit(path, json.dumps({**QUESTIONS["m1"], "questions": many}))
    assert path.stat().st_size > MAX_FILE_BYTES
    start = time.perf_counter()
    refused(tmp_path, ["qa", out], capsys, "questions.json: holds more than 16 MiB, the limit for this kind of file")
    assert time.perf_counter() - start < 20


def test_matching_action_items_and_decisions_does_not_repeat_work_for_every_pair(monkeypatch):
    """Names are compared once per distinct pair of names, and every text is normalised once, not
    once per pair of items (3,000 gold items took minutes)."""
    n = 300
    predicted = tuple(ActionItem(f"deploy the kafka cluster {i}", ("Robert Smith", "Bob", None)[i % 3])
                      for i in range(n))
    gold = tuple(ActionItem(f"deploy the kafka cluster {i}", ("Robert Smith", "Alice Jones")[i % 2]) for i in range(n))
    calls = {"credit": 0, "words": 0}
    credit, words = notes_metrics.assignee_credit, notes_metrics.content_words

    def counted_credit(*args):
        calls["credit"] += 1
        return credit(*args)

    def counted_words(text):
        calls["words"] += 1
        return words(text)
    monkeypatch.setattr(notes_metrics, "assignee_credit", counted_credit)
    monkeypatch.setattr(notes_metrics, "content_words", counted_words)
    matches = notes_metrics.match_action_items(predicted, gold, LexicalSimilarity())
    assert len(matches) == n and all(i == j for i, j, _ in matches)
    assert calls["credit"] <= 3 * 2  # distinct predicted names x distinct gold names
    decisions = tuple(Decision(f"topic {i}", f"choice {i} kafka") for i in range(n))
    assert len(notes_metrics.match_decisions(decisions, decisions)) == n
    assert calls["words"] <= 4 * n  # per decision, not per pair


def test_the_lexical_similarity_is_the_dice_overlap_of_content_words():
    """As one sparse product: every pair's overlap of the two texts' content-word sets."""
    left = ["deploy the kafka cluster", "review the budget", "the", "deploy kafka"]
    right = ["deploy kafka", "kafka budget review", "a"]
    expected = [[2 * len(a & b) / (len(a) + len(b)) if a or b else 0.0 for b in map(notes_metrics.content_words, right)]
                for a in map(notes_metrics.content_words, left)]
    assert LexicalSimilarity().matrix(left, right).tolist() == expected
    assert LexicalSimilarity().matrix([], right).shape == (0, 3)
    assert LexicalSimilarity().matrix(left, []).shape == (4, 0)


# --- item 11: an edited qa.json with answers no score uses ---

def test_answers_to_unknown_questions_or_meetings_are_named_not_scored_silently(notes_run, tmp_path, capsys, caplog):
    ws, out = notes_run
    assert main(["qa", str(out)]) == 0
    qa = json.loads((out / "qa.json").read_text())
    qa["meetings"]["m1"]["answers"] += [{"id": "zz1", "answer": "Alice Jones"}, {"id": "zz2", "answer": "x"}]
    qa["meetings"]["m9"] = {"answers": [{"id": "m9-q1", "answer": "Robert Smith"}]}
    (out / "qa.json").write_text(json.dumps(qa))
    capsys.readouterr()
    assert main(["score", "--workspace", str(ws), "--run", str(out), "--out",
                 str(tmp_path / "scores.json"), "--resamples", "0"]) == 0
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["aggregate"]["qa_accuracy"]["value"] == 1.0  # the gold questions only
    assert scores["settings"]["questions"]["ignored"] == [
        "answers of 1 meeting(s) that are not scored meetings of the workspace: m9",
        "m1: 2 answer(s) to ids that are not its gold questions: zz1, zz2"]
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert [w.split("qa.json: left out: ", 1)[1] for w in warned] == scores["settings"]["questions"]["ignored"]


def test_an_answer_given_twice_in_qa_json_is_an_error(notes_run, tmp_path, capsys):
    ws, out = notes_run
    assert main(["qa", str(out)]) == 0
    qa = json.loads((out / "qa.json").read_text())
    qa["meetings"]["m1"]["answers"].append({"id": "m1-q1", "answer": "Robert Smith"})
    (out / "qa.json").write_text(json.dumps(qa))
    capsys.readouterr()
    refused(tmp_path, _command("score", ws, out), capsys, "a second answer to question 'm1-q1'")


# --- item 10: a language the model does not know ---

@pytest.mark.parametrize("language", ["日本語", "xx", "english"])
def test_a_language_whisper_does_not_have_is_refused_before_any_work(notes_run, tmp_path, capsys, language):
    ws, out = notes_run
    line = refused(tmp_path, ["recipe", "-L", "1", "--workspace", ws, "--out", tmp_path / "run",
                              "--set", f"stages.asr.language={language}"], capsys,
                   f"--set: stages.asr.language: {language!r} is not a language code of Whisper")
    assert line.startswith("speechkit recipe: error: ")


def test_a_language_the_model_does_not_know_stops_the_run_when_it_loads(make_real_workspace, tmp_path, capsys):
    """tiny.en knows English only: faster-whisper would warn and decode in English."""
    ws = make_real_workspace(tmp_path / "ws")
    rc = main(["recipe", "-L", "1", "--workspace", str(ws), "--out", str(tmp_path / "run"),
               "--set", "stages.asr.language=ja"])
    assert rc == 1
    assert error_line(capsys).endswith("stages.asr.language: 'ja' is not a language of the model tiny.en (it knows en)")
    assert not (tmp_path / "run" / "transcripts").exists()
