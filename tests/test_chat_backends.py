"""The audio-in chat backends against a local stand-in (tests/audio_chat.py): the ``chat`` ASR
backend (speaker-tagged segments of a block) and the ``chat`` identification backend (the OSynth
paper's Figure 5 scaffold), the answers they accept and refuse, and the requests they send."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from audio_chat import AudioChat, clip_samples, pcm
from llm_helpers import Endpoint, completion

from speechkit.core.audio import SAMPLE_RATE, load_audio
from speechkit.core.record import MeetingRecord
from speechkit.errors import SpeechkitError
from speechkit.io.manifest import load_workspace
from speechkit.io.seglst import read_seglst
from speechkit.llm import session
from speechkit.llm.client import LLMUnavailable
from speechkit.meeting_context import Biasing, MeetingContext
from speechkit.stages import build_stage, make_backend, parse_stage
from speechkit.stages.asr.chat import read_segments
from speechkit.stages.diarize import Diarization
from speechkit.stages.identify_chat import match_name, representative_spans
from speechkit.transcript import Segment

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"
MODEL = "audio-model"
NAMES = ["Tobias Tanaka", "Samuel Sokolowski", "Adriana Quintero", "Helena Lindqvist"]


@pytest.fixture(scope="module")
def demo():
    return load_workspace(DEMO)


@pytest.fixture(scope="module")
def chat():
    server = AudioChat(DEMO, [MODEL])
    yield server
    server.close()


@pytest.fixture
def fresh(chat):
    chat.log.clear()
    with session.opened(None):
        yield chat


@pytest.mark.parametrize(("answer", "name"), [
    ("Tobias Tanaka", "Tobias Tanaka"),
    ("  **tobias tanaka.**\n", "Tobias Tanaka"),
    ('{"name": "Helena Lindqvist"}', "Helena Lindqvist"),
    ("The speaker is Samuel Sokolowski.", "Samuel Sokolowski"),
    ("Adriana", "Adriana Quintero"),          # the first-name fallback
    ("It is Helena.", "Helena Lindqvist"),    # ... on any word when the first is none
    ("unknown", None),
    ('{"name": "unknown"}', None),
    ("Priya Whitfield", None),                # not in the closed list
    ("", None),
])
def test_an_answer_is_matched_back_to_the_closed_list_tolerantly(answer, name):
    assert match_name(answer, NAMES) == name


def test_a_first_name_two_people_share_names_no_one():
    assert match_name("Sam", ["Sam Ray", "Sam Ito"]) is None
    assert match_name("Sam Ito", ["Sam Ray", "Sam Ito"]) == "Sam Ito"


def test_a_representative_clip_takes_the_longest_turns_in_time_order():
    turns = [(0.0, 0.5), (2.0, 6.0), (10.0, 13.0), (20.0, 27.0)]
    assert representative_spans(turns, 10.0, 1.0) == [(2.0, 5.0), (20.0, 27.0)]
    assert representative_spans(turns, 30.0, 1.0) == [(2.0, 6.0), (10.0, 13.0), (20.0, 27.0)]
    assert representative_spans([(0.0, 0.4), (1.0, 1.2)], 10.0, 1.0) == [(0.0, 0.4)]  # none long enough


def identify_record(demo, meeting: str, enrolled: bool) -> MeetingRecord:
    """A record of a demo meeting whose diarization is its reference's turns (labelled as a
    transcription endpoint would), with the attendees' enrollments at L3."""
    m = next(m for m in demo.meetings if m.id == meeting)
    reference = next(iter(read_seglst(m.reference).values()))
    labels = {speaker: f"Speaker {i + 1}" for i, speaker in enumerate(reference.speakers)}
    turns = [Segment(s.start, s.end, labels[s.speaker]) for s in reference.segments]
    people = {p.id: p for p in demo.people}
    context = MeetingContext(stable_labels=enrolled, enrollments={
        people[pid].name: list(people[pid].enrollments) for pid in m.attendees} if enrolled else {})
    record = MeetingRecord(m.audio, context, session_id=m.id)
    record.results["diarize"] = Diarization(turns)
    return record


def identify_stage(**options):
    return build_stage(parse_stage("identify", {"backend": "chat", "max_retries": 0, **options}),
                       reads={"diarize": object()})


