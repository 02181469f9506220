"""Action-item description quality and the judged scores as metrics, against a local stand-in judge
(`llm_helpers.grading`, on 127.0.0.1): each matched item judged against its gold item with the
reference excerpt and without the assignee, the rubric's anchors in the prompt and in the docs, the
self-check failing a judge that scores a wrong item like a right one, a failing judge stopping with
one line and nothing written, the judged metrics in scores.json and the report with the judge model
in their labels, and the exact and judged scores side by side with paired deltas in the comparison
of a --level all folder (run folders built from the demo workspace, no ASR)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from llm_helpers import REPORTED, completion, grading, grading_judge, section

from speechkit.cli import main
from speechkit.compare import CompareError, compare, load_run
from speechkit.errors import FormatError
from speechkit.io.atomic import write_json
from speechkit.io.lock import LOCK_NAME
from speechkit.io.manifest import load_workspace
from speechkit.io.notes import read_gold_notes, write_notes
from speechkit.io.run_folder import LevelsFolder, RunFolder
from speechkit.io.run_view import RunView
from speechkit.metrics.bootstrap import Ratio, bootstrap
from speechkit.notes import ActionItem, Notes
from speechkit.report import write_report
from speechkit.report.comparison import remake_level_comparison, write_comparison
from speechkit.scoring import ScoreOptions, score_workspace
from speechkit.scoring.catalogue import catalogue
from speechkit.steps.judge.items import RUBRIC, WRONG_ITEM
from speechkit.steps.judge.metrics import DESCRIPTION, DESCRIPTION_ALL, NO_JUDGED

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "workspaces" / "demo"
WS = load_workspace(DEMO)
GOLD = {m.id: read_gold_notes(m.notes, m.id) for m in WS.scored_meetings}
LEXICAL = ScoreOptions(similarity="lexical")


def vague(description: str) -> str:
    """A gold description with its last word left out (its first words only)."""
    return description.rsplit(" ", 1)[0]


def make_run(folder: Path, level: int) -> None:
    """A finished-looking level run of the demo: its transcripts the references, its summaries the
    gold ones, its action items the gold ones at L3, each with its last word left out at L1, and at
    L2 the first item of each meeting whole, the rest cut; the assignees as the gold notes write them."""
    write_json(folder / "run.json", {"workspace": {"name": WS.name, "root": str(WS.root)}, "recipe": {"level": level}})
    for m in WS.scored_meetings:
        (folder / "transcripts").mkdir(parents=True, exist_ok=True)
        shutil.copy(m.reference, folder / "transcripts" / f"{m.id}.json")
        gold = GOLD[m.id]
        items = tuple(ActionItem(g.description if level == 3 or (level == 2 and k == 0) else vague(g.description),
                                 g.assignee, due=g.due) for k, g in enumerate(gold.action_items))
        write_notes(folder / "notes" / f"{m.id}.json", Notes(gold.summary, action_items=items), m.id)


@pytest.fixture
def endpoint():
    endpoint = grading_judge()
    yield endpoint
    endpoint.close()


def step_judge(run: Path, url: str, *settings: str) -> int:
    sets = [f"base_url={url}", "model=stand-in", "max_retries=0", "similarity=lexical", *settings]
    return main(["step", "judge", str(run), *(x for s in sets for x in ("--set", s))])


def item_requests(endpoint) -> list[str]:
    prompts = [r["messages"][-1]["content"] for r in endpoint.requests]
    return [p for p in prompts if "GOLD ACTION ITEM" in p]


def test_each_matched_item_is_judged_against_its_gold_item_with_the_excerpt_and_without_the_assignee(
        endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run, level=2)
    extra = ActionItem("water the office plants", "Adriana Quintero")  # matches no gold item: judged on the transcript
    m01 = GOLD["m01"]
    write_notes(run / "notes" / "m01.json", Notes(m01.summary, action_items=(
        ActionItem(m01.action_items[1].description, "Toby", due=m01.action_items[1].due),
        ActionItem(vague(m01.action_items[0].description), "Adriana Quintero"), extra)), "m01")
    assert step_judge(run, endpoint.url) == 0
    judged = json.loads((run / "judged.json").read_text())
    m = judged["meetings"]["m01"]
    # in the gold items' order: the first cut (3), the second whole (5); then the plants item, which
    # matched nothing and which the transcript does not hold (1)
    first, second = m01.action_items[0], m01.action_items[1]
    matched = [i for i in m["items"] if i["matched"]]
    assert [(i["gold"]["description"], i["predicted"]["description"], i["score"]) for i in matched] == [
        (first.description, vague(first.description), 3), (second.description, second.description, 5)]
    (unmatched,) = [i for i in m["items"] if not i["matched"]]
    assert unmatched["gold"] is None and unmatched["predicted"]["description"] == extra.description
    assert unmatched["score"] == 1 and m["items"][-1] == unmatched
    assert m[DESCRIPTION] == 4 and m[DESCRIPTION_ALL] == 3 and m["items_reason"] is None
    unmatched_prompts = [r["messages"][-1]["content"] for r in endpoint.requests
                         if "No action item the meeting agreed" in r["messages"][-1]["content"]]
    assert len(unmatched_prompts) == 1 and "GOLD ACTION ITEM" not in unmatched_prompts[0]
    assert section(unmatched_prompts[0], "SYSTEM ACTION ITEM") == extra.description
    prompts = [p for p in item_requests(endpoint) if second.description in section(p, "GOLD ACTION ITEM")]
    prompt = prompts[-1]  # the last: m01's item (the self-check's come first)
    assert section(prompt, "SYSTEM ACTION ITEM") == f"{second.description} (due: {second.due})"
    assert section(prompt, "GOLD ACTION ITEM") == f"{second.description} (due: {second.due})"
    excerpt = prompt.split("TRANSCRIPT EXCERPT", 1)[1].split("GOLD ACTION ITEM", 1)[0]
    assert second.description.split()[-1].lower() in excerpt.lower()
    assert len(excerpt.strip().splitlines()) == 1 + 5  # the heading, 2 + 1 + 2 segments
    items = prompt.split("GOLD ACTION ITEM", 1)[1].split("Score how", 1)[0]
    assert not any(name in items for p in WS.people for name in (p.name, *p.nicknames))  # no assignee shown
    assert "Do not judge who is to do it" in prompt
    request = next(r for r in endpoint.requests if r["messages"][-1]["content"] == prompt)
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["required"] == [DESCRIPTION] and schema["properties"][DESCRIPTION]["enum"] == [1, 2, 3, 4, 5]
    # over the meetings: the micro mean over the judged items, its CI over meetings
    for key, only_matched in ((DESCRIPTION, True), (DESCRIPTION_ALL, False)):
        per = {mid: [i["score"] for i in e["items"] if i["matched"] or not only_matched]
               for mid, e in judged["meetings"].items()}
        per = {mid: scores for mid, scores in per.items() if scores}
        expected = bootstrap([Ratio(sum(s), len(s)) for s in per.values()])
        a = judged["aggregate"][key]
        assert (a["mean"], a["ci_low"], a["ci_high"]) == (expected.value, expected.ci_low, expected.ci_high)
        assert a["items"] == sum(map(len, per.values())) and a["meetings"] == len(per)
        assert a["ci_low"] < a["mean"] < a["ci_high"]
    assert judged["aggregate"][DESCRIPTION_ALL]["items"] > judged["aggregate"][DESCRIPTION]["items"]
    assert judged["check"]["item_right"] == 5 and judged["check"]["item_wrong"] == 1 and judged["check"]["passed"]
    printed = capsys.readouterr().out
    assert "judge: wrote" in printed


def test_the_rubric_has_anchors_for_1_3_and_5_in_the_prompt_and_in_the_docs(endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run, level=3)
    assert step_judge(run, endpoint.url) == 0
    prompt = item_requests(endpoint)[0]
    docs = (REPO / "docs" / "llm.md").read_text().splitlines()
    assert [score for score, _ in RUBRIC] == [5, 3, 1]
    for score, text in RUBRIC:
        assert f"- {score}: {text}." in prompt
        assert f"| **{score}** | {text} |" in docs
    judged = json.loads((run / "judged.json").read_text())
    assert judged["item_settings"]["rubric"] == {str(score): text for score, text in RUBRIC}
    assert judged["aggregate"][DESCRIPTION]["mean"] == 5  # the gold items themselves


def test_a_judge_that_scores_a_wrong_item_like_a_right_one_fails_its_check(endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run, level=1)

    def lenient(request: dict, call: int):  # the summaries graded, every item 5
        if "GOLD ACTION ITEM" in request["messages"][-1]["content"]:
            return 200, completion(json.dumps({DESCRIPTION: 5})), 0.0
        return grading(request, call)
    endpoint.grade = lenient
    assert step_judge(run, endpoint.url) == 0
    check = json.loads((run / "judged.json").read_text())["check"]
    assert check["passed"] is False and check["reference"]["faithfulness"] == 5  # the summary controls pass
    assert check["item_right"] == check["item_wrong"] == 5
    assert check["reason"] == ("the judge gave a gold action item itself 5 and a wrong item 5 on description quality: "
                               "its scores say little")
    wrong = [p for p in item_requests(endpoint) if section(p, "SYSTEM ACTION ITEM") == WRONG_ITEM.description]
    assert len(wrong) == 1
    scores = score_workspace(WS, run, LEXICAL, out=run / "scores.json")
    assert scores["settings"]["judged"]["check_passed"] is False
    write_report(RunFolder(run))
    report = (run / "report.md").read_text()
    assert "**The judge failed its check** (the judge gave a gold action item itself 5" in report


def test_a_failing_judge_stops_with_one_line_and_writes_nothing_unless_failures_are_allowed(
        endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run, level=3)

    def failing(request: dict, call: int):  # every request of m03's items fails
        prompt = request["messages"][-1]["content"]
        if "GOLD ACTION ITEM" in prompt and section(prompt, "GOLD ACTION ITEM").startswith(
                tuple(g.description for g in GOLD["m03"].action_items)):
            return 500, json.dumps({"error": {"message": "overloaded"}}), 0.0
        return grading(request, call)
    endpoint.grade = failing
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert step_judge(run, endpoint.url) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("speechkit step: error: http://127.0.0.1:")
    assert "judge requests failed" in err and "overloaded" in err and "Traceback" not in err
    after = {p: p.read_bytes() for p in tmp_path.rglob("*")
             if p.is_file() and "cache" not in p.parts and p.name != LOCK_NAME}
    assert after == before  # nothing written but the response cache (the answers that came) and the lock
    assert step_judge(run, endpoint.url, "failures=allow") == 0
    m03 = json.loads((run / "judged.json").read_text())["meetings"]["m03"]
    assert m03[DESCRIPTION] is None and all(i["score"] is None for i in m03["items"])
    assert all(i["reason"].startswith("the judge request failed (http-500)") for i in m03["items"])
    scores = score_workspace(WS, run, LEXICAL, out=run / "scores.json")
    assert scores["meetings"]["m03"][DESCRIPTION]["value"] is None
    assert scores["meetings"]["m03"]["details"]["not_applicable"][DESCRIPTION].startswith("the judge request failed")
    assert scores["meetings"]["m01"][DESCRIPTION]["value"] == 5


def test_judged_metrics_sit_in_scores_json_and_the_report_beside_the_exact_ones(endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run, level=1)
    plain = score_workspace(WS, run, LEXICAL)
    assert plain["aggregate"][DESCRIPTION]["value"] is None and plain["not_applicable"][DESCRIPTION] == NO_JUDGED
    assert plain["settings"]["judged"]["judge_model"] is None
    assert step_judge(run, endpoint.url) == 0
    scores = score_workspace(WS, run, LEXICAL, out=run / "scores.json")
    cat = catalogue()
    keys = list(cat.metrics)
    assert keys[-len(cat.family("judged").keys):] == list(cat.family("judged").keys)  # after the others
    assert list(scores["aggregate"]) == keys
    judged = json.loads((run / "judged.json").read_text())
    assert scores["aggregate"][DESCRIPTION]["value"] == judged["aggregate"][DESCRIPTION]["mean"] == 3
    assert scores["totals"][DESCRIPTION]["meetings"] == judged["aggregate"][DESCRIPTION]["meetings"]
    for mid, entry in scores["meetings"].items():
        given = [i["score"] for i in judged["meetings"][mid]["items"]]
        if given:
            assert entry["details"]["judged_items"] == {"items": len(given), "score_sum": sum(given)}
            assert entry[DESCRIPTION]["value"] == sum(given) / len(given)
        else:
            assert entry["details"]["not_applicable"][DESCRIPTION] == judged["meetings"][mid]["items_reason"]
        assert entry["judged_faithfulness"]["value"] == 5 and entry["details"]["judged_summary"]["coherence"] == 4
    # the exact assignee accuracy counts the items the judge judged
    assert scores["totals"]["assignee_accuracy"]["denominator"] == scores["totals"][DESCRIPTION]["denominator"]
    assert scores["settings"]["judged"]["judge_model"] == REPORTED and scores["settings"]["judged"]["check_passed"]
    label = cat.metrics[DESCRIPTION].label_in(scores["settings"])
    assert label == f"judged desc. quality [judge {REPORTED}]"
    write_report(RunFolder(run))
    report = (run / "report.md").read_text()
    higher = report.split("### Higher is better", 1)[1].split("\n\n", 2)[1]
    assert f"| {label} | 3.00 [3.00, 3.00] |" in higher and "| assignee accuracy |" in higher
    assert f"| description_quality | 3.00 | [3.00, 3.00] | 6 of 6 ({judged['aggregate'][DESCRIPTION]['items']} items)" \
           in report
    view = RunView.of(RunFolder(run))
    assert view.scores.value(DESCRIPTION) == 3


def test_a_level_all_folder_compares_exact_and_judged_side_by_side_with_paired_deltas(endpoint, tmp_path, capsys):
    out = LevelsFolder(tmp_path / "all")
    for level in (1, 2, 3):
        make_run(out.level(level).root, level)
    for level in (1, 2, 3):  # before the judge: no judged scores, and the comparison says why
        score_workspace(WS, out.level(level).root, LEXICAL, out=out.level(level).scores)
    write_comparison(out.root, compare([load_run(out.level(n).root, f"L{n}") for n in (1, 2, 3)]))
    assert f"No run has judged scores: {NO_JUDGED}." in out.comparison(".md").read_text()
    for level in (1, 2, 3):
        out.level(level).scores.unlink()
    assert step_judge(out.root, endpoint.url) == 0
    for level in (1, 2, 3):
        score_workspace(WS, out.level(level).root, LEXICAL, out=out.level(level).scores)
    runs = [load_run(out.level(n).root, f"L{n}") for n in (1, 2, 3)]
    comparison = compare(runs)
    write_comparison(out.root, comparison)
    text = out.comparison(".md").read_text()
    table = text.split("## Exact and judged, side by side", 1)[1]
    assert f"Judge: `{REPORTED}` in every run judged." in table
    rows = {row.split(" | ")[1]: row for row in table.splitlines() if row.startswith("| exact") or
            row.startswith("| judged")}
    label = f"judged desc. quality [judge {REPORTED}]"
    assert list(rows)[:2] == ["assignee accuracy", "assignee acc. partial"] and label in rows
    assert rows[label].startswith(f"| judged | {label} | 3.00 ")
    scores = {n: json.loads(out.level(n).scores.read_text()) for n in (1, 2, 3)}
    d3 = comparison.deltas["L3"][DESCRIPTION]
    assert d3.estimate.value == pytest.approx(2.0) and d3.meetings == 6 and d3.significant and d3.better
    assert scores[3]["aggregate"][DESCRIPTION]["value"] == 5
    assert "+2.00 [+2.00, +2.00] * (better)" in rows[label]
    d2 = comparison.deltas["L2"][DESCRIPTION]
    assert 0 < d2.estimate.value < 2 and d2.estimate.ci_low <= d2.estimate.value <= d2.estimate.ci_high
    assert rows["assignee accuracy"].startswith("| exact | assignee accuracy | 1.000 ")
    saved = json.loads(out.comparison(".json").read_text())
    assert saved["deltas"]["L3"][DESCRIPTION]["value"] == pytest.approx(2.0)
    assert saved["deltas"]["L3"]["judged_faithfulness"]["value"] == 0
    # a step run later on the levels makes the comparison again, with the settings it was made with
    made = out.comparison(".md").read_bytes()
    out.comparison(".md").unlink()
    assert remake_level_comparison(out.root) == out.comparison(".md")
    assert out.comparison(".md").read_bytes() == made
    assert remake_level_comparison(out.level(1).root) is None  # a level folder has no comparison
    saved["bootstrap"]["seed"] = "x"  # a comparison.json edited by hand
    out.comparison(".json").write_text(json.dumps(saved))
    with pytest.raises(CompareError, match=r"comparison.json: bootstrap.seed: expected an integer from 0 to \d+, "
                                           r"got 'x'"):
        remake_level_comparison(out.root)


def test_a_judged_json_with_a_score_out_of_range_is_a_one_line_error_when_scored(endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run, level=3)
    assert step_judge(run, endpoint.url) == 0
    judged = json.loads((run / "judged.json").read_text())
    judged["meetings"]["m02"]["items"][0]["score"] = 9  # edited by hand
    (run / "judged.json").write_text(json.dumps(judged))
    with pytest.raises(FormatError) as raised:
        score_workspace(WS, run, LEXICAL, out=tmp_path / "s.json")
    assert str(raised.value) == (f"{run / 'judged.json'}: meetings.m02.items: expected the judged items, each score "
                                 "null or an integer 1-5")
    assert not (tmp_path / "s.json").exists()
