"""The report shows where the errors are (levels defined, n/a with reasons, S/D/I, DER components beside
the one-label baselines, per-speaker rows, correction edits) and renders in a real browser: headless
Chromium screenshots report.html with its plots."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from report_helpers import report_of

from speechkit.compare import Run, compare
from speechkit.io import read_transcripts
from speechkit.io.rttm import write_rttm
from speechkit.io.run_folder import RunFolder
from speechkit.io.scores import Scores
from speechkit.io.stm import read_stm, write_stm
from speechkit.metrics.diarization import BASELINES
from speechkit.metrics.word_kinds import KINDS
from speechkit.recipe import load_recipe
from speechkit.report import write_report
from speechkit.report.comparison import write_comparison
from speechkit.report.sections import LEVELS
from speechkit.scoring import score_files
from speechkit.scoring.catalogue import catalogue
from speechkit.stages.correct.report import GATES, MAX_EDITS
from speechkit.transcript import Segment, Transcript

METRICS = catalogue().metrics

CHROMIUM = shutil.which("chromium")
# Matplotlib's first two default bar colours (C0 blue, C1 orange), as RGB.
BAR_COLOURS = ((31, 119, 180), (255, 127, 14))


@pytest.fixture(scope="module")
def scores(realdata, tmp_path_factory):
    """Real scores: the sample reference against a copy with the second half's words dropped."""
    ref = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    hyp = type(ref)("sample", [s if i % 2 else type(s)(s.start, s.end, s.speaker, " ".join(s.text.split()[:2]))
                               for i, s in enumerate(ref.segments)])
    folder = tmp_path_factory.mktemp("hyp")
    write_stm(folder / "hyp.stm", [hyp])
    return score_files(realdata / "pyannote-sample" / "sample.stm", folder / "hyp.stm")


def _screenshot(html, png):
    # 2600 px tall: the plots come after the aggregate tables, which list every metric of the catalogue
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={png.parent / 'chromium-profile'}", "--window-size=1200,2600",
                    f"--screenshot={png}", html.as_uri()], check=True, capture_output=True, timeout=120)
    import matplotlib.image
    return (matplotlib.image.imread(png)[..., :3] * 255).round().astype(int)


def _pixels_of(image, colour) -> int:
    return int(np.all(np.abs(image - np.array(colour)) <= 3, axis=-1).sum())


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is installed by `make setup`")
def test_report_html_renders_its_plots_in_chromium(scores, tmp_path):
    ws = SimpleNamespace(name="sample", meetings=[1])
    report_of(tmp_path, load_recipe("l1"), ws.name, scores)
    assert "| WER |" in (tmp_path / "report.md").read_text()
    image = _screenshot(tmp_path / "report.html", tmp_path / "shot.png")
    # the bars of the embedded plots are drawn on screen: their colour covers a visible area
    assert _pixels_of(image, BAR_COLOURS[0]) > 500
    assert (image.reshape(-1, 3) != 255).any(axis=1).mean() > 0.05  # not a blank page


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is installed by `make setup`")
def test_comparison_renders_one_bar_series_per_level(scores, tmp_path):
    write_comparison(tmp_path, compare([Run(level, tmp_path / level.lower(), Scores(scores))
                                        for level in ("L1", "L3")]))
    assert "| WER |" in (tmp_path / "comparison.md").read_text()
    image = _screenshot(tmp_path / "comparison.html", tmp_path / "shot.png")
    assert _pixels_of(image, BAR_COLOURS[0]) > 300 and _pixels_of(image, BAR_COLOURS[1]) > 300


def _rows(markdown: str, heading: str) -> list[list[str]]:
    """The cells of the rows of the first table after ``heading`` (header row first)."""
    after = markdown.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(after) if line.startswith("|"))
    rows = []
    for line in after[start:]:
        if not line.startswith("|"):
            break
        if not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def _section(markdown: str, heading: str) -> str:
    return markdown.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def test_report_defines_the_levels_and_gives_every_na_its_reason(scores, tmp_path):
    report_of(tmp_path, load_recipe("l1"), "sample", scores)
    report = (tmp_path / "report.md").read_text()
    assert f"context level L1: {LEVELS[1]}" in report
    for level, sentence in LEVELS.items():
        assert f"- **L{level}**: {sentence}\n" in report
    rows = _rows(report, "### Lower is better")[1:] + _rows(report, "### Higher is better")[1:]
    values = {row[0]: row[1] for row in rows}
    missing = [k for k in METRICS if scores["aggregate"][k]["value"] is None]
    assert {"term_recall", "der"} <= set(missing)  # no term set; an STM hypothesis has no speaker turns
    for key in missing:
        assert values[METRICS[key].label] == f"n/a: {scores['not_applicable'][key]}", key
    assert "n/a" not in {cell for row in rows for cell in row}  # never a bare n/a
    # no term list: the terms are not scored, and the report does not say none were missed
    terms = _section(report, "## Missed terms")
    assert terms.strip() == f"Not scored: {scores['not_applicable']['term_recall']}."
    assert _section(report, "## Diarization errors: missed speech, false alarm, confusion").strip() == \
        f"Not applicable: {scores['not_applicable']['der']}."
    for line in (line for line in report.splitlines() if line.startswith("- n/a ")):  # per-meeting n/a lines
        assert line.endswith(".") and ": " in line
    assert "- n/a DER, JER (sample): " + scores["meetings"]["sample"]["details"]["not_applicable"]["der"] in report


