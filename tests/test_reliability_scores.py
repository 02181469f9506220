"""Hostile and careless input, round two: scores that were silently wrong, and manifests and options that
exhausted memory or CPU (issue 15, items 5-11)."""
from __future__ import annotations

import json
import logging
import shutil
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import yaml
from reliability_helpers import REFERENCES, error_line, make_workspace, manifest, seg, write_manifest_text

from speechkit.cli import main
from speechkit.errors import FormatError, ManifestError, SpeechkitError
from speechkit.io import read_rttm, read_seglst, read_stm, write_rttm, write_seglst, write_stm
from speechkit.io.manifest import load_workspace
from speechkit.metrics.bootstrap import MAX_RESAMPLES, Ratio, bootstrap
from speechkit.scoring import ScoreOptions, score_files, score_workspace
from speechkit.scoring.catalogue import catalogue
from speechkit.transcript import Transcript

TRANSCRIPT_KEYS = catalogue().transcript_keys

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "workspaces" / "demo"
PERFECT = {"wer": 0.0, "number_recall": 1.0, "term_recall": 1.0, "speaker_consistency": 1.0,
           "named_speaker_accuracy": 1.0, "der": 0.0, "jer": 0.0, "cpwer": 0.0, "tcpwer": 0.0}
assert set(PERFECT) == set(TRANSCRIPT_KEYS)  # the notes metrics: tests/test_notes_scores.py


# 5. A perfect hypothesis scores exactly 1 (and 0 error) on every metric.

def _perfect_run(ws_dir: Path, run: Path) -> dict:
    ws = load_workspace(ws_dir)
    run.mkdir(parents=True, exist_ok=True)
    for m in ws.scored_meetings:
        shutil.copy(m.reference, run / f"{m.id}.json")
    return score_workspace(ws, run, ScoreOptions(resamples=200, der_from_segments=True))  # the reference's turns


def _assert_perfect(scores: dict, allow_not_applicable: bool) -> None:
    for mid, entry in scores["meetings"].items():
        for metric, perfect in PERFECT.items():
            value = entry[metric]["value"]
            if value is None and allow_not_applicable:
                assert metric in entry["details"]["not_applicable"], (mid, metric)
                continue
            assert value == perfect, (mid, metric, value)
    for metric, perfect in PERFECT.items():
        agg = scores["aggregate"][metric]
        if agg["value"] is None and allow_not_applicable:
            continue
        assert agg["value"] == perfect, (metric, agg)
        if scores["settings"]["bootstrap"]["resamples"]:
            assert agg["ci_low"] == agg["ci_high"] == perfect, (metric, agg)


def test_a_perfect_hypothesis_scores_perfectly_on_the_whole_demo(tmp_path):
    scores = _perfect_run(DEMO, tmp_path / "run")
    assert len(scores["meetings"]) >= 5
    _assert_perfect(scores, allow_not_applicable=False)
    # the demo has overlapping backchannels: the ties that used to go to the long turn are there
    ws = load_workspace(DEMO)
    assert sum(s["backchannels"] for s in ws.metadata["meetings"].values()) > 0


def test_a_perfect_hypothesis_scores_perfectly_on_the_synthesised_test_workspace(small_synth_workspace, tmp_path):
    _assert_perfect(_perfect_run(small_synth_workspace, tmp_path / "run"), allow_not_applicable=True)


def test_a_perfect_hypothesis_scores_perfectly_on_the_tiny_workspace(tmp_path):
    ws, _ = make_workspace(tmp_path)
    _assert_perfect(_perfect_run(ws, tmp_path / "run"), allow_not_applicable=False)


