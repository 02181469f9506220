"""The context builder: what each level adds, budgets, and no leak of references or scorer terms."""
from __future__ import annotations

import numpy as np
import pytest
import yaml

from speechkit.context import PriorMeeting, artifact_terms, build_context, rare_words
from speechkit.core.record import MeetingRecord
from speechkit.io.manifest import load_workspace
from speechkit.recipe import ContextBudget
from speechkit.transcript import Segment, Transcript, Word


@pytest.fixture()
def ws(tmp_path):
    (tmp_path / "a.wav").write_bytes(b"RIFF")
    (tmp_path / "ref.json").write_text('[{"session_id": "m2", "speaker": "p1", "start_time": 0, "end_time": 1,'
                                       ' "words": "zebrafishlike quokkanator"}]')
    (tmp_path / "agenda.md").write_text("# Agenda\n- migrate pacs.008 to camt.054\n- P99 under 250ms\n")
    (tmp_path / "email.md").write_text("Hi Dan, the FooBar v2.3.1 rollout is on 2026-03-05.\n")
    (tmp_path / "late.md").write_text("Post-mortem of the Zyxwvut7 outage.\n")
    manifest = {
        "name": "ctx",
        "people": [{"id": "p1", "name": "Priya Raman", "nicknames": ["Pri"], "enrollment": "a.wav"},
                   {"id": "p2", "name": "Daniel Okafor", "nicknames": ["Dan"]},
                   {"id": "p3", "name": "Noor Haddad", "enrollment": "a.wav"}],
        "terms": {"numbers": ["4242"], "jargon": ["pacs.008", "Kafka"]},
        "meetings": [{"id": "m1", "date": "2026-03-02", "audio": "a.wav", "title": "Stand-up"},
                     {"id": "m2", "date": "2026-03-04", "audio": "a.wav", "reference": "ref.json",
                      "attendees": ["p1", "p2"], "terms": {"jargon": ["quokkanator"]}}],
        "artifacts": [{"id": "ag", "kind": "agenda", "path": "agenda.md", "meeting": "m2"},
                      {"id": "em", "kind": "email", "path": "email.md", "date": "2026-03-03"},
                      {"id": "late", "kind": "document", "path": "late.md", "date": "2026-03-09"}],
    }
    (tmp_path / "workspace.yaml").write_text(yaml.safe_dump(manifest))
    return load_workspace(tmp_path)


def _segment(text: str, start: float, confidence: float = 0.95) -> Segment:
    words = [Word(w, start + i * 0.5, start + i * 0.5 + 0.4, confidence) for i, w in enumerate(text.split())]
    return Segment.from_words(words, "SPEAKER_00", speaker_name="Speaker 1")


def _prior() -> list[PriorMeeting]:
    segments = [_segment("the grafana dashboard and terraform", 0.0),
                _segment("grafana alerts feed the terraform scraper", 5.0)]
    return [PriorMeeting("m1", Transcript("m1", segments), {"Speaker 1": [1.0, 0.0], "Speaker 2": [0.0, 2.0]})]


def test_level1_adds_nothing(ws):
    ctx = build_context(ws, ws.meetings[1], 1, _prior(), ContextBudget())
    assert not ctx.biasing and not ctx.enrollments and not ctx.prior_speakers and not ctx.terms


def test_level2_uses_own_prior_outputs_only(ws):
    ctx = build_context(ws, ws.meetings[1], 2, _prior(), ContextBudget())
    assert set(ctx.biasing.hotwords) == {"grafana", "terraform"}  # frequent and rare; "dashboard" is common
    assert np.allclose(ctx.prior_speakers["Speaker 2"], [0.0, 1.0])  # normalised centroid
    assert not ctx.enrollments and not ctx.names and ctx.biasing.prompt is None