def test_readme_defines_the_levels_as_the_report_does():
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    for level, sentence in LEVELS.items():
        assert f"- **L{level}**: {sentence}" in readme


def test_report_splits_wer_and_shows_each_speaker(scores, tmp_path):
    report_of(tmp_path, load_recipe("l1"), "sample", scores)
    report = (tmp_path / "report.md").read_text()
    header, sample, total = _rows(report, "## Word errors")
    assert header == ["meeting", "reference words", "WER", "substitutions", "deletions", "insertions"]
    wer = scores["meetings"]["sample"]["details"]["wer"]
    assert sample[1] == str(wer["reference_words"]) and total[0] == "all"
    shares = [float(cell.split()[0]) for cell in sample[3:]]
    counts = [int(cell.split()[1].strip("()")) for cell in sample[3:]]
    assert counts == [wer["substitutions"], wer["deletions"], wer["insertions"]] and wer["deletions"] > 0
    assert sum(shares) == pytest.approx(scores["meetings"]["sample"]["wer"]["value"], abs=0.002)
    speakers = {row[1]: row for row in _rows(report, "## Per speaker")[1:]}
    split = scores["meetings"]["sample"]["details"]["per_speaker"]["persons"]
    assert set(speakers) == set(split) == {"Diane", "Sheila"}
    for person, row in speakers.items():
        assert row[0] == "sample" and row[4] == str(split[person]["words"])
        assert row[5] == f"{split[person]['wer']:.3f}" and row[6] == f"{split[person]['speech_s']:.1f}"
    assert (tmp_path / "wer.png").stat().st_size > 0  # WER has values: its chart is drawn


def test_der_is_shown_beside_the_one_label_baselines_and_no_empty_chart(realdata, tmp_path):
    ref = read_transcripts(realdata / "ami-debug" / "train.rttm")
    sessions = dict(list(ref.items())[:3])
    hyp = [Transcript(sid, [Segment(s.start, s.end, f"S{i % 2}") for i, s in enumerate(t.segments)])
           for sid, t in sessions.items()]
    write_rttm(tmp_path / "ref.rttm", list(sessions.values()))
    write_rttm(tmp_path / "hyp.rttm", hyp)
    scores = score_files(tmp_path / "ref.rttm", tmp_path / "hyp.rttm")
    (tmp_path / "wer.png").write_bytes(b"an earlier report's plot")
    report_of(tmp_path, load_recipe("l1"), "ami", scores)
    report = (tmp_path / "report.md").read_text()
    der = next(row for row in _rows(report, "### Lower is better") if row[0] == "DER")
    for key, label in BASELINES.items():
        assert f"{label} {METRICS['der'].format_estimate(scores['baselines'][key]['der'])}" in der[3]
    table = _rows(report, "### DER and JER against doing nothing")
    assert [row[0] for row in table[1:]] == [*sessions, "all"]
    for row in table[1:-1]:
        base = scores["meetings"][row[0]]["details"]["diarization"]["baselines"]
        reference = base["one_label_reference_speech"]
        value = ((reference["missed_detection_s"] + reference["false_alarm_s"] + reference["confusion_s"])
                 / reference["total_s"])
        assert row[1] == METRICS["der"].format(scores["meetings"][row[0]]["der"]["value"])
        assert row[2] == METRICS["der"].format(value) and row[5] == METRICS["jer"].format(reference["jer"])
    components = _rows(report, "## Diarization errors")
    for row in components[1:-1]:
        d = scores["meetings"][row[0]]["details"]["diarization"]
        shares = [float(cell.split()[0]) for cell in row[3:]]
        assert sum(shares) == pytest.approx(scores["meetings"][row[0]]["der"]["value"], abs=0.002)
        assert row[1] == f"{d['total_s']:.1f}"
    # WER is n/a for turns without words: no WER chart, and the old one is gone
    assert not (tmp_path / "wer.png").exists() and "wer.png" not in report
    assert _section(report, "## Word errors: substitutions, deletions, insertions").strip() == \
        f"Not applicable: {scores['not_applicable']['wer']}."


