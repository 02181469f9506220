"""Paired comparisons: the paired bootstrap, deltas read back from scores.json, `speechkit compare`."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from speechkit.cli import main
from speechkit.compare import CompareError, compare, load_run, meeting_ratios, paired_deltas
from speechkit.io.rttm import write_rttm
from speechkit.io.scores import Scores
from speechkit.io.seglst import write_seglst
from speechkit.io.stm import read_stm
from speechkit.metrics.bootstrap import PairRow, Ratio, bootstrap, micro, paired_bootstrap
from speechkit.scoring import score_workspace
from speechkit.transcript import Segment, Transcript


def test_paired_bootstrap_resamples_both_systems_on_the_same_draw():
    base = [Ratio(10, 100), Ratio(30, 100), Ratio(5, 50), Ratio(40, 120)]
    other = [Ratio(8, 100), Ratio(27, 100), Ratio(4, 50), Ratio(37, 120)]  # better on every meeting
    est = paired_bootstrap(base, other, resamples=1000, seed=0)
    assert est.value == pytest.approx(micro(other).value - micro(base).value)
    assert est.ci_low <= est.value <= est.ci_high < 0  # consistently better: the CI excludes 0
    single = [bootstrap(x, 1000, 0) for x in (base, other)]
    assert single[1].ci_high > single[0].ci_low  # while the separate CIs overlap
    rng = np.random.default_rng(0)  # the same draws, by hand
    idx = rng.integers(0, 4, size=(1000, 4))
    diffs = [sum(other[i].num for i in d) / sum(other[i].den for i in d)
             - sum(base[i].num for i in d) / sum(base[i].den for i in d) for d in idx]
    assert (est.ci_low, est.ci_high) == pytest.approx(tuple(np.percentile(diffs, [2.5, 97.5])))
    assert paired_bootstrap(base, base).as_dict() == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0}
    assert paired_bootstrap([Ratio(0, 0)], [Ratio(1, 2)]).value is None
    with pytest.raises(ValueError):
        paired_bootstrap(base, other[:3])


def _run(ws: Path, out: Path, drop_every: int, named: bool = True) -> Path:
    """A run folder whose hypotheses are the references with every ``drop_every``-th word left out;
    the speakers named as the reference names them, or (``named`` False, as at level 1) labels only;
    its speaker turns (the RTTM DER scores) are the reference's segments."""
    import yaml
    manifest = yaml.safe_load((ws / "workspace.yaml").read_text())
    for meeting in manifest["meetings"]:
        ref = read_stm(ws / meeting["reference"])[meeting["id"]]
        segments = []
        for k, seg in enumerate(ref.segments):
            words = [w for i, w in enumerate(seg.text.split()) if (i + k) % drop_every]
            segments.append(Segment(seg.start, seg.end, f"S{seg.speaker}", " ".join(words),
                                    speaker_name=seg.speaker if named else None))
        write_seglst(out / "transcripts" / f"{meeting['id']}.json", [Transcript(meeting["id"], segments)])
        write_rttm(out / "transcripts" / f"{meeting['id']}.rttm",
                   [Transcript(meeting["id"], segments, has_words=False)])
    score_workspace(ws, out, out=out / "scores.json")
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory, make_real_workspace):
    root = tmp_path_factory.mktemp("compare")
    ws = make_real_workspace(root / "ws")
    return ws, [_run(ws, root / name, n) for name, n in (("a", 4), ("b", 3), ("c", 4))]


def test_ratios_read_back_from_scores_add_up_to_the_totals(runs):
    _, (a, _, _) = runs
    scores = json.loads((a / "scores.json").read_text())
    ratios = meeting_ratios(Scores(scores))
    for metric in ("wer", "der", "jer", "cpwer", "named_speaker_accuracy", "speaker_consistency"):
        total = micro(list(ratios[metric].values()))
        assert (total.num, total.den) == pytest.approx((scores["totals"][metric]["numerator"],
                                                        scores["totals"][metric]["denominator"])), metric
        assert set(ratios[metric]) == {"m1", "m2"}
    broken = json.loads(json.dumps(scores))
    broken["meetings"]["m1"]["details"]["wer"]["errors"] += 1
    with pytest.raises(CompareError, match="wer: per-meeting details add up to"):
        meeting_ratios(Scores(broken))


