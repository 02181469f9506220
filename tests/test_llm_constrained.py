"""The LLM corrector's constrained ``choose`` mode against scripted endpoints, and its request
deadline against a server that trickles its answer."""
from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from llm_helpers import FIXES, REFERENCE, TURNS, VOCAB, Endpoint, Reply, completion, transcript, wer

from speechkit.llm.client import LLMClient
from speechkit.recipe import load_recipe
from speechkit.stages import make_backend


def items_of(request: dict) -> dict[str, list[str]]:
    """Item number -> options, read back from the answer schema the request carries."""
    schema = request["response_format"]["json_schema"]["schema"]
    return {n: prop["enum"] for n, prop in schema["properties"].items()}


def choosing(request: dict, call: int) -> Reply:
    """Picks the vocabulary option where the span is a known misrecognition, else the original."""
    answer = {}
    for n, options in items_of(request).items():
        wanted = FIXES.get(options[0])
        answer[n] = next((o for o in options[1:] if wanted and wanted in o), options[0])
    return 200, completion(json.dumps(answer)), 0.0


@pytest.fixture
def served(monkeypatch) -> Iterator[list[Endpoint]]:
    started: list[Endpoint] = []
    yield started
    for server in started:
        server.close()


def chooser(served: list[Endpoint], behaviour, **options):
    """A ``choose`` corrector on a scripted endpoint; by default the LLM decides every span."""
    server = Endpoint(behaviour)
    served.append(server)
    return server, make_backend("correct", "llm", **{"base_url": server.url, "model": "m", "mode": "choose",
                                            "timeout_s": 5.0, "max_retries": 0, "ask": "all", **options})


def test_choices_are_constrained_by_a_schema_and_applied_with_times(served):
    seen: list[dict] = []

    def record(request: dict, call: int) -> Reply:
        seen.append(request)
        return choosing(request, call)

    _, llm = chooser(served, record)
    original = transcript()
    result = llm.correct(original, VOCAB)
    assert [s.text for s in result.transcript.segments] == REFERENCE
    assert wer(result.transcript.segments) == 0 < wer(original.segments)
    assert [(e.old, e.new, e.gate) for e in result.stats.edits] == [
        ("packs dot zero zero eight", "pacs.008", "llm"), ("camp dot zero five four", "camt.054", "llm"),
        ("p ninety nine", "P99", "llm"), ("pre a", "Priya", "llm")]
    first, old = result.transcript.segments[0], original.segments[0]
    assert (first.words[3].start, first.words[3].end) == (old.words[3].start, old.words[7].end)
    (request,) = seen  # four spans, one request (batch_turns 20)
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["1", "2", "3", "4"] and schema["additionalProperties"] is False
    assert items_of(request)["1"] == ["packs dot zero zero eight", "pacs.008"]
    prompt = request["messages"][-1]["content"]
    assert "[packs dot zero zero eight]" in prompt and "pacs.008" in prompt


def test_keeping_the_original_and_answers_outside_the_options_change_nothing(served):
    def stubborn(request: dict, call: int) -> Reply:
        answer = {n: (options[0] if n == "1" else "something else entirely")
                  for n, options in items_of(request).items()}
        return 200, completion(json.dumps(answer)), 0.0

    _, llm = chooser(served, stubborn)
    result = llm.correct(transcript(), VOCAB)
    assert [s.text for s in result.transcript.segments] == TURNS
    reasons = result.stats.summary()["rejected_candidates"]
    assert reasons == {"llm-kept-original": 1, "llm-invalid-choice": 3}
    assert result.stats.edits == []


def test_a_choice_the_guards_refuse_keeps_the_turn(served):
    """The guards stay: with a similarity bar only an exact spoken form reaches ("p ninety nine"),
    the other chosen turns are refused whole."""
    _, llm = chooser(served, choosing, guards={"min_similarity": 0.999})
    result = llm.correct(transcript(), VOCAB)
    assert [s.text for s in result.transcript.segments] == [
        TURNS[0], "so the P99 latency was like one twenty milliseconds on the new cluster", TURNS[2], TURNS[3]]
    assert [r.segment for r in result.stats.rejected_turns] == [0, 2]
    assert {r.reason for r in result.stats.rejected_turns} <= {"changes-outside-vocabulary", "drops-words"}


@pytest.mark.parametrize("answer, reason", [("no JSON here", "invalid-json"), ('["pacs.008"]', "invalid-json")])
def test_an_answer_that_is_no_object_rejects_the_batch(served, answer, reason):
    _, llm = chooser(served, lambda req, n: (200, completion(answer), 0.0), batch_turns=3)
    result = llm.correct(transcript(), VOCAB)
    assert [s.text for s in result.transcript.segments] == TURNS
    assert result.stats.summary()["rejected_batches"] == {reason: 2}