def _edits(n: int) -> list[dict]:
    return [{"segment": i, "start": 0, "end": 2, "old": f"pacs dot {i}", "new": f"pacs.{i:03d}",
             "gate": "spoken-form" if i % 2 else "confidence", "score": None if i % 2 else 0.9} for i in range(n)]


def test_rewritten_report_lists_the_correction_edits_with_their_reasons(scores, tmp_path):
    stats = {"backend": "lexicon", "turns": 30, "edits": 12, "turns_changed": 12,
             "rejected_candidates": {"weak-match": 3}, "rejected_turns": {}, "rejected_batches": {},
             "failures": {"timeout": 1}, "details": {"edits": _edits(12)}}
    run = {"recipe": {"name": "whisper-l3", "level": 3, "stages": {"asr": {}, "correct": {"backend": "lexicon"}}},
           "workspace": {"name": "sample"}, "stages": {"correct": {"sample": stats}},
           "asr": {"meetings": {"sample": {"windows": 4, "flagged_windows": 1, "flagged": {"repeat": 1}}}}}
    (tmp_path / "run.json").write_text(json.dumps(run))
    (tmp_path / "scores.json").write_text(json.dumps(scores))
    write_report(RunFolder(tmp_path))
    report = (tmp_path / "report.md").read_text()
    assert f"context level L3: {LEVELS[3]}" in report and "## ASR loop and hallucination control" in report
    summary, edits = _rows(report, "## Corrections"), _rows(report, "| meeting | turn |")  # edits: no header
    assert summary[1] == ["sample", "lexicon", "12", "12 of 30", "weak-match 3, timeout 1"]
    assert len(edits) == MAX_EDITS + 1  # the first edits, one line for the rest
    for row, edit in zip(edits, _edits(MAX_EDITS)):
        assert row[2:5] == [f"`{edit['old']}`", f"`{edit['new']}`", edit["gate"]]
        assert row[5] == ("" if edit["score"] is None else "0.90")
    assert edits[-1][2] == f"{12 - MAX_EDITS} more"
    for gate in ("spoken-form", "confidence"):
        assert f"{gate}: {GATES[gate]}" in report

    run["recipe"]["stages"] = {"asr": {}}
    run["stages"] = {}
    (tmp_path / "run.json").write_text(json.dumps(run))
    write_report(RunFolder(tmp_path))
    assert (_section((tmp_path / "report.md").read_text(), "## Corrections").strip()
            == "The recipe has no correct stage.")


def test_report_sorts_the_word_errors_by_kind_and_names_the_ablation(scores, tmp_path):
    recipe = load_recipe("l3").with_settings({"context.ablate": "text"})
    report = report_of(tmp_path, recipe, "sample", scores)
    ablated = " Ablation (`context.ablate: text`): the workspace text left out"
    assert f"context level L3: {LEVELS[3]}{ablated}" in report
    table = _rows(report, "## Word errors by kind of word")
    assert table[0] == ["kind", "reference words", "substitutions", "deletions", "insertions", "errors",
                        "share of errors"]
    assert [row[0] for row in table[1:]] == [*KINDS.values(), "all"]
    wer, kinds = scores["components"]["wer"], scores["components"]["word_error_kinds"]["kinds"]
    assert table[-1][1:5] == [str(wer[k]) for k in ("reference_words", "substitutions", "deletions", "insertions")]
    assert table[-1][5] == str(scores["totals"]["wer"]["numerator"]) and table[-1][6].startswith("1.000")
    for row, kind in zip(table[1:], KINDS):
        assert row[5] == str(kinds[kind]["errors"])
    assert kinds["content_word"]["deletions"] > 0 and kinds["function_word"]["deletions"] > 0
    plain = report_of(tmp_path / "plain", load_recipe("l3"), "sample", scores)
    assert "Ablation" not in plain
    old = json.loads(json.dumps(scores))
    del old["components"]["word_error_kinds"]  # scored before the kinds were counted: no section
    assert "## Word errors by kind" not in report_of(tmp_path / "old", load_recipe("l1"), "sample", old)
