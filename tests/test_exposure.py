"""Scored-term exposure (speechkit/metrics/exposure.py): which of a meeting's scored terms each
stream of its context holds, matched as term recall matches, written by the runner into
``context/<meeting>.json``, summed in run.json and shown in the report."""
from __future__ import annotations

import json

import pytest
import yaml

from speechkit.cache import StageCache
from speechkit.cascade import CascadeResult
from speechkit.context import PriorMeeting, build_context, run_context
from speechkit.core.record import TRANSCRIPT, MeetingRecord
from speechkit.io.manifest import load_workspace
from speechkit.io.run_folder import RunFolder
from speechkit.io.run_view import RunView
from speechkit.io.scores import Scores
from speechkit.metrics.exposure import ANY, QUESTIONS, STREAMS, meeting_exposure, run_exposure, terms_in
from speechkit.metrics.terms import term_recall
from speechkit.recipe import ContextBudget, load_recipe
from speechkit.report.exposure import exposure_lines
from speechkit.runner import run_meetings
from speechkit.transcript import Segment, Transcript, Word

SAID = "the quokkanator build and the quokkanator rollout"


@pytest.fixture()
def ws(tmp_path):
    (tmp_path / "a.wav").write_bytes(b"RIFF")
    (tmp_path / "ref.json").write_text(json.dumps([{"session_id": "m3", "speaker": "p1", "start_time": 0,
                                                    "end_time": 1, "words": "we moved pacs.008 to Kafka"}]))
    (tmp_path / "agenda.md").write_text("# Review\n\n1. Migrate pacs.008 (owner Priya Raman)\n")
    (tmp_path / "email.md").write_text("Hi Dan, the batch is forty five thousand dollars.\n")
    manifest = {
        "name": "exposure",
        "people": [{"id": "p1", "name": "Priya Raman", "nicknames": ["Pri"]}, {"id": "p2", "name": "Daniel Okafor"}],
        "terms": {"numbers": ["$45,000", "4242", "June 2"], "jargon": ["pacs.008", "Kafka", "quokkanator"]},
        "meetings": [
            {"id": "m1", "date": "2026-03-02", "audio": "a.wav", "terms": {"jargon": ["quokkanator"]}},
            {"id": "m2", "date": "2026-03-04", "audio": "a.wav", "title": "Review", "attendees": ["p1", "p2"],
             "terms": {"numbers": ["$45,000", "4242", "June 2"], "jargon": ["pacs.008", "quokkanator"]}},
            {"id": "m3", "date": "2026-03-05", "audio": "a.wav", "reference": "ref.json"}],
        "artifacts": [{"id": "ag", "kind": "agenda", "path": "agenda.md", "meeting": "m2"},
                      {"id": "em", "kind": "email", "path": "email.md", "date": "2026-03-03"}],
    }
    (tmp_path / "workspace.yaml").write_text(yaml.safe_dump(manifest))
    return load_workspace(tmp_path)


def _said(meeting: str) -> Transcript:
    """What a system confidently wrote for ``meeting``: "quokkanator" in two segments."""
    segments = [Segment.from_words([Word(w, k * 5 + i * 0.5, k * 5 + i * 0.5 + 0.4, 0.95)
                                    for i, w in enumerate(SAID.split()[k * 4:(k + 1) * 4])], "SPEAKER_00")
                for k in range(2)]
    return Transcript(meeting, segments)


def _found(exposure, stream: str) -> set[str]:
    return {t for kind in ("numbers", "jargon") for t in exposure["found"][stream][kind]}


def test_a_stream_holds_a_term_where_term_recall_would_find_it():
    terms = ["$45,000", "June 2", "pacs.008", "P99"]
    for unit in ("forty five thousand dollars", "June 2 and P99", "pacs dot 008", "June", "PACS.008, p99."):
        assert terms_in(terms, [unit]) == list(term_recall(terms, unit).found), unit
    assert terms_in(["June 2"], ["June", "2"]) == []  # two items are not one text
    assert terms_in(["June 2"], ["June 2"]) == ["June 2"]


