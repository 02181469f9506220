"""Helpers of the LLM tests (test_correct_llm, test_llm_constrained, test_llm_client, test_llm_runs,
test_reliability_secrets, test_reliability_llm, test_judge, test_judge_items): a transcript with
spoken jargon, its reference, the fixes, the WER against it, a local stand-in OpenAI-compatible
endpoint (also runnable as a server process: ``python llm_helpers.py PORT MODEL``, which answers
every chat request with ``{}``; a multipart form comes to a behaviour as its fields,
:func:`form_fields`), a stand-in judge that grades what it is shown (:func:`grading`), and planted
API keys with the search for any piece of them."""
from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from speechkit.io.multipart import parse_form
from speechkit.metrics.wer import word_error_rate
from speechkit.stages.correct import Vocabulary
from speechkit.transcript import Segment, Transcript, Word
from speechkit.workspace import Person

VOCAB = Vocabulary.build(["pacs.008", "camt.054", "P99", "Kubernetes"],
                         [Person("p1", "Priya Sharma", ("Pri",)), Person("p2", "Devon Cross")])
TURNS = [
    "we moved the packs dot zero zero eight mapping to the camp dot zero five four flow today",
    "so the p ninety nine latency was like one twenty milliseconds on the new cluster",
    "pre a said the locking change fixed the race conditions in the registry last week",
    "let us keep an eye on the numbers and check again before we ship on friday",
]
REFERENCE = [
    "we moved the pacs.008 mapping to the camt.054 flow today",
    "so the P99 latency was like one twenty milliseconds on the new cluster",
    "Priya said the locking change fixed the race conditions in the registry last week",
    "let us keep an eye on the numbers and check again before we ship on friday",
]
FIXES = {"packs dot zero zero eight": "pacs.008", "camp dot zero five four": "camt.054",
         "p ninety nine": "P99", "pre a": "Priya"}

Reply = tuple[int, "str | Iterable[bytes]", float]  # HTTP status, body (or blocks streamed), delay (s)

KEY = f"sk-planted-{uuid.uuid4().hex}{uuid.uuid4().hex}"
FALLBACK_KEY = f"sk-fallback-{uuid.uuid4().hex}"
FRAGMENT = 12  # no run of this many characters of a key may appear anywhere


def fragments(key: str) -> set[bytes]:
    return {key[i:i + FRAGMENT].encode() for i in range(len(key) - FRAGMENT + 1)}


def leaks(blob: bytes) -> list[str]:
    """The pieces of the planted keys found in ``blob``."""
    return sorted(f.decode() for f in fragments(KEY) | fragments(FALLBACK_KEY) if f in blob)


def transcript() -> Transcript:
    segments = []
    for i, text in enumerate(TURNS):
        t0 = 20.0 * i
        words = [Word(w, round(t0 + 0.4 * k, 2), round(t0 + 0.4 * k + 0.3, 2), 0.5)
                 for k, w in enumerate(text.split())]
        segments.append(Segment.from_words(words, f"S{i % 2}"))
    return Transcript("m1", segments)


def completion(content: str) -> str:
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})


def turns_of(request: dict) -> list[str]:
    user = request["messages"][-1]["content"]
    return json.loads(user.split("Turns:\n", 1)[1])


class Endpoint:
    """A local chat completions server answering with ``behaviour(request, call number)`` (a body
    that is not a string is streamed block by block without a length, until the client stops
    reading; ``sent`` counts the bytes written); ``GET /v1/models`` lists ``models``, or what
    ``models(request headers)`` gives (None: 404, a server that lists none)."""

    def __init__(self, behaviour: Callable[[dict, int], Reply],
                 models: list[str] | Callable[[dict], list[str]] | None = None, port: int = 0) -> None:
        self.behaviour = behaviour
        self.models = models
        self.calls = 0
        self.sent = 0
        self.auth: list[str | None] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                listed = endpoint.models is not None and self.path.rstrip("/").endswith("/models")
                models = endpoint.models(dict(self.headers)) if callable(endpoint.models) else endpoint.models
                text = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in models or []]})
                self.send_response(200 if listed else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(text.encode()) if listed else 0))
                self.end_headers()
                if listed:
                    self.wfile.write(text.encode())

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                kind = self.headers.get("Content-Type", "")
                body = form_fields(raw, kind) if kind.startswith("multipart/") else json.loads(raw)
                endpoint.calls += 1
                endpoint.auth.append(self.headers.get("Authorization"))
                status, text, delay = endpoint.behaviour(body, endpoint.calls)
                time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    if isinstance(text, str):
                        self.send_header("Content-Length", str(len(text.encode())))
                    self.end_headers()
                    for block in [text.encode()] if isinstance(text, str) else text:
                        self.wfile.write(block)
                        endpoint.sent += len(block)
                except OSError:
                    pass  # the client gave up (timeout, or an answer longer than it reads)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def form_fields(body: bytes, content_type: str) -> dict:
    """A multipart form's text fields (a repeated one as a list of its values) and each file's size."""
    fields: dict = {}
    for part in parse_form(body, content_type):
        value = len(part.value) if part.filename is not None else part.text
        if part.name.endswith("[]"):
            fields.setdefault(part.name, []).append(value)
        else:
            fields[part.name] = value
    return fields