def test_deltas_of_runs_of_one_workspace(runs):
    _, (a, b, c) = runs
    comparison = compare([load_run(a), load_run(b), load_run(c)])
    wer = comparison.deltas["b"]["wer"]
    sa, sb = (json.loads((x / "scores.json").read_text()) for x in (a, b))
    assert wer.estimate.value == pytest.approx(
        sb["aggregate"]["wer"]["value"] - sa["aggregate"]["wer"]["value"])
    assert wer.estimate.value > 0 and wer.better is False and wer.meetings == 2
    same = comparison.deltas["c"]["wer"]  # c drops the same words as a
    assert same.estimate.as_dict() == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0} and not same.significant
    assert paired_deltas(Scores(sa), Scores(sb))["wer"].estimate == wer.estimate


def test_compare_command_prints_and_writes_the_comparison(runs, tmp_path, capsys):
    _, (a, b, _) = runs
    assert main(["compare", str(a), str(b / "scores.json"), "--out", str(tmp_path / "cmp"),
                 "--per-meeting", "wer,term_recall"]) == 0
    text = capsys.readouterr().out
    assert "## Paired deltas against a" in text and "| WER | +" in text and "| m1 |" in text
    assert "## term recall per meeting" in text
    for name in ("comparison.md", "comparison.html", "comparison.json", "comparison.png"):
        assert (tmp_path / "cmp" / name).is_file()
    saved = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert saved["baseline"] == "a" and saved["bootstrap"]["paired"] is True
    assert saved["deltas"]["b"]["wer"]["value"] > 0