def test_level3_adds_roster_enrollments_jargon_and_dated_artifacts(ws):
    ctx = build_context(ws, ws.meetings[1], 3, _prior(), ContextBudget())
    assert list(ctx.enrollments) == ["Priya Raman"]  # Noor is enrolled but not invited to m2
    assert ctx.names == {"Priya Raman": ["Pri"], "Daniel Okafor": ["Dan"], "Noor Haddad": []}
    uninvited = build_context(ws, ws.meetings[0], 3, [], ContextBudget())  # m1 lists no attendees
    assert list(uninvited.enrollments) == ["Priya Raman", "Noor Haddad"]
    for term in ("pacs.008", "camt.054", "P99", "FooBar", "v2.3.1", "grafana"):
        assert term in ctx.terms, term
    assert "Zyxwvut7" not in ctx.terms  # document dated after the meeting
    assert "Priya Raman" in ctx.biasing.prompt and "pacs.008" in ctx.biasing.prompt
    assert "Dan" in ctx.biasing.hotwords
    assert "migrate pacs.008" in ctx.lm_text


def test_the_invite_sets_the_speaker_count_at_level3_only(ws):
    """m2 invites two people: at L3 the diarizer is told 2 (unless the recipe turns it off); a meeting
    without attendees, and L1/L2, leave the count to the estimate."""
    assert build_context(ws, ws.meetings[1], 3, _prior(), ContextBudget()).expected_speakers == 2
    assert build_context(ws, ws.meetings[0], 3, [], ContextBudget()).expected_speakers is None
    assert build_context(ws, ws.meetings[1], 2, _prior(), ContextBudget()).expected_speakers is None
    off = ContextBudget(invite_speaker_count=False)
    assert build_context(ws, ws.meetings[1], 3, _prior(), off).expected_speakers is None
    l3 = build_context(ws, ws.meetings[1], 3, _prior(), ContextBudget())
    assert MeetingRecord(ws.meetings[1].audio, l3).speaker_count == 2  # what the diarize stage is told
    assert MeetingRecord(ws.meetings[1].audio, l3, num_speakers=5).speaker_count == 5  # a caller's count wins


def test_context_never_reads_references_or_scorer_terms(ws):
    ctx = build_context(ws, ws.meetings[1], 3, [], ContextBudget())
    everything = " ".join([ctx.biasing.prompt or "", *ctx.biasing.hotwords, *ctx.terms, ctx.lm_text])
    assert "quokkanator" not in everything and "zebrafishlike" not in everything
    assert "4242" not in everything  # the number term set is the scorer's, not context


def test_budgets_are_respected_and_logged(ws):
    budget = ContextBudget(prompt_tokens=13, hotwords=3, prior_terms=1)
    ctx = build_context(ws, ws.meetings[1], 3, _prior(), budget)
    assert len(ctx.biasing.hotwords) == 3
    assert len(ctx.biasing.prompt.split()) <= 10
    sources = {entry["source"]: entry for entry in ctx.log}
    assert sources["hot words"] == {"source": "hot words", "items": 3, "budget": 3}
    assert sources["prior rare words"]["items"] == 1


def test_rare_words_and_artifact_terms():
    assert rare_words(["kubernetes kubernetes the the the table"], 5, 3.0) == ["kubernetes"]
    assert artifact_terms("Ship pacs.008 and P99 at 12% by Q3 on May 8 for $45,000, as planned", 3.0) == [
        "May 8", "pacs.008", "P99", "12%", "Q3", "$45,000"]


def test_a_name_that_is_only_the_id_is_no_word_to_expect(tmp_path):
    """Imported corpora without names (AMI) carry the speaker id as the name: it names the voice
    enrollment, but the recognizer is not primed with 'MEE089'."""
    (tmp_path / "a.wav").write_bytes(b"RIFF")
    manifest = {"name": "ami", "people": [{"id": "MEE089", "name": "MEE089", "enrollment": "a.wav"},
                                          {"id": "FEE087", "name": "Fiona Hale"}],
                "terms": {"jargon": ["remote control"]},
                "meetings": [{"id": "m1", "date": "2026-03-02", "audio": "a.wav", "attendees": ["MEE089", "FEE087"]}]}
    (tmp_path / "workspace.yaml").write_text(yaml.safe_dump(manifest))
    ws = load_workspace(tmp_path)
    ctx = build_context(ws, ws.meetings[0], 3, [], ContextBudget())
    everything = " ".join([ctx.biasing.prompt or "", *ctx.biasing.hotwords, ctx.lm_text, *ctx.names])
    assert "MEE089" not in everything
    assert "Attendees: Fiona Hale." in ctx.biasing.prompt and "Fiona Hale" in ctx.biasing.hotwords
    assert list(ctx.enrollments) == ["MEE089"]
    assert {"source": "roster names left out (only the person's id)", "items": 1, "budget": None} in ctx.log


