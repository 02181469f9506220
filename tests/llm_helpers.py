"""Helpers of the LLM corrector tests (test_correct_llm, test_llm_constrained): a transcript with
spoken jargon, its reference, the fixes, the WER against it, and a local chat completions endpoint."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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

Reply = tuple[int, str, float]  # HTTP status, body, delay (s)


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
    """A local chat completions server answering with ``behaviour(request, call number)``."""

    def __init__(self, behaviour: Callable[[dict, int], Reply]) -> None:
        self.behaviour = behaviour
        self.calls = 0
        self.auth: list[str | None] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.calls += 1
                endpoint.auth.append(self.headers.get("Authorization"))
                status, text, delay = endpoint.behaviour(body, endpoint.calls)
                time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(text.encode())))
                    self.end_headers()
                    self.wfile.write(text.encode())
                except OSError:
                    pass  # the client gave up (timeout)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def wer(segments: list[Segment]) -> float:
    results = [word_error_rate(ref, seg.text) for ref, seg in zip(REFERENCE, segments)]
    return sum(r.errors for r in results) / sum(r.reference_words for r in results)
