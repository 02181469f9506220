"""The metric catalogue is the one list of metrics: scores.json, the `speechkit score` table, report.md
and comparisons show exactly its metrics, in its orders, with its labels and number formats, and
comparisons read every metric's per-meeting ratio back through it."""
from __future__ import annotations

import json
from itertools import takewhile
from pathlib import Path

import pytest
import yaml
from report_helpers import report_of

from speechkit.cli import main
from speechkit.cli.run import print_summary
from speechkit.compare import compare, load_run
from speechkit.io.seglst import write_seglst
from speechkit.io.stm import read_stm
from speechkit.metrics.bootstrap import micro
from speechkit.recipe import load_recipe
from speechkit.report.comparison import write_comparison
from speechkit.scoring import ScoreOptions, score_workspace
from speechkit.scoring.catalogue import catalogue
from speechkit.transcript import Segment, Transcript

GROUPS = catalogue().groups
METRICS = catalogue().metrics
TABLE_ORDER = catalogue().table_order
TRANSCRIPT_KEYS = catalogue().transcript_keys
by_direction = catalogue().by_direction
family = catalogue().family

LABELS = [METRICS[k].label for k in TABLE_ORDER]
TRANSCRIPT_LABELS = [METRICS[k].label for k in TRANSCRIPT_KEYS]  # per-meeting and comparison tables


def _run(ws: Path, out: Path, drop_every: int) -> Path:
    """A run folder of the real workspace: the references with every ``drop_every``-th word left
    out, the speakers named."""
    for meeting in yaml.safe_load((ws / "workspace.yaml").read_text())["meetings"]:
        ref = read_stm(ws / meeting["reference"])[meeting["id"]]
        segments = [Segment(s.start, s.end, f"S{s.speaker}", " ".join(w for i, w in enumerate(s.text.split())
                                                                     if (i + k) % drop_every), speaker_name=s.speaker)
                    for k, s in enumerate(ref.segments)]
        write_seglst(out / f"{meeting['id']}.json", [Transcript(meeting["id"], segments)])
    score_workspace(ws, out, ScoreOptions(der_from_segments=True), out=out / "scores.json")
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory, make_real_workspace):
    root = tmp_path_factory.mktemp("catalog")
    ws = make_real_workspace(root / "ws")
    return ws, _run(ws, root / "a", 4), _run(ws, root / "b", 3)


def _table(markdown: str, heading: str) -> list[list[str]]:
    """The rows (cells) of the first table after ``heading`` in ``markdown``, header row first."""
    after = markdown.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(after) if line.startswith("|"))
    rows = takewhile(lambda line: line.startswith("|"), after[start:])
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows if not row.startswith("|---")]


def test_table_order_groups_the_metrics_and_keeps_each_once():
    assert sorted(TABLE_ORDER) == sorted(METRICS)
    groups = [METRICS[k].group for k in TABLE_ORDER]
    assert groups == sorted(groups, key=GROUPS.index)  # by group, each group together
    assert TABLE_ORDER[:3] == ("wer", "cpwer", "tcpwer")


def test_scores_json_holds_the_catalogue_in_its_order(runs):
    _, a, _ = runs
    scores = json.loads((a / "scores.json").read_text())
    assert list(scores["aggregate"]) == list(scores["totals"]) == list(METRICS)
    for entry in scores["meetings"].values():
        assert [k for k in entry if k != "details"] == list(METRICS)


def test_every_metric_is_read_back_from_its_details(runs):
    _, a, _ = runs
    scores = json.loads((a / "scores.json").read_text())
    for key, metric in METRICS.items():
        read = (metric.from_details(e["details"]) for e in scores["meetings"].values())
        ratios = [r for r in read if r is not None]
        total = scores["totals"][key]
        # the runs have no notes, the workspace no questions, nothing was judged
        none = family("notes").keys + family("questions").keys + family("judged").keys
        assert len(ratios) == total["meetings"] == (0 if key in none else 2), key
        assert (micro(ratios).num, micro(ratios).den) == pytest.approx((total["numerator"], total["denominator"])), key


def test_report_score_table_and_comparison_show_the_catalogue(runs, tmp_path, capsys):
    ws, a, b = runs
    scores = json.loads((a / "scores.json").read_text())
    report_of(tmp_path, load_recipe("l1"), "real", scores)
    report = (tmp_path / "report.md").read_text()
    lower, higher = _table(report, "### Lower is better"), _table(report, "### Higher is better")
    shown = [row[0] for row in lower[1:] + higher[1:]]
    assert shown == [METRICS[k].label for keys in by_direction(TABLE_ORDER).values() for k in keys]
    assert sorted(shown) == sorted(LABELS)  # tcpWER included
    assert {METRICS[k].better for k in TABLE_ORDER if METRICS[k].label in [row[0] for row in lower[1:]]} == {"lower"}
    assert lower[1][1] == METRICS["wer"].format_estimate(scores["aggregate"]["wer"])
    per_meeting = _table(report, "## Per meeting")
    assert per_meeting[0] == ["meeting", *TRANSCRIPT_LABELS]
    assert per_meeting[1] == ["m1", *(METRICS[k].format(scores["meetings"]["m1"][k]["value"]) for k in TRANSCRIPT_KEYS)]

    print_summary(scores)
    assert [line[:24].strip() for line in capsys.readouterr().out.splitlines()] == LABELS

    assert main(["score", "--workspace", str(ws), "--run", str(a), "--out", str(tmp_path / "s.json")]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert header == ["meeting", "WER", "cpWER", "tcpWER", "NumRecall", "TermRecall", "SpkConsist", "NamedAcc",
                      "DER", "JER"]

    comparison = compare([load_run(a), load_run(b)])
    write_comparison(tmp_path, comparison)
    text = (tmp_path / "comparison.md").read_text()
    assert [row[0] for row in _table(text, "## Aggregate")[1:]] == TRANSCRIPT_LABELS
    deltas = _table(text, "## Paired deltas")
    assert [row[0] for row in deltas[1:]] == TRANSCRIPT_LABELS
    assert "Lower is better for WER, cpWER, tcpWER, DER and JER; higher for the others." in text
    wer = comparison.deltas["b"]["wer"]
    assert wer.better is False and deltas[1][1].startswith(METRICS["wer"].format(wer.estimate.value, signed=True))
    assert set(json.loads((tmp_path / "comparison.json").read_text())["deltas"]["b"]) == set(TABLE_ORDER)


def test_values_are_formatted_by_the_catalogue():
    wer = METRICS["wer"]
    assert (wer.format(None), wer.format(0.12345), wer.format(0.0004, signed=True)) == ("n/a", "0.123", "+0.000")
    assert wer.format(-0.25, signed=True) == "-0.250"
    assert wer.format_estimate({"value": 0.1, "ci_low": 0.05, "ci_high": 0.2}) == "0.100 [0.050, 0.200]"
    assert wer.format_estimate({"value": 0.1, "ci_low": None, "ci_high": None}) == "0.100"
    assert wer.format_estimate({"value": None}) == wer.format_estimate(None) == "n/a"
