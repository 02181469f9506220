"""The ``llm`` notes backend against a stand-in OpenAI-compatible endpoint: the paper's prompt
shape (CONTEXT, then TRANSCRIPT lines), the notes' JSON schema in the request, the answer parsed
into Notes, long transcripts chunked and the partial notes merged, bad answers and failed
requests counted, never raised."""
from __future__ import annotations

import json

import pytest
from llm_helpers import Endpoint, completion

from speechkit.llm.schema import answer_token_limit, longest_answer
from speechkit.meeting_context import NotesContext
from speechkit.notes import ActionItem, Decision
from speechkit.stages import make_backend
from speechkit.stages.summarize.llm import chunk_lines, merge_notes, notes_of, transcript_lines
from speechkit.transcript import Segment, Transcript
from speechkit.workspace import Person

TURNS = [("Tobias Tanaka", "Adriana, can you add a load test for Kafka by Wednesday?"),
         ("Adriana Quintero", "Sure, I'll add it. Let's go with hourly runs for CDC."),
         (None, "The failover window is fifteen seconds, café ✓.")]
CONTEXT = NotesContext(earlier_notes="m01: the stand-up", roster=(Person("p2", "Tobias Tanaka", ("Toby",), "SRE"),),
                       agenda="Orchestrate review (review)")


def _transcript(repeat: int = 1) -> Transcript:
    segments = [Segment(10.0 * i, 10.0 * i + 5, f"SPEAKER_{i % 2}", text, speaker_name=name)
                for i, (name, text) in enumerate(TURNS * repeat)]
    return Transcript("m02", segments)


def _answer(summary: str, description: str = "add a load test for Kafka", choice: str = "hourly runs") -> dict:
    return {"summary": summary,
            "action_items": [{"assignee": "Adriana Quintero", "description": description, "due": "Wednesday"}],
            "decisions": [{"topic": "the CDC schedule", "choice": choice}], "outline": ["Orchestrate"]}


@pytest.fixture
def endpoint():
    requests: list[dict] = []
    answers: list[str] = []

    def behaviour(request: dict, call: int):
        requests.append(request)
        return 200, completion(answers[min(call, len(answers)) - 1]), 0.0
    server = Endpoint(behaviour, models=["stand-in"])
    server.requests, server.answers = requests, answers
    yield server
    server.close()


def _backend(endpoint, **options):
    return make_backend("summarize", "llm", base_url=endpoint.url, model="stand-in", max_retries=0, **options)


def test_one_request_with_the_schema_the_context_and_the_transcript(endpoint):
    endpoint.answers.append(json.dumps(_answer("Kafka load test assigned.")))
    notes, stats = _backend(endpoint).summarize(_transcript(), CONTEXT)
    assert stats == {"backend": "llm", "chunks": 1, "rejected_chunks": {}, "failures": {}}
    (request,) = endpoint.requests
    schema = request["response_format"]["json_schema"]["schema"]
    assert request["response_format"]["json_schema"]["strict"] is True
    # a valid answer is never cut: max_tokens is above the longest answer the schema allows
    assert request["max_tokens"] == answer_token_limit(schema) > longest_answer(schema) > 2500
    assert schema["required"] == ["summary", "action_items", "decisions", "outline"]
    assert schema["properties"]["action_items"]["items"]["required"] == ["assignee", "description", "due"]
    assert schema["properties"]["action_items"]["maxItems"] == 4 and schema["properties"]["summary"]["maxLength"] == 500
    user = request["messages"][-1]["content"]
    assert user.index("CONTEXT:\n") < user.index("Tobias Tanaka (Toby; SRE)") < user.index("TRANSCRIPT:\n")
    assert "[00:00] Tobias Tanaka: Adriana, can you add a load test" in user
    assert "[00:20] SPEAKER_0: The failover window is fifteen seconds, café ✓." in user
    assert notes.summary == "Kafka load test assigned."
    assert notes.action_items == (ActionItem("add a load test for Kafka", "Adriana Quintero", None, "Wednesday"),)
    assert notes.decisions == (Decision("the CDC schedule", "hourly runs"),) and notes.outline == ("Orchestrate",)