def _prior_with_notes() -> list[PriorMeeting]:
    from speechkit.notes import ActionItem, Notes
    [prior] = _prior()
    prior.notes = Notes(summary="Grafana alerts reviewed.", action_items=(ActionItem("fix the scraper", "Speaker 1"),))
    return [prior]


def _without(ctx, *names):
    """The context's fields but ``names`` (and the log), numpy arrays as lists: what must stay."""
    kept = {f: getattr(ctx, f) for f in ("biasing", "enrollments", "stable_labels", "expected_speakers", "terms",
                                         "names", "lm_text", "notes") if f not in names}
    kept["prior_speakers"] = {k: v.tolist() for k, v in ctx.prior_speakers.items()}
    return kept


def test_the_enrollments_ablation_removes_the_enrollments_only(ws):
    full = build_context(ws, ws.meetings[1], 3, _prior_with_notes(), ContextBudget())
    ablated = build_context(ws, ws.meetings[1], 3, _prior_with_notes(), ContextBudget(ablate="enrollments"))
    assert full.enrollments and ablated.enrollments == {}
    assert _without(ablated, "enrollments") == _without(full, "enrollments")
    assert ablated.expected_speakers == 2 and ablated.names and ablated.biasing.prompt and ablated.notes.roster
    assert {"source": "voice enrollments left out (context.ablate: enrollments)", "items": 0,
            "budget": None} in ablated.log


def test_the_text_ablation_removes_the_workspace_text_and_keeps_the_rest(ws):
    """Without the workspace text, L3's context is L2's (the system's own words, LM text, notes)
    plus the voice enrollments and the invite's speaker count; no word of the roster, jargon,
    agenda, emails or documents is anywhere in it."""
    prior = _prior_with_notes()
    full = build_context(ws, ws.meetings[1], 3, prior, ContextBudget())
    l2 = build_context(ws, ws.meetings[1], 2, prior, ContextBudget())
    ablated = build_context(ws, ws.meetings[1], 3, prior, ContextBudget(ablate="text"))
    assert full.names and full.biasing.prompt and full.notes.roster and full.notes.emails and full.notes.agenda
    assert _without(ablated, "enrollments", "expected_speakers") == _without(l2, "enrollments", "expected_speakers")
    assert ablated.biasing.verify_hotwords and set(ablated.biasing.hotwords) == {"grafana", "terraform"}
    assert ablated.notes.earlier_notes == full.notes.earlier_notes != ""
    assert ablated.enrollments == full.enrollments == {"Priya Raman": [ws.people[0].enrollments[0]]}
    assert ablated.expected_speakers == full.expected_speakers == 2
    everything = " ".join([*ablated.biasing.hotwords, *ablated.terms, ablated.lm_text, ablated.notes.text(),
                           *ablated.names])
    for text in ("Priya", "Pri ", "Okafor", "pacs.008", "Kafka", "camt.054", "FooBar", "Stand-up"):
        assert text not in everything, text
    assert {"source": "workspace text left out (context.ablate: text)", "items": 0, "budget": None} in ablated.log


def test_the_ablation_changes_nothing_below_level3(ws):
    for level in (1, 2):
        for stream in ("enrollments", "text"):
            ablated = build_context(ws, ws.meetings[1], level, _prior_with_notes(), ContextBudget(ablate=stream))
            plain = build_context(ws, ws.meetings[1], level, _prior_with_notes(), ContextBudget())
            assert _without(ablated) == _without(plain) and ablated.log == plain.log
