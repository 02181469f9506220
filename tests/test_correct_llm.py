"""The LLM corrector against a local OpenAI-compatible endpoint that misbehaves in the ways
the OSynth paper (Appendix V) and real deployments do."""
from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator

import pytest
from llm_helpers import FIXES, REFERENCE, TURNS, VOCAB, Endpoint, Reply, completion, transcript, turns_of, wer

from speechkit.errors import SpeechkitError
from speechkit.stages import make_backend
from speechkit.stages.correct.llm import LLMCorrector
from speechkit.transcript import Segment

KEY = "sk-test-PLANTED-4f1c9e2a7b"


@pytest.fixture
def endpoint(monkeypatch) -> Iterator[Callable[[Callable[[dict, int], Reply]], Endpoint]]:
    monkeypatch.setenv("SPEECHKIT_LLM_API_KEY", KEY)
    monkeypatch.setenv("SPEECHKIT_LLM_MODEL", "test-model")
    started: list[Endpoint] = []

    def start(behaviour: Callable[[dict, int], Reply]) -> Endpoint:
        server = Endpoint(behaviour)
        monkeypatch.setenv("SPEECHKIT_LLM_BASE_URL", server.url)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def corrector(**options) -> LLMCorrector:
    return make_backend("correct", "llm", **{"timeout_s": 2.0, "max_retries": 2, "backoff_s": 0.01, **options})


def compressing(request: dict, call: int) -> Reply:
    """Deletes every fourth word of each turn (and fixes the jargon), as the paper observed."""
    out = []
    for turn in turns_of(request):
        for spoken, canonical in FIXES.items():
            turn = turn.replace(spoken, canonical)
        out.append(" ".join(w for k, w in enumerate(turn.split()) if k % 4 != 3))
    return 200, completion(json.dumps(out)), 0.0


def fixing(request: dict, call: int) -> Reply:
    out = []
    for turn in turns_of(request):
        for spoken, canonical in FIXES.items():
            turn = turn.replace(spoken, canonical)
        out.append(turn)
    return 200, completion("```json\n" + json.dumps(out) + "\n```"), 0.0


def test_compressing_rewrites_are_all_rejected_and_wer_is_unchanged(endpoint, caplog):
    server = endpoint(compressing)
    original = transcript()
    result = corrector().correct(original, VOCAB)
    assert [s.text for s in result.transcript.segments] == TURNS
    assert result.transcript.segments == original.segments
    assert wer(result.transcript.segments) == wer(original.segments) > 0.1
    # what keeping the rewrites would have cost, despite their jargon fixes
    compressed = json.loads(json.loads(compressing({"messages": [{"content": "Turns:\n" + json.dumps(TURNS)}]},
                                                   1)[1])["choices"][0]["message"]["content"])
    assert wer([Segment(0, 1, "S", text=t) for t in compressed]) > wer(original.segments)
    assert result.stats.summary()["rejected_turns"] == {"drops-words": 4}
    assert result.stats.edits == []
    assert server.auth == [f"Bearer {KEY}"]
    assert KEY not in json.dumps(result.stats_dict()) and KEY not in caplog.text


def test_proper_jargon_fixes_are_accepted_with_times(endpoint):
    endpoint(fixing)
    original = transcript()
    result = corrector(batch_turns=3).correct(original, VOCAB)
    assert [s.text for s in result.transcript.segments] == REFERENCE
    assert wer(result.transcript.segments) == 0 < wer(original.segments)
    first, old = result.transcript.segments[0], original.segments[0]
    assert first.words[3].text == "pacs.008"
    assert (first.words[3].start, first.words[3].end) == (old.words[3].start, old.words[7].end)
    assert first.words[:3] == old.words[:3] and first.words[4] == old.words[8]
    assert [(e.segment, e.old, e.new, e.gate) for e in result.stats.edits] == [
        (0, "packs dot zero zero eight", "pacs.008", "llm"), (0, "camp dot zero five four", "camt.054", "llm"),
        (1, "p ninety nine", "P99", "llm"), (2, "pre a", "Priya", "llm")]
    assert result.stats.summary()["turns_changed"] == 3


def test_the_prompt_carries_the_vocabulary_and_the_figure6_constraints(endpoint):
    seen: list[dict] = []

    def record(request: dict, call: int) -> Reply:
        seen.append(request)
        return fixing(request, call)

    endpoint(record)
    corrector(batch_turns=10).correct(transcript(), VOCAB)
    (request,) = seen
    assert request["model"] == "test-model" and request["temperature"] == 0.0
    prompt = request["messages"][-1]["content"]
    for needed in ("pacs.008", "Priya Sharma", "Pri", "Devon Cross", "paraphrase, reorder, or summarize",
                   "JSON array of exactly 4 strings"):
        assert needed in prompt
    assert turns_of(request) == TURNS
    assert "Never insert" not in prompt