def test_levels_expose_nothing_then_the_systems_own_words_then_the_workspace_text(ws):
    m2 = ws.meeting("m2")
    prior = [PriorMeeting("m1", _said("m1"), {})]
    l1, l2, l3 = (meeting_exposure(ws, m2, build_context(ws, m2, level, prior, ContextBudget())) for level in (1, 2, 3))
    assert l1["source"] == "manifest" and l1["scored"] == {"numbers": 3, "jargon": 2}
    assert all(not _found(l1, stream) for stream in (*STREAMS, ANY, QUESTIONS))
    # L2: the word the system wrote confidently, nothing else (earned)
    assert _found(l2, "hotwords") == _found(l2, "correction_terms") == _found(l2, ANY) == {"quokkanator"}
    assert not _found(l2, "asr_prompt")
    # L3: the jargon list (every jargon term), the agenda, the email's number as said
    assert _found(l3, "correction_terms") >= {"pacs.008", "quokkanator"}
    assert "pacs.008" in _found(l3, "asr_prompt")  # the jargon list and the agenda are in the prompt
    assert "$45,000" in _found(l3, "lm_text")  # "forty five thousand dollars" in the email
    assert _found(l3, ANY) == {"pacs.008", "quokkanator", "$45,000"}  # never 4242 nor June 2: nothing holds them
    assert _found(l3, ANY) == set().union(*(_found(l3, s) for s in STREAMS))


def test_a_meeting_without_a_term_list_is_scored_on_the_terms_its_reference_holds(ws):
    m3 = ws.meeting("m3")
    exposure = meeting_exposure(ws, m3, build_context(ws, m3, 3, [], ContextBudget()))
    assert exposure["source"] == "reference scan" and exposure["scored"] == {"numbers": 0, "jargon": 2}
    assert meeting_exposure(ws, ws.meeting("m1"), build_context(ws, ws.meeting("m1"), 1, [], ContextBudget()))
    no_terms = load_workspace(ws.root)
    no_terms.terms = type(ws.terms)()
    bare = type(m3)("m4", m3.date, m3.audio)
    assert meeting_exposure(no_terms, bare, build_context(no_terms, bare, 3, [], ContextBudget())) is None


def test_the_run_sums_meetings_and_is_none_without_terms():
    one = {"scored": {"numbers": 2, "jargon": 2},
           "found": {k: {"numbers": ["1"] if k in ("lm_text", ANY) else [], "jargon": ["a", "b"] if k == ANY else []}
                     for k in (*STREAMS, ANY, QUESTIONS)}}
    two = {"scored": {"numbers": 0, "jargon": 4},
           "found": {k: {"numbers": [], "jargon": ["c"]} for k in (*STREAMS, ANY, QUESTIONS)}}
    run = run_exposure({"m1": one, "m2": two, "m3": None})
    assert run["meetings"] == 2 and run["scored"] == {"numbers": 2, "jargon": 6, "all": 8}
    assert run["streams"][ANY] == {"numbers": 1, "jargon": 3, "all": 4, "share": 0.5, "numbers_share": 0.5,
                                   "jargon_share": 0.5}
    assert run["streams"]["lm_text"]["all"] == 2 and run["per_meeting"]["m1"] == {
        "scored": 4, **{k: 0 for k in (*STREAMS, QUESTIONS)}, "lm_text": 1, ANY: 3}
    assert run_exposure({"m1": None}) is None and run_exposure({}) is None


class _Stub:
    """A cascade that writes what :func:`_said` says, and learns the voices of nobody."""

    stage_names = ()  # no stage to tell the run has started

    def run(self, audio, context, cache, session_id=None, **kwargs):
        return CascadeResult(MeetingRecord(audio, context, session_id), {TRANSCRIPT: _said(session_id)})


@pytest.mark.parametrize("level", [1, 2, 3])
def test_the_runner_writes_each_meetings_exposure_and_the_report_shows_the_run(ws, tmp_path, level):
    recipe = load_recipe("whisper", level=level)
    run = RunFolder(tmp_path / "run")
    results = run_meetings(recipe, ws, run, _Stub(), StageCache(None), progress=False)
    files = {m: json.loads(run.context(m).read_text())["scored_term_exposure"] for m in results}
    for mid, written in files.items():
        meeting = ws.meeting(mid)
        prior = [PriorMeeting(m, _said(m), {}) for m in list(results)[:list(results).index(mid)]]
        assert written == meeting_exposure(ws, meeting, run_context(ws, meeting, level, prior, recipe.context))
    assert bool(_found(files["m2"], ANY)) == (level > 1)
    summed = run_exposure(files)
    view = RunView(run, {"scored_term_exposure": summed}, Scores({}))
    lines = exposure_lines(view)
    assert lines[0] == "## Scored terms in the context"
    scored = summed["scored"]["all"]
    assert f"| all | {scored} | " in "\n".join(lines)
    assert f"{summed['streams'][ANY]['all']}/{scored}" in "\n".join(lines)
    assert "Not recorded" in exposure_lines(RunView(run, {}, Scores({})))[2]