def test_each_cluster_is_named_by_the_figure_5_scaffold(demo, fresh, monkeypatch):
    monkeypatch.setenv("SPEECHKIT_LLM_BASE_URL", fresh.url)
    record = identify_record(demo, "m01", enrolled=True)
    stage = identify_stage(model=MODEL, response_format="none", clip_s=6.0)
    names = stage.run(record)
    reference = next(iter(read_seglst(demo.meetings[0].reference).values()))
    people = {p.id: p.name for p in demo.people}
    truth = {f"Speaker {i + 1}": people[speaker] for i, speaker in enumerate(reference.speakers)}
    assert names == truth
    assert fresh.kinds() == ["identify"] * len(truth) and fresh.endpoint.auth[-1] is None
    request = fresh.log[0]
    enrolled = list(record.context.enrollments)
    assert request["texts"][1:] == [
        "Here are the voice enrollments of the people who may be speaking, then the target turn.",
        *[f"Enrollment -- {name}:" for name in enrolled], "Target turn:",
        "Which enrolled person is speaking in the target turn? Answer with exactly one name from this list, "
        f"copied exactly, and nothing else: {'; '.join(enrolled)}. If the voice matches none of them, answer unknown."]
    assert request["audio"] == len(enrolled) + 1 and request["response_format"] is None