def test_a_word_inside_an_overlapping_backchannel_goes_to_the_backchannel():
    from speechkit.metrics.speakers import route_words
    from speechkit.transcript import Segment, Word

    long = Segment.from_words([Word("so", 0.0, 0.4), Word("the", 0.5, 0.8), Word("plan", 0.9, 1.6),
                               Word("is", 1.7, 2.0)], speaker="A")
    yeah = Segment.from_words([Word("yeah", 1.0, 1.3)], speaker="B")
    # A's "plan" lies wholly inside B's backchannel too (a three-way tie on time alone)
    plan_inside = Segment.from_words([Word("mhm", 0.85, 1.65)], speaker="C")
    ref = Transcript("m", [long, yeah])
    routed = route_words(ref, ref)
    assert [(pid, s.speaker) for pid, s in routed] == [("A", "A")] * 4 + [("B", "B")]
    ref2 = Transcript("m", [long, plan_inside])
    assert all(pid == s.speaker for pid, s in route_words(ref2, ref2))


# 6. Hypotheses whose session id differs from the meeting's (what `transcribe` writes).

def _relabel(path: Path, session: str) -> None:
    data = json.loads(path.read_text())
    for obj in data:
        obj["session_id"] = session
    path.write_text(json.dumps(data))


def test_workspace_mode_matches_a_hypothesis_by_its_file_not_its_session_id(tmp_path, capsys):
    ws, run = make_workspace(tmp_path)
    _relabel(run / "m1.json", "audio")
    assert main(["score", "--workspace", str(ws), "--run", str(run), "--resamples", "0", "--der-from-segments"]) == 0
    scores = json.loads((run / "scores.json").read_text())
    _assert_perfect(scores, allow_not_applicable=False)
    assert "notes" not in scores["meetings"]["m1"]["details"]


def test_single_pair_mode_pairs_one_session_files_whatever_their_ids(tmp_path):
    ws, run = make_workspace(tmp_path)
    _relabel(run / "m1.json", "audio")
    scores = score_files(ws / "m1.ref.json", run / "m1.json", options=ScoreOptions(resamples=0, der_from_segments=True))
    assert list(scores["meetings"]) == ["m1"]
    for metric in ("wer", "cpwer", "tcpwer", "der", "jer"):
        assert scores["aggregate"][metric]["value"] == 0.0
    scores = score_files(ws / "m1.ref.json", run / "m1.json", session="m1", options=ScoreOptions(resamples=0))
    assert scores["aggregate"]["cpwer"]["value"] == 0.0


def test_segments_of_other_sessions_are_reported_not_dropped_silently(tmp_path, caplog):
    ws, run = make_workspace(tmp_path)
    write_seglst(run / "m1.json", [Transcript("m1", REFERENCES["m1"]), Transcript("stray", [seg("x", 9, "noise")])])
    with caplog.at_level(logging.WARNING):
        scores = score_workspace(ws, run, ScoreOptions(resamples=0))
    [note] = scores["meetings"]["m1"]["details"]["notes"]
    assert "left out 1 segment(s)" in note and "stray" in note and "m1.json" in note
    assert any("stray" in r.getMessage() for r in caplog.records)
    assert scores["meetings"]["m1"]["wer"]["value"] == 0.0


def test_a_file_with_several_sessions_none_of_them_the_meetings_is_an_error(tmp_path, capsys):
    ws, run = make_workspace(tmp_path)
    write_seglst(run / "m1.json", [Transcript("a", REFERENCES["m1"]), Transcript("b", REFERENCES["m2"])])
    assert main(["score", "--workspace", str(ws), "--run", str(run)]) == 1
    line = error_line(capsys)
    assert "m1.json" in line and "no session 'm1'" in line and "a, b" in line
    write_seglst(tmp_path / "two.json", [Transcript("a", REFERENCES["m1"]), Transcript("b", REFERENCES["m2"])])
    assert main(["score", "--ref", str(ws / "m1.ref.json"), "--hyp", str(tmp_path / "two.json")]) == 1
    line = error_line(capsys)
    assert "hypothesis sessions: a, b" in line or "sessions not in the reference" in line


# 7. Spaces in audio file names: a valid session id is written, and unreadable ids are refused.