def test_the_strict_prompt_adds_the_figure7_guards_and_nothing_else(endpoint):
    """The Gemini stack's stricter variant: the same prompt with its anti-insertion and
    anti-expansion rules after the constraints."""
    seen: list[dict] = []
    endpoint(lambda request, call: (seen.append(request) or fixing(request, call)))
    corrector(batch_turns=10).correct(transcript(), VOCAB)
    corrector(batch_turns=10, strict_prompt=True).correct(transcript(), VOCAB)
    plain, strict = (request["messages"][-1]["content"] for request in seen)
    rules = ("Never insert a term, name or number that the turn does not already say in some form, and never "
             "expand an acronym, abbreviation or short form into a longer one: words that are already correct "
             "stay exactly as they are.")
    assert strict == plain.replace("return it unchanged.\n", f"return it unchanged. {rules}\n")
    assert strict != plain


@pytest.mark.parametrize("reply, reason", [
    (lambda req, n: (200, completion(json.dumps(turns_of(req)[:-1])), 0.0), "length-mismatch"),
    (lambda req, n: (200, completion("Sure! Here are the corrected turns: pacs.008, P99"), 0.0), "invalid-json"),
    (lambda req, n: (200, completion("Here: " + json.dumps(turns_of(req)) + " [sic]"), 0.0), "invalid-json"),
    (lambda req, n: (200, completion(json.dumps({"turns": turns_of(req)})), 0.0), "invalid-json"),
])
def test_a_malformed_answer_rejects_the_whole_batch(endpoint, reply, reason):
    endpoint(reply)
    result = corrector().correct(transcript(), VOCAB)
    assert [s.text for s in result.transcript.segments] == TURNS
    assert result.stats.summary()["rejected_batches"] == {reason: 1}
    assert result.stats.failures == []


def test_rate_limit_then_success_is_retried(endpoint):
    def limited(request: dict, call: int) -> Reply:
        return (429, json.dumps({"error": "slow down"}), 0.0) if call == 1 else fixing(request, call)

    server = endpoint(limited)
    result = corrector().correct(transcript(), VOCAB)
    assert server.calls == 2
    assert result.transcript.segments[1].text.startswith("so the P99 latency")
    assert result.stats.failures == []


def test_server_errors_are_retried_a_bounded_number_of_times_then_counted(endpoint, caplog):
    caplog.set_level(logging.DEBUG)
    # the error body even echoes the key: it must not leak
    server = endpoint(lambda req, n: (500, json.dumps({"error": f"bad key {KEY}"}), 0.0))
    result = corrector(max_retries=2, batch_turns=2).correct(transcript(), VOCAB)
    assert server.calls == 6  # 2 batches x (1 try + 2 retries)
    assert [s.text for s in result.transcript.segments] == TURNS
    assert result.stats.summary()["failures"] == {"http-500": 2}
    assert "after 3 tries" in result.stats.failures[0].detail
    dumped = json.dumps(result.stats_dict()) + caplog.text + repr(make_backend("correct", "llm"))
    assert KEY not in dumped and "PLANTED" not in dumped
    assert "kept as they were" in caplog.text


def test_a_slow_endpoint_times_out_and_keeps_the_turns(endpoint):
    server = endpoint(lambda req, n: fixing(req, n)[:2] + (1.5,))
    result = corrector(timeout_s=0.2, max_retries=1).correct(transcript(), VOCAB)
    assert server.calls == 2  # one try and one retry, each given up after 0.2 s
    assert [s.text for s in result.transcript.segments] == TURNS
    assert result.stats.summary()["failures"] == {"timeout": 1}


def test_no_server_and_client_errors_are_failures_not_crashes(endpoint, monkeypatch):
    monkeypatch.setenv("SPEECHKIT_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    result = corrector(max_retries=1).correct(transcript(), VOCAB)
    assert result.stats.summary()["failures"] == {"connection": 1}
    endpoint(lambda req, n: (401, json.dumps({"error": "no"}), 0.0))
    server_result = corrector().correct(transcript(), VOCAB)
    assert server_result.stats.summary()["failures"] == {"http-401": 1}
    assert [s.text for s in server_result.transcript.segments] == TURNS


def test_configuration_comes_from_the_environment(monkeypatch):
    for name in ("SPEECHKIT_LLM_BASE_URL", "OPENAI_BASE_URL", "SPEECHKIT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    local = make_backend("correct", "llm").client  # nothing given: the local server, started on first use
    assert local.endpoint.local and local.model == "smollm2-135m-instruct" and local.server is None
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1/")
    with pytest.raises(SpeechkitError, match="SPEECHKIT_LLM_MODEL"):  # an endpoint but no model
        make_backend("correct", "llm")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    llm = make_backend("correct", "llm", model="m")
    assert llm.client.base_url == "http://127.0.0.1:1/v1" and llm.client.model == "m"
    assert KEY not in repr(llm) and KEY not in repr(llm.options) and KEY not in repr(llm.client.endpoint)
    message = str(pytest.raises(ValueError, LLMCorrector, api_key=KEY).value)
    assert "api_key: an API key never goes in a recipe" in message and KEY not in message