def test_the_first_level_sends_an_empty_context(endpoint):
    endpoint.answers.append(json.dumps(_answer("s")))
    _backend(endpoint).summarize(_transcript(), NotesContext())
    assert endpoint.requests[0]["messages"][-1]["content"].startswith("CONTEXT:\n(none)\n\nTRANSCRIPT:\n")


def test_a_long_transcript_is_chunked_and_the_notes_merged(endpoint):
    endpoint.answers += [json.dumps(_answer("First part.")),
                         json.dumps(_answer("Second part.", "Add a load test for KAFKA", "hourly runs")),
                         json.dumps(_answer("Third part.", "migrate the Iceberg jobs", "next sprint"))]
    transcript = _transcript(repeat=6)
    notes, stats = _backend(endpoint, chunk_bytes=400).summarize(transcript, CONTEXT)
    lines = transcript_lines(transcript)
    assert stats["chunks"] == len(endpoint.requests) == len(chunk_lines(lines, 400)) > 1
    sent = []
    for i, request in enumerate(endpoint.requests, 1):
        user = request["messages"][-1]["content"]
        assert f"TRANSCRIPT (part {i} of {stats['chunks']}):" in user and "Tobias Tanaka (Toby; SRE)" in user
        body = user.split("TRANSCRIPT", 1)[1].split(":\n", 1)[1].split("\n\nWrite the notes", 1)[0]
        assert len(body.encode()) <= 400
        sent += body.split("\n")
    assert sent == lines  # every line once, in order
    assert notes.summary.startswith("First part. Second part. Third part.")
    assert [a.description for a in notes.action_items] == ["add a load test for Kafka", "migrate the Iceberg jobs"]
    assert [d.choice for d in notes.decisions] == ["hourly runs", "next sprint"] and notes.outline == ("Orchestrate",)


def test_chunks_cut_long_turns_between_words_and_never_inside_a_character():
    lines = ["[00:00] A: " + "é" * 30 + " " + "word " * 50, "[00:10] B: short"]
    chunks = chunk_lines(lines, 64)
    assert all(len("\n".join(c).encode()) <= 64 for c in chunks)
    assert " ".join(" ".join(c) for c in chunks).split() == " ".join(lines).split()


def test_a_bad_answer_is_counted_and_the_other_chunks_kept(endpoint):
    endpoint.answers += [json.dumps({"summary": "no lists"}), json.dumps(_answer("Kept."))] + ["not json"] * 10
    notes, stats = _backend(endpoint, chunk_bytes=400).summarize(_transcript(repeat=4), CONTEXT)
    assert stats["rejected_chunks"]["wrong-shape"] == 1
    assert stats["rejected_chunks"]["invalid-json"] == stats["chunks"] - 2
    assert notes.summary == "Kept." and len(notes.action_items) == 1


def test_a_failed_request_is_counted_not_raised():
    backend = make_backend("summarize", "llm", base_url="http://127.0.0.1:9/v1", model="stand-in",
                           max_retries=0, timeout_s=2)
    notes, stats = backend.summarize(_transcript(), CONTEXT)
    assert stats["failures"] == {"connection": 1} and notes.action_items == () and notes.summary == ""


def test_empty_strings_of_an_answer_become_none_and_empty_items_are_dropped():
    notes = notes_of({"summary": " s ", "outline": ["", "A"], "decisions": [{"topic": "", "choice": "x"}],
                      "action_items": [{"assignee": "", "description": "do it", "due": ""},
                                       {"assignee": "B", "description": " ", "due": ""}]})
    assert notes.action_items == (ActionItem("do it"),) and notes.decisions == (Decision("x", "x"),)
    assert notes.outline == ("A",) and notes.summary == "s"
    assert merge_notes([notes, notes]) == notes.__class__("s s", notes.action_items, notes.decisions, ("A",))