def test_json_object_format_for_llama_cpp_python_servers(served):
    seen: list[dict] = []

    def record(request: dict, call: int) -> Reply:
        seen.append(request)
        schema = request["response_format"]["schema"]
        return 200, completion(json.dumps({n: p["enum"][0] for n, p in schema["properties"].items()})), 0.0

    _, llm = chooser(served, record, response_format="json_object")
    llm.correct(transcript(), VOCAB)
    assert seen[0]["response_format"]["type"] == "json_object"


class Trickler:
    """A server on 127.0.0.1 that answers every connection with a byte every ``every`` s, for at
    most ``limit`` s: after the headers (``body``) or within them."""

    def __init__(self, every: float, limit: float, in_headers: bool) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.every, self.limit, self.in_headers = every, limit, in_headers
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        end = time.monotonic() + self.limit
        while not self.stop.is_set() and time.monotonic() < end:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._trickle, args=(conn, end), daemon=True).start()

    def _trickle(self, conn: socket.socket, end: float) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n"
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(head if self.in_headers else head + b"\r\n")
                while not self.stop.is_set() and time.monotonic() < end:
                    conn.sendall(b"X-Slow: 1\r\n" if self.in_headers else b" ")
                    time.sleep(self.every)
            except OSError:
                pass  # the client hung up: what the deadline is for

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
        self.thread.join(timeout=5)


@pytest.mark.parametrize("in_headers", [False, True], ids=["body", "headers"])
def test_timeout_bounds_the_whole_request_against_a_trickling_server(in_headers):
    """A server sending a byte every 0.5 s never trips a per-read timeout; the deadline of 2 s
    still ends the request (the margin is wide: under 10 s, where no deadline took 30 s)."""
    server = Trickler(every=0.5, limit=30.0, in_headers=in_headers)
    try:
        llm = make_backend("correct", "llm", base_url=server.url, model="m", timeout_s=2.0, max_retries=0)
        started = time.monotonic()
        result = llm.correct(transcript(), VOCAB)
        elapsed = time.monotonic() - started
    finally:
        server.close()
    assert elapsed < 10
    assert [s.text for s in result.transcript.segments] == TURNS
    assert result.stats.summary()["failures"] == {"timeout": 1}
    assert re.search(r"within 2 s", result.stats.failures[0].detail)


@pytest.mark.parametrize("name", ["whisper-llm", "ctc-llm"])
def test_llm_recipes_select_the_constrained_local_corrector(name):
    recipe = load_recipe(name, level=3)
    correct = recipe.stages["correct"]
    assert correct.backend == "llm" and correct.options.mode == "choose"
    # neither endpoint nor model written: the environment decides, else the packaged local model
    assert correct.options.model is None and correct.options.base_url is None
    endpoint = LLMClient(correct.options, environ={}).endpoint
    assert endpoint.local and endpoint.model == "smollm2-135m-instruct"
    assert LLMClient(correct.options, environ={"SPEECHKIT_LLM_BASE_URL": "http://h:1/v1",
                                               "SPEECHKIT_LLM_MODEL": "Q"}).endpoint.model == "Q"


def test_judged_asks_only_the_lexicons_judgement_calls(served):
    """``ask: judged``: exact spoken forms apply unasked, the confidence-gated match is the LLM's
    to decide, and what the lexicon's gates reject is never offered."""
    from speechkit.stages.correct import Vocabulary
    from speechkit.transcript import Segment, Transcript, Word
    from speechkit.workspace import Person

    vocab = Vocabulary.build(["P99", "Kafka", "Kubernetes"], [Person("p1", "Priya Sharma")])
    turns = [("so the p ninety nine latency is fine", 0.9),  # a spoken form: certain
             ("we run cafe ka in production", 0.3),          # a strong match, the ASR unsure: judged
             ("we run cubernetes and the pre a talk", 0.95)]  # the ASR sure, a weak match: rejected
    segments = [Segment.from_words([Word(w, i * 10 + k * 0.5, i * 10 + k * 0.5 + 0.4, conf)
                                    for k, w in enumerate(text.split())], "S0")
                for i, (text, conf) in enumerate(turns)]
    seen: list[dict] = []

    def record(request: dict, call: int) -> Reply:
        seen.append(request)
        return 200, completion(json.dumps({n: o[-1] for n, o in items_of(request).items()})), 0.0

    _, llm = chooser(served, record, ask="judged")
    result = llm.correct(Transcript("m", segments), vocab)
    (request,) = seen
    assert [o[0] for o in items_of(request).values()] == ["cafe ka"]
    assert [s.text for s in result.transcript.segments] == [
        "so the P99 latency is fine", "we run Kafka in production", turns[2][0]]
    assert [(e.new, e.gate) for e in result.stats.edits] == [("P99", "spoken-form"), ("Kafka", "llm")]
