"""Meeting-notes scores end to end: a run folder's ``notes/<meeting>.json`` scored against the demo
workspace's gold notes into scores.json (through the metric catalogue, with bootstrap CIs), shown by
``speechkit score``, the report and the paired comparison; not applicable, with the reason, where
the run or the workspace has no notes.

The runs are the demo references as transcripts (the transcript metrics are not what is tested here)
with notes written as a system would: the gold notes fed back, or fed back with every assignee
swapped for another person of the workspace.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from report_helpers import report_of

from speechkit.cli import main
from speechkit.compare import compare, load_run
from speechkit.io.manifest import load_workspace
from speechkit.io.notes import read_gold_notes, write_notes
from speechkit.io.seglst import write_seglst
from speechkit.io.stm import read_stm
from speechkit.notes import ActionItem, Notes
from speechkit.recipe import load_recipe
from speechkit.report.comparison import write_comparison
from speechkit.scoring import ScoreOptions, score_workspace
from speechkit.scoring.catalogue import catalogue

METRICS = catalogue().metrics
TRANSCRIPT_KEYS = catalogue().transcript_keys
family = catalogue().family

NOTES_METRICS = family("notes").keys

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"
OPTIONS = ScoreOptions(resamples=200)


@pytest.fixture(scope="module")
def demo():
    return load_workspace(DEMO)


def _run(demo, folder: Path, notes: str | None) -> Path:
    """A run folder laid out as a run writes it: ``transcripts/`` (the references) and, unless
    ``notes`` is None, ``notes/`` (``gold`` or ``swapped``: every assignee another person's name)."""
    people = list(demo.people)
    (folder / "transcripts").mkdir(parents=True)
    for m in demo.scored_meetings:
        shutil.copy(m.reference, folder / "transcripts" / f"{m.id}.json")
        if notes is None:
            continue
        gold = read_gold_notes(m.notes, m.id)
        items = gold.action_items
        if notes == "swapped":
            items = tuple(replace(i, assignee=people[(people.index(demo.person(i.assignee_id)) + 1) % len(people)].name,
                                  assignee_id=None) for i in items)
        write_notes(folder / "notes" / f"{m.id}.json", Notes(gold.summary, items, gold.decisions, gold.outline), m.id)
    score_workspace(demo, folder, OPTIONS, out=folder / "scores.json")
    return folder


@pytest.fixture(scope="module")
def runs(demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("notes-runs")
    return {kind: _run(demo, root / kind, None if kind == "none" else kind) for kind in ("gold", "swapped", "none")}


def _scores(run: Path) -> dict:
    return json.loads((run / "scores.json").read_text())


def test_gold_notes_fed_back_score_exactly_one_on_every_notes_metric(runs):
    scores = _scores(runs["gold"])
    assert set(NOTES_METRICS) == {"assignee_accuracy", "assignee_accuracy_partial", "action_item_precision",
                                  "action_item_recall", "action_item_f1", "decision_recall", "summary_fact_recall",
                                  "summary_entity_precision", "summary_number_recall"}
    for key in NOTES_METRICS:
        assert scores["aggregate"][key] == {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0}, key
        assert key not in scores["not_applicable"]
        assert scores["totals"][key]["meetings"] == len(scores["meetings"]) == 6
        for mid, entry in scores["meetings"].items():  # 1.0, or n/a with the catalogue's reason (no gold decisions)
            if entry[key]["value"] is None:
                assert entry["details"]["not_applicable"][key] == METRICS[key].empty, (mid, key)
            else:
                assert entry[key]["value"] == 1.0, (mid, key)
    notes = scores["settings"]["notes"]
    assert notes["similarity"] in ("embedding", "lexical") and 0 < notes["threshold"] < 1
    assert (notes["model"] is not None) == (notes["similarity"] == "embedding")


def test_every_swapped_assignee_scores_zero_while_the_items_still_match(runs):
    agg = _scores(runs["swapped"])["aggregate"]
    assert agg["assignee_accuracy"]["value"] == 0.0 and agg["assignee_accuracy_partial"]["value"] == 0.0
    assert agg["action_item_f1"]["value"] == agg["action_item_recall"]["value"] == 1.0


def test_a_run_without_notes_has_every_notes_metric_not_applicable_with_the_reason(runs):
    scores = _scores(runs["none"])
    for key in NOTES_METRICS:
        assert scores["aggregate"][key] == {"value": None, "ci_low": None, "ci_high": None}
        assert "the run has no notes for this meeting" in scores["not_applicable"][key]
        for entry in scores["meetings"].values():
            assert entry[key]["value"] is None and "run has no notes" in entry["details"]["not_applicable"][key]
    assert scores["settings"]["notes"]["similarity"] is None  # nothing was matched
    # the transcript metrics are those of the run with notes, to the value
    gold = _scores(runs["gold"])
    assert {k: scores["aggregate"][k] for k in TRANSCRIPT_KEYS} == {k: gold["aggregate"][k] for k in TRANSCRIPT_KEYS}


def test_a_workspace_without_gold_notes_has_the_notes_metrics_not_applicable(make_real_workspace, tmp_path):
    ws = make_real_workspace(tmp_path / "ws")
    run = tmp_path / "run"
    for meeting in load_workspace(ws).meetings:
        ref = read_stm(meeting.reference)[meeting.id]
        write_seglst(run / "transcripts" / f"{meeting.id}.json", [ref])
        write_notes(run / "notes" / f"{meeting.id}.json",
                    Notes("Diane asked about Chicago.", (ActionItem("call Chicago", "Diane Doe"),)), meeting.id)
    scores = score_workspace(ws, run, OPTIONS)
    for key in NOTES_METRICS:
        assert scores["aggregate"][key]["value"] is None
        assert scores["not_applicable"][key].startswith("no gold notes for this meeting")
    assert scores["aggregate"]["wer"]["value"] == 0.0


def test_score_command_prints_the_notes_table_of_the_run_folder_it_is_given(demo, runs, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert main(["score", "--workspace", str(DEMO), "--run", str(runs["swapped"]),
                 "--out", str(out), "--resamples", "0"]) == 0
    text = capsys.readouterr().out
    assert "Meeting notes" in text and "AsgnAcc" in text
    assert json.loads(out.read_text())["aggregate"]["assignee_accuracy"]["value"] == 0.0
    assert main(["score", "--workspace", str(DEMO), "--run", str(runs["none"]),
                 "--out", str(out), "--resamples", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if "AsgnAcc" in line] == [
        "n/a " + ", ".join(METRICS[k].short for k in NOTES_METRICS) + ": the run has no notes for this meeting "
        "(notes/<id>.json, written by the summarize stage)"]


def test_broken_run_notes_are_one_error_line(runs, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(runs["gold"] / "transcripts", run / "transcripts")
    (run / "notes").mkdir()
    (run / "notes" / "m02.json").write_text(json.dumps({"action_items": [{"assignee": "Priya"}]}))
    assert main(["score", "--workspace", str(DEMO), "--run", str(run), "--resamples", "0"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].endswith(f"error: {run / 'notes' / 'm02.json'}: action_items[0].description: missing")


def test_report_shows_the_items_side_by_side_with_the_wrong_assignee_marked(demo, runs, tmp_path):
    scores = _scores(runs["swapped"])
    report_of(tmp_path, load_recipe("l1"), demo.name, scores)
    report = (tmp_path / "report.md").read_text()
    section = report.split("## Meeting notes", 1)[1]
    m02 = section.split("### m02", 1)[1].split("###", 1)[0]
    gold = read_gold_notes(demo.meeting("m02").notes)
    item = gold.action_items[0]
    row = next(line for line in m02.splitlines() if line.startswith(f"| {item.description} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == item.assignee and cells[2] == item.description
    assert cells[3].endswith(" ✗") and cells[3] != f"{item.assignee} ✗"
    assert all(f"- ✓ {d.topic}: {d.choice}" in m02 for d in gold.decisions)  # decisions found
    assert "<h3>m02</h3>" in (tmp_path / "report.html").read_text()

    report_of(tmp_path, load_recipe("l1"), demo.name, _scores(runs["gold"]))
    assert f"| {item.description} | {item.assignee} | {item.description} | {item.assignee} ✓ |" in \
        (tmp_path / "report.md").read_text()
    report_of(tmp_path, load_recipe("l1"), demo.name, _scores(runs["none"]))
    assert "## Meeting notes\n\nNot applicable: the run has no notes" in (tmp_path / "report.md").read_text()


def test_comparison_holds_paired_deltas_of_every_notes_metric(runs, tmp_path):
    comparison = compare([load_run(runs["gold"]), load_run(runs["swapped"]), load_run(runs["none"])])
    write_comparison(tmp_path, comparison)
    deltas = json.loads((tmp_path / "comparison.json").read_text())["deltas"]
    swapped = deltas["swapped"]
    assert set(NOTES_METRICS) <= set(swapped)
    assert swapped["assignee_accuracy"]["value"] == -1.0 and swapped["assignee_accuracy"]["meetings"] == 6
    assert swapped["assignee_accuracy"]["significant"] and swapped["assignee_accuracy"]["better"] is False
    assert swapped["action_item_f1"]["value"] == 0.0 and not swapped["action_item_f1"]["significant"]
    assert all(deltas["none"][k]["value"] is None and deltas["none"][k]["meetings"] == 0 for k in NOTES_METRICS)
    text = (tmp_path / "comparison.md").read_text()
    section = text.split("## Meeting notes", 1)[1].split("Paired deltas against", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith("| assignee accuracy |"))
    assert "-1.000" in row and "* (worse)" in row