def test_transcribe_maps_spaces_in_the_audio_name_to_a_valid_session_id(tmp_path, monkeypatch, capsys):
    from speechkit.cascade import Cascade, CascadeResult
    from speechkit.core.record import TRANSCRIPT

    seen = {}

    def fake_run(self, audio, context=None, cache=None, session_id=None, **kwargs):
        seen["session_id"] = session_id
        return CascadeResult(self.record(audio, session_id=session_id),
                             {TRANSCRIPT: Transcript(session_id, REFERENCES["m1"])})
    monkeypatch.setattr(Cascade, "run", fake_run)
    audio = tmp_path / "my  team\tmeeting.wav"
    audio.write_bytes(b"RIFF")  # never decoded: the cascade is replaced
    out = tmp_path / "out"
    assert main(["transcribe", str(audio), "--out", str(out)]) == 0
    assert seen["session_id"] == "my_team_meeting"
    assert sorted(p.name for p in out.iterdir()) == ["my_team_meeting.json", "my_team_meeting.rttm",
                                                     "my_team_meeting.stm"]
    assert list(read_stm(out / "my_team_meeting.stm")) == ["my_team_meeting"]
    assert list(read_rttm(out / "my_team_meeting.rttm")) == ["my_team_meeting"]
    assert list(read_seglst(out / "my_team_meeting.json")) == ["my_team_meeting"]
    ref = tmp_path / "ref.rttm"
    write_rttm(ref, [Transcript("m1", REFERENCES["m1"])])
    scores = score_files(ref, out / "my_team_meeting.rttm", options=ScoreOptions(resamples=0))
    assert scores["aggregate"]["der"]["value"] == 0.0


def test_writers_map_whitespace_in_ids_and_readers_refuse_ids_with_spaces(tmp_path):
    t = Transcript("my meeting", [seg("p1", 0.0, "hello there", "Robert  Smith")])
    write_stm(tmp_path / "a.stm", [t])
    write_rttm(tmp_path / "a.rttm", [t])
    assert (tmp_path / "a.stm").read_text().split()[:3] == ["my_meeting", "1", "Robert_Smith"]
    assert (tmp_path / "a.rttm").read_text().split()[1] == "my_meeting"
    (tmp_path / "bad.rttm").write_text("SPEAKER my meeting 1 0.000 1.500 <NA> <NA> p1 <NA> <NA>\n")
    with pytest.raises(FormatError, match=r"bad\.rttm:1: SPEAKER line has 11 fields .* hold a space"):
        read_rttm(tmp_path / "bad.rttm")
    (tmp_path / "bad2.rttm").write_text("SPEAKER my meeting 1 0.000 1.500 <NA> <NA> p1\n")
    with pytest.raises(FormatError, match=r"speaker '<NA>'"):
        read_rttm(tmp_path / "bad2.rttm")
    (tmp_path / "bad.stm").write_text("my meeting 1 p1 0.0 1.0 hello\n")
    with pytest.raises(FormatError, match=r"bad\.stm:1: begin: expected a number of seconds, got 'p1'.*space"):
        read_stm(tmp_path / "bad.stm")


# 8. YAML types: terms are strings; duplicate keys are errors.

@pytest.mark.parametrize("written, read_as", [("8:30", "510"), ("1.50", "1.5"), ("010", "8"), ("yes", "True"),
                                              ("2026-05-08", "2026-05-08")])
def test_an_unquoted_term_that_yaml_reads_as_another_type_is_an_error(tmp_path, written, read_as):
    ws, _ = make_workspace(tmp_path)
    text = yaml.safe_dump(manifest(), sort_keys=False).replace("- 12%", f"- {written}", 1)
    write_manifest_text(ws, text)
    with pytest.raises(ManifestError, match=rf"terms\.numbers\[0\]: expected a string, got the \w+ {read_as}: "
                                            rf"YAML reads the unquoted {written} as a \w+; quote the term: "
                                            rf"\"{written}\"") as info:
        load_workspace(ws)
    assert str(ws / "workspace.yaml") in str(info.value)
    write_manifest_text(ws, text.replace(f"- {written}", f"- '{written}'", 1))
    assert load_workspace(ws).terms.numbers[0] == written