def test_the_clips_are_the_enrollments_and_the_clusters_longest_turns(demo, monkeypatch):
    sent = []
    server = Endpoint(lambda request, call: (sent.append(request) or (200, completion("unknown"), 0.0)), [MODEL])
    monkeypatch.setenv("SPEECHKIT_LLM_BASE_URL", server.url)
    try:
        with session.opened(None):
            record = identify_record(demo, "m01", enrolled=True)
            names = identify_stage(model=MODEL, clip_s=4.0, enrollment_s=3.0).run(record)
    finally:
        server.close()
    # nobody named: at L3 (stable labels) each cluster gets a label no earlier meeting used
    assert sorted(names.values()) == [f"Speaker {i + 1}" for i in range(len(names))]
    parts = [p for p in sent[0]["messages"][1]["content"] if p["type"] == "input_audio"]
    first = next(iter(record.context.enrollments.values()))
    assert (clip_samples(parts[0]) == pcm(load_audio(first[0]))[:3 * SAMPLE_RATE]).all()
    turns = [t for t in record.result("diarize").turns if t.speaker == "Speaker 1"]
    longest = max(turns, key=lambda t: t.duration)
    target = clip_samples(parts[-1])
    start = round(longest.start * SAMPLE_RATE)
    assert len(target) == 4 * SAMPLE_RATE if longest.duration >= 4 else len(target) <= 4 * SAMPLE_RATE
    assert (target[:SAMPLE_RATE] == pcm(load_audio(record.audio))[start:start + SAMPLE_RATE]).all()
    # a schema where the server takes them: one of the names, or unknown
    schema = sent[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["name"]["enum"] == [*record.context.enrollments, "unknown"]


def test_without_enrollments_nothing_is_asked_and_the_labels_stay(demo, fresh, monkeypatch):
    monkeypatch.setenv("SPEECHKIT_LLM_BASE_URL", fresh.url)
    record = identify_record(demo, "m01", enrolled=False)
    assert not any(identify_stage(model=MODEL).run(record).values())  # L1
    record.context.stable_labels = True  # L2: labels no earlier meeting used
    record.context.prior_speakers = {"Speaker 1": np.zeros(3), "Speaker 2": np.zeros(3)}
    names = identify_stage(model=MODEL).run(record)
    assert len(names) >= 2 and [names[k] for k in sorted(names)] == [f"Speaker {n}" for n in range(3, 3 + len(names))]
    assert fresh.log == []


def test_a_failed_request_leaves_its_cluster_unnamed_and_is_counted(demo, monkeypatch):
    server = Endpoint(lambda request, call: (500, json.dumps({"error": {"message": "overloaded"}}), 0.0), [MODEL])
    monkeypatch.setenv("SPEECHKIT_LLM_BASE_URL", server.url)
    try:
        with session.opened(None) as runs:
            names = identify_stage(model=MODEL).run(identify_record(demo, "m03", enrolled=True))
        assert names == {"Speaker 1": "Speaker 1", "Speaker 2": "Speaker 2"}  # unnamed: stable labels
        (usage,) = runs.endpoints.values()
        assert usage.failed == usage.requests == 2 and usage.failures == {"http-500": 2}
    finally:
        server.close()


def test_a_block_comes_back_as_speaker_tagged_segments(demo, fresh, monkeypatch):
    monkeypatch.setenv("SPEECHKIT_LLM_BASE_URL", fresh.url)
    m = demo.meetings[0]
    audio = load_audio(m.audio)[20 * SAMPLE_RATE:80 * SAMPLE_RATE]
    asr = make_backend("asr", "chat", model=MODEL, max_retries=0)
    segments = asr.transcribe(audio, biasing=Biasing(prompt="SettleMap pacs.008"))
    reference = [s for s in next(iter(read_seglst(m.reference).values())).segments if 20 <= (s.start + s.end) / 2 < 80]
    assert [s.text for s in segments] == [s.text for s in reference]
    assert [s.speaker for s in segments][0] == "Speaker 1" and not segments[0].words
    assert segments[0].start == pytest.approx(max(reference[0].start - 20, 0), abs=1e-3)
    labels = {}
    for seg, ref in zip(segments, reference):  # one label per voice
        assert labels.setdefault(ref.speaker, seg.speaker) == seg.speaker
    (request,) = fresh.log
    assert request["kind"] == "transcribe" and request["audio"] == 1
    assert "SettleMap" not in "".join(request["texts"])  # the paper's stacks give no vocabulary
    assert request["response_format"]["json_schema"]["schema"]["properties"]["segments"]["maxItems"] == 400
    assert request["max_tokens"] == 32000
    make_backend("asr", "chat", model=MODEL, biasing=True, max_tokens_field="max_completion_tokens").transcribe(
        audio, biasing=Biasing(prompt="SettleMap"))
    assert fresh.log[-1]["texts"][-1].endswith("Words and names that may occur: SettleMap")
    # the bound under the name OpenAI's newer models take
    assert (fresh.log[-1]["max_tokens"], fresh.log[-1]["max_completion_tokens"]) == (None, 32000)


def test_segments_are_read_tolerantly_and_refused_when_they_are_not_segments():
    rows = {"segments": [{"speaker": "Speaker 2", "start": 5.0, "end": 99.0, "text": " late  words "},
                         {"speaker": "Speaker 1", "start": -1.0, "end": 2.0, "text": "first"},
                         {"speaker": "Speaker 1", "start": 3.0, "end": 4.0, "text": "  "}]}
    segments = read_segments(rows, 10.0)
    assert [(s.speaker, s.start, s.end, s.text) for s in segments] == [
        ("Speaker 1", 0.0, 2.0, "first"), ("Speaker 2", 5.0, 10.0, "late words")]
    for bad in ({"segments": [{"speaker": "A", "start": "soon", "end": 1, "text": "x"}]},
                {"segments": [{"speaker": "A", "start": 0, "text": "x"}]},
                {"segments": [{"speaker": "A", "start": float("nan"), "end": 1, "text": "x"}]},
                {"text": "no segments"}):
        with pytest.raises(Exception, match="segment|segments"):
            read_segments(bad, 10.0)


@pytest.mark.parametrize(("reply", "reason"), [
    ((200, completion('{"transcript": "hello"}'), 0.0), "wrong-shape"),
    ((503, json.dumps({"error": {"message": "overloaded"}}), 0.0), "http-503")])
def test_a_block_without_segments_stops_the_run_in_one_line_and_is_counted(monkeypatch, reply, reason):
    """No empty recognition, which the stage cache would keep as if it were the block's words."""
    server = Endpoint(lambda request, call: reply, [MODEL])
    monkeypatch.setenv("SPEECHKIT_LLM_BASE_URL", server.url)
    try:
        with session.opened(None) as runs:
            asr = make_backend("asr", "chat", model=MODEL, max_retries=1, backoff_s=0.0)
            with pytest.raises(LLMUnavailable) as info:
                asr.transcribe(load_audio(DEMO / "enrollments" / "p1.flac"))
        assert str(info.value).startswith(f"{server.url}: model {MODEL}: the transcription of a ")
        assert f": {reason}: " in str(info.value) and "\n" not in str(info.value)
        (usage,) = runs.endpoints.values()
        assert usage.failed == usage.requests == 1 and usage.failures == {reason: 1}
        assert server.calls == (2 if reason == "http-503" else 1)  # a 503 is retried
    finally:
        server.close()


@pytest.mark.parametrize("stage", ["asr", "identify"])
def test_audio_goes_to_a_server_of_the_users_never_the_local_text_model(stage):
    options = parse_stage(stage, {"backend": "chat", "model": MODEL}).options
    with pytest.raises(SpeechkitError, match=r"^no endpoint given: set SPEECHKIT_LLM_BASE_URL or OPENAI_BASE_URL "):
        options.resolve_endpoint({})
    assert options.resolve_endpoint({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}).base_url == "http://127.0.0.1:9/v1"