def test_runs_of_different_workspaces_are_refused(runs, tmp_path, make_real_workspace, capsys):
    _, (a, _, _) = runs
    other = _run(make_real_workspace(tmp_path / "other-ws"), tmp_path / "other", 3)
    assert main(["compare", str(a), str(other)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"speechkit compare: error: {other}: scores workspace") and "\n" not in err
    assert "a paired comparison needs runs of one workspace" in err
    assert main(["compare", str(a), str(tmp_path / "nowhere")]) == 1
    assert "no scores.json" in capsys.readouterr().err
    assert main(["compare", str(a)]) == 1
    assert "at least two runs" in capsys.readouterr().err
    fewer = json.loads((a / "scores.json").read_text())
    del fewer["meetings"]["m2"]
    (tmp_path / "fewer.json").write_text(json.dumps(fewer))
    with pytest.raises(CompareError, match="covers meetings m1"):
        compare([load_run(a), load_run(tmp_path / "fewer.json")])


def test_two_meetings_show_no_star_and_say_why(runs, tmp_path, capsys, caplog):
    """Two runs of the two-meeting workspace, labels only (as L1) and named (as L3): consistency goes
    from 0 to 1 in both meetings, a zero-width interval; no significance is claimed, and why is printed."""
    ws, (a, _, _) = runs
    labels = _run(ws, tmp_path / "labels", 4, named=False)
    assert main(["compare", str(labels), str(a), "--out", str(tmp_path / "cmp")]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| speaker consistency | +"))
    assert "[+1.000, +1.000]" in row and "*" not in row
    assert caplog.messages == ["n=2 meetings < 5: no significance claimed"]  # the CLI prints warnings to stderr
    saved = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    delta = saved["deltas"]["a"]["speaker_consistency"]
    assert delta["significant"] is False and delta["meetings"] == 2
    assert delta["significance_withheld"] == "n=2 meetings < 5: no significance claimed"
    assert saved["bootstrap"]["min_meetings"] == 5
    assert saved["significance_withheld"] == ["n=2 meetings < 5: no significance claimed"]
    # the same comparison with the minimum lowered to 2 stars it: the minimum is what withholds it
    caplog.clear()
    assert main(["compare", str(labels), str(a), "--min-meetings", "2"]) == 0
    assert "| speaker consistency | +1.000 [+1.000, +1.000] * (better)" in capsys.readouterr().out
    assert not caplog.messages
    with pytest.raises(SystemExit):
        main(["compare", str(labels), str(a), "--min-meetings", "-1"])
    assert "--min-meetings: expected a whole number from 0 to" in capsys.readouterr().err


def test_consistency_is_compared_as_meeting_pairs(runs):
    """The consistency ratios a comparison resamples are meeting-pair rows rebuilt from the names
    scores.json gives each person, checked against the pair counts."""
    _, (a, _, _) = runs
    scores = json.loads((a / "scores.json").read_text())
    rows = meeting_ratios(Scores(scores))["speaker_consistency"]
    assert all(isinstance(r, PairRow) for r in rows.values())
    assert set(rows["m1"].pairs) == {"m2"} and rows["m1"].pairs["m2"] == (rows["m1"].num, rows["m1"].den)
    person = next(iter(scores["meetings"]["m1"]["details"]["speakers"]["persons"].values()))
    person["name"] = "Somebody Else"
    with pytest.raises(CompareError, match="the persons' names give"):
        meeting_ratios(Scores(scores))


def test_the_ablation_splits_the_l1_to_l3_gain_between_the_streams(runs, tmp_path):
    """L1: more words dropped; L3: fewer dropped; without enrollments: L3's words; without text: L1's
    words. The gain is L3 minus L1, each stream's share L3 minus L3 without it, paired deltas."""
    from speechkit.compare import ablation
    from speechkit.report.comparison import comparison_markdown, write_comparison
    ws, _ = runs
    made = {name: load_run(_run(ws, tmp_path / folder, drop, named), name) for name, folder, drop, named in (
        ("L1", "l1", 3, False), ("L3", "l3", 9, True), ("L3 w/o enrollments", "no-enr", 9, True),
        ("L3 w/o text", "no-text", 3, True))}
    without = {"enrollments": made["L3 w/o enrollments"], "text": made["L3 w/o text"]}
    split = ablation(made["L1"], made["L3"], without, resamples=200)
    assert split.gain["wer"].as_dict() == paired_deltas(made["L1"].scores, made["L3"].scores, ("wer",),
                                                        resamples=200)["wer"].as_dict()
    against = [("gain", split.gain, made["L1"]), *((s, split.shares[s], r) for s, r in without.items())]
    for key in ("wer", "cpwer", "der"):
        for name, deltas, other in against:
            full = made["L3"].scores.value(key)
            assert deltas[key].estimate.value == pytest.approx(full - other.scores.value(key)), (name, key)
    assert split.shares["enrollments"]["wer"].estimate.value == 0 < -split.gain["wer"].estimate.value  # the same words
    assert split.shares["text"]["wer"].estimate.value == pytest.approx(split.gain["wer"].estimate.value)
    comparison = compare([made["L1"], made["L3"]], resamples=200)
    comparison.ablation = split
    md = comparison_markdown(comparison)
    assert ("| metric | L1 | L3 w/o enrollments | L3 w/o text | L3 | gain L3 - L1 | L3 - L3 w/o enrollments | "
            "L3 - L3 w/o text |") in md
    wer_row = next(line for line in md.splitlines() if line.startswith("| WER |") and "gain" not in line
                   and line.count("|") == 9)
    cells = [c.strip() for c in wer_row.strip("|").split("|")]
    assert cells[1:5] == [f"{made[n].scores.value('wer'):.3f}" for n in ("L1", "L3 w/o enrollments", "L3 w/o text",
                                                                         "L3")]
    assert cells[6].startswith("+0.000")
    kinds = md[md.index("## Word errors by kind of word"):]
    assert "| kind | L1 | L3 | L3 w/o enrollments | L3 w/o text |" in kinds
    data = comparison.as_dict()["ablation"]
    assert set(data["deltas"]) == {"gain", "enrollments", "text"}
    assert data["values"]["L3 w/o text"]["wer"] == made["L3 w/o text"].scores.value("wer")
    write_comparison(tmp_path / "out", comparison)
    written = (tmp_path / "out" / "comparison.md").read_text()
    assert written.index("![runs]") < written.index("## The L3 ablation") < written.index("## Word errors by kind")
    assert json.loads((tmp_path / "out" / "comparison.json").read_text())["ablation"]["full"] == "L3"