def test_meeting_terms_are_checked_too_and_plain_number_ids_keep_their_spelling(tmp_path):
    ws, _ = make_workspace(tmp_path)
    data = manifest()
    data["meetings"][1]["terms"] = {"numbers": ["1.50"]}
    write_manifest_text(ws, yaml.safe_dump(data, sort_keys=False).replace("- '1.50'", "- 1.50"))
    with pytest.raises(ManifestError, match=r"meetings\[1\]\.terms\.numbers\[0\]: .*quote the term: \"1\.50\""):
        load_workspace(ws)
    data = manifest()
    data["meetings"][0]["id"] = "010"
    write_manifest_text(ws, yaml.safe_dump(data, sort_keys=False).replace("id: '010'", "id: 010"))
    assert load_workspace(ws).meetings[0].id == "010"  # not 8


@pytest.mark.parametrize("text, line, key", [
    ("meetings: []\n", 10, "meetings"),
    ("name: other\n", 10, "name"),
])
def test_a_duplicate_key_is_an_error_not_a_silent_drop(tmp_path, text, line, key):
    ws, _ = make_workspace(tmp_path)
    body = yaml.safe_dump(manifest(), sort_keys=False)
    lines = body.splitlines(keepends=True)
    write_manifest_text(ws, "".join(lines[:line - 1]) + text + "".join(lines[line - 1:]))
    with pytest.raises(ManifestError, match=rf"workspace\.yaml:\d+: invalid YAML: duplicate key '{key}' "
                                            rf"\(first given on line \d+\)"):
        load_workspace(ws)


def test_a_duplicate_key_inside_a_meeting_is_an_error(tmp_path):
    ws, _ = make_workspace(tmp_path)
    body = yaml.safe_dump(manifest(), sort_keys=False).replace("- id: m2\n", "- id: m2\n  id: m3\n")
    write_manifest_text(ws, body)
    with pytest.raises(ManifestError, match=r"duplicate key 'id'"):
        load_workspace(ws)


def test_merge_keys_may_still_override(tmp_path):
    ws, _ = make_workspace(tmp_path)
    body = yaml.safe_dump(manifest(), sort_keys=False).replace(
        "- id: m2\n  date: '2026-03-04'\n", "- <<: {id: mx, date: '2026-03-04'}\n  id: m2\n")
    write_manifest_text(ws, body)
    assert [m.id for m in load_workspace(ws).meetings] == ["m1", "m2"]


# 9. A time-zone-aware meeting date next to a naive one.

@pytest.mark.parametrize("first, second", [("2026-03-02T09:00+01:00", "2026-03-04"),
                                           ("2026-03-02", "2026-03-04T09:00:00+01:00"),
                                           ("2026-03-02T09:00", "2026-03-04T09:00Z")])
def test_mixing_dates_with_and_without_a_time_zone_is_an_error(tmp_path, first, second):
    ws, _ = make_workspace(tmp_path)
    data = manifest()
    data["meetings"][0]["date"], data["meetings"][1]["date"] = first, second
    write_manifest_text(ws, yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ManifestError, match=r"meetings\[1\]\.date: .* has a time zone and .* has none"):
        load_workspace(ws)


def test_dates_all_with_time_zones_are_ordered_in_time(tmp_path):
    ws, _ = make_workspace(tmp_path)
    data = manifest()
    data["meetings"][0]["date"], data["meetings"][1]["date"] = "2026-03-02T09:00+01:00", "2026-03-02T08:30Z"
    write_manifest_text(ws, yaml.safe_dump(data, sort_keys=False))
    assert [m.id for m in load_workspace(ws).meetings] == ["m1", "m2"]  # 08:00Z, then 08:30Z


# 10. Bootstrap options are bounded and validated.

@pytest.mark.parametrize("option, value", [("--resamples", "1000000000"), ("--resamples", "1e23"),
                                           ("--resamples", "-1"), ("--resamples", "100000000000000000000000"),
                                           ("--seed", "-1"), ("--seed", "1e3"), ("--seed", str(2**64)),
                                           ("--collar", "nan"), ("--collar", "inf"), ("--collar", "-0.5"),
                                           ("--tcp-collar", "1e400")])