REPORTED = "judge-model-q8_0"  # what the stand-in judge says answered: not the name requests give


def section(prompt: str, name: str) -> str:
    """The line after the heading ``name SUMMARY`` (``name`` alone when it ends in ``ITEM``) of a judge prompt."""
    heading = name if name.endswith("ITEM") else f"{name} SUMMARY"
    return prompt.split(heading, 1)[1].split("\n", 2)[1]


def item_grade(gold: str, system: str) -> int:
    """The stand-in's description quality: 5 for the gold item's words, 3 for some of them and no
    other, else 1."""
    def words(text: str) -> set[str]:
        return set(text.split(" (due:")[0].lower().split()) - {"a", "an", "the", "for", "to", "of"}
    return 5 if words(system) == words(gold) else 3 if words(system) < words(gold) else 1


def unmatched_grade(excerpt: str, system: str) -> int:
    """The stand-in's description quality of an item no gold one matched: 5 when the transcript
    excerpt holds all its words, 3 for some, else 1."""
    said = set(excerpt.lower().split())
    wanted = set(system.split(" (due:")[0].lower().split()) - {"a", "an", "the", "for", "to", "of"}
    found = len(wanted & said)
    return 5 if found == len(wanted) else 3 if found else 1


def grading(request: dict, call: int) -> tuple[int, str, float]:
    """A stand-in judge that reads what it is shown. A summary: 5 on faithfulness and recall for a
    system summary that is the reference's, else 1; 4 and 3 on the rest. An action item:
    :func:`item_grade` of the system item against the gold one, or :func:`unmatched_grade` against
    the excerpt when it matched none. The model it reports is :data:`REPORTED`."""
    prompt = request["messages"][-1]["content"]
    if "No action item the meeting agreed was matched" in prompt:
        excerpt = prompt.split("\n", 1)[1].split("\n\nNo action item", 1)[0]
        scores = {"description_quality": unmatched_grade(excerpt, section(prompt, "SYSTEM ACTION ITEM"))}
    elif "GOLD ACTION ITEM" in prompt:
        scores = {"description_quality": item_grade(section(prompt, "GOLD ACTION ITEM"),
                                                    section(prompt, "SYSTEM ACTION ITEM"))}
    else:
        same = section(prompt, "SYSTEM") == section(prompt, "REFERENCE")
        scores = {"faithfulness": 5 if same else 1, "coherence": 4, "recall": 5 if same else 1,
                  "precision": 3, "conciseness": 4}
    reply = json.loads(completion(json.dumps(scores)))
    reply["model"] = REPORTED
    return 200, json.dumps(reply), 0.0


def grading_judge() -> Endpoint:
    """A stand-in judge serving ``stand-in``: each request kept in ``requests``, answered by ``grade``
    (:func:`grading`; a test may put another behaviour there)."""
    requests: list[dict] = []

    def behaviour(request: dict, call: int) -> Reply:
        requests.append(request)
        return server.grade(request, call)
    server = Endpoint(behaviour, models=["stand-in"])
    server.grade, server.requests = grading, requests
    return server


def wer(segments: list[Segment]) -> float:
    results = [word_error_rate(ref, seg.text) for ref, seg in zip(REFERENCE, segments)]
    return sum(r.errors for r in results) / sum(r.reference_words for r in results)


def serving(models: list[str], content: str = "{}") -> Callable[[dict, int], Reply]:
    """A behaviour: ``content`` for a model in ``models`` (reported as the model), else HTTP 404 with
    the message vLLM gives."""
    def answer(request: dict, call: int) -> Reply:
        if request.get("model") not in models:
            return 404, json.dumps({"object": "error", "type": "NotFoundError", "code": 404,
                                    "message": f"The model `{request.get('model')}` does not exist."}), 0.0
        reply = json.loads(completion(content))
        reply["model"] = request["model"]
        return 200, json.dumps(reply), 0.0
    return answer


if __name__ == "__main__":  # a stand-in server process: python llm_helpers.py PORT MODEL
    import sys
    port, model = int(sys.argv[1]), sys.argv[2]
    Endpoint(serving([model]), models=[model], port=port)
    threading.Event().wait()