def test_bootstrap_and_collar_options_are_validated_by_the_parser(tmp_path, capsys, option, value):
    ws, run = make_workspace(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["score", "--workspace", str(ws), "--run", str(run), f"{option}={value}"])
    assert info.value.code == 2
    assert f"argument {option}: expected" in error_line(capsys)
    assert not (run / "scores.json").exists()


def test_score_options_are_validated_in_the_api_too():
    for bad in ({"resamples": 10**9}, {"resamples": -1}, {"seed": -1}, {"seed": 1.5}, {"collar": float("inf")}):
        with pytest.raises(SpeechkitError):
            ScoreOptions(**bad)


def test_bootstrap_draws_in_blocks_give_the_one_draw_result_in_bounded_memory():
    rng = np.random.default_rng(5)
    ratios = [Ratio(float(n), float(d)) for n, d in zip(rng.integers(0, 20, 300), rng.integers(1, 40, 300))]
    nums, dens = np.array([r.num for r in ratios]), np.array([r.den for r in ratios])
    idx = np.random.default_rng(0).integers(0, len(ratios), size=(2000, len(ratios)))
    low, high = np.percentile(nums[idx].sum(axis=1) / dens[idx].sum(axis=1), (2.5, 97.5))
    estimate = bootstrap(ratios, 2000, 0)
    assert (estimate.ci_low, estimate.ci_high) == (pytest.approx(low, abs=0), pytest.approx(high, abs=0))
    tracemalloc.start()
    bootstrap(ratios, MAX_RESAMPLES, 1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 * 2**20  # one draw would be 100,000 x 300 x 8 bytes x 3 = 720 MB


# 11. YAML alias bombs and huge values.

def _bomb(levels: int = 9) -> str:
    lines = ['format: speechkit-workspace/1', 'name: bomb', 'people: [{id: p1, name: A}]', 'metadata:',
             '  x0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"  x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines + [f"terms: {{jargon: *a{levels}}}", ""])


def test_an_alias_bomb_is_refused_fast_with_a_short_message(tmp_path):
    write_manifest_text(tmp_path, _bomb())
    started = time.perf_counter()
    with pytest.raises(ManifestError, match=r"aliases expand the document beyond") as info:
        load_workspace(tmp_path)
    assert time.perf_counter() - started < 5
    assert len(str(info.value)) < 300


def test_a_small_alias_expansion_that_is_not_a_string_is_quoted_short(tmp_path):
    write_manifest_text(tmp_path, _bomb(levels=4))  # 9^5 values: under the bound, still no string
    with pytest.raises(ManifestError, match=r"terms\.jargon\[0\]: expected a non-empty string") as info:
        load_workspace(tmp_path)
    assert len(str(info.value)) < 300


def test_a_recursive_alias_is_an_error(tmp_path):
    write_manifest_text(tmp_path, "format: speechkit-workspace/1\nname: r\nterms: {jargon: &a [*a]}\n")
    with pytest.raises(ManifestError, match="recursive alias"):
        load_workspace(tmp_path)


def test_ordinary_anchors_and_aliases_still_load(tmp_path):
    ws, _ = make_workspace(tmp_path)
    body = yaml.safe_dump(manifest(), sort_keys=False).replace("jargon:\n", "jargon: &jargon\n")
    body += "metadata: {same_jargon: *jargon}\n"
    write_manifest_text(ws, body)
    loaded = load_workspace(ws)
    assert loaded.metadata["same_jargon"] == list(loaded.terms.jargon)


def test_huge_values_are_cut_in_error_messages(tmp_path):
    ws, _ = make_workspace(tmp_path)
    data = manifest()
    data["meetings"][0]["id"] = "x" * 1_000_000
    write_manifest_text(ws, yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ManifestError, match="not a safe identifier") as info:
        load_workspace(ws)
    assert len(str(info.value)) < 400
    data = manifest()
    data["people"][0]["name"] = [["deep"] * 1000 for _ in range(50)]
    write_manifest_text(ws, yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ManifestError, match=r"people\[0\]\.name: expected a non-empty string") as info:
        load_workspace(ws)
    assert len(str(info.value)) < 400
