"""No API key in any output: a whole L3 run with the LLM corrector, grepped for a planted key.

``speechkit -v run`` runs in a subprocess with SPEECHKIT_LLM_API_KEY (and the fallback
OPENAI_API_KEY) set to planted keys, against a local endpoint (127.0.0.1, random port) that
misbehaves in the ways that tempt code to store what it got: an HTTP 500 whose body echoes the
key (retried), a 401 whose reason phrase holds it (counted as a failure), rewritten turns and a
non-JSON answer that contain it (rejected and recorded), and correct answers. Every file under
the run folder (run.json, stage caches, context logs, transcripts, scores, reports) and the
captured stdout/stderr (INFO logs included) must hold no piece of either key.

The run's non-JSON answer quotes the key whole within the 80 characters that the rejection
detail keeps; the last test checks an answer whose key that cut would split (redaction must
happen before the cut).
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from llm_helpers import FALLBACK_KEY, KEY, leaks

from speechkit.recipe import load_recipe
from speechkit.stages.correct import Vocabulary
from speechkit.stages.correct.llm import LLMCorrector
from speechkit.transcript import Segment, Transcript, Word

REPO = Path(__file__).resolve().parents[1]


def _turns(request: dict) -> list[str]:
    return json.loads(request["messages"][-1]["content"].split("Turns:\n", 1)[1])


def _completion(content: str) -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}).encode()


class _Endpoint(BaseHTTPRequestHandler):
    """Cycles through misbehaviours by request number; records the Authorization headers."""

    auth: list[str]
    replies: list

    def do_POST(self) -> None:  # noqa: N802
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.auth.append(self.headers.get("Authorization", ""))
        turns = _turns(request)
        n = len(self.auth) - 1
        kind = self.replies[n % len(self.replies)]
        if kind == "500-echo":  # a proxy that echoes the request headers in its error page
            status, reason, body = 500, None, f"upstream failed for {self.headers['Authorization']}".encode()
        elif kind == "401-reason":
            status, reason, body = 401, f"Unauthorized key {KEY}", b"{}"
        elif kind == "turns-with-key":  # each turn rewritten with the key appended: guards reject it
            status, reason, body = 200, None, _completion(json.dumps([f"{t} {KEY}" for t in turns]))
        elif kind == "prose-with-key":  # not a JSON array: the whole batch is rejected
            status, reason, body = 200, None, _completion(f"{KEY} has no access to this model.")
        elif kind == "prose-splitting-key":  # the same, the key split by the 80-character quote
            status, reason, body = 200, None, _completion(f"Your key {KEY} has no access to this model.")
        else:  # "echo": a correct answer (nothing to fix)
            status, reason, body = 200, None, _completion(json.dumps(turns))
        self.send_response(status, reason)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[tuple[str, type[_Endpoint]]]:
    handler = type("Handler", (_Endpoint,), {"auth": [], "replies": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    server.shutdown()
    server.server_close()


@pytest.mark.decodes
def test_no_output_of_an_l3_run_with_the_llm_corrector_holds_the_key(endpoint, make_real_workspace, tmp_path):
    url, handler = endpoint
    handler.replies = ["500-echo", "echo", "401-reason", "turns-with-key", "prose-with-key", "echo"]
    ws = make_real_workspace(tmp_path / "ws")
    recipe = load_recipe("l3").to_dict()
    recipe["name"] = "l3-llm"
    recipe["stages"]["correct"] = {"backend": "llm", "base_url": url, "model": "test-model", "batch_turns": 2,
                                   "max_retries": 1, "backoff_s": 0.0, "timeout_s": 20.0}
    (tmp_path / "l3-llm.yaml").write_text(yaml.safe_dump(recipe))
    out = tmp_path / "run"
    env = {**os.environ, "SPEECHKIT_LLM_API_KEY": KEY, "OPENAI_API_KEY": FALLBACK_KEY}
    done = subprocess.run([sys.executable, "-m", "speechkit", "-v", "run", str(tmp_path / "l3-llm.yaml"),
                           "--workspace", str(ws), "--out", str(out), "--llm-failures", "allow"],
                          cwd=REPO, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()[-3000:]

    # The key did reach the endpoint, and every misbehaviour was met and recorded.
    assert len(handler.auth) >= len(handler.replies) and set(handler.auth) == {f"Bearer {KEY}"}
    correction = json.loads((out / "run.json").read_text())["stages"]["correct"]
    assert set(correction) == {"m1", "m2"}
    summary = {kind: sum(sum(c[kind].values()) for c in correction.values())
               for kind in ("failures", "rejected_batches", "rejected_turns")}
    assert all(count >= 1 for count in summary.values()), summary
    assert b"llm request failed" in done.stderr  # the INFO logs were captured too

    files = [p for p in out.rglob("*") if p.is_file()]
    assert {"run.json", "scores.json", "report.md", "report.html", "m1.json", "m2.json"} <= {p.name for p in files}
    assert any("cache" in p.parts for p in files) and any("context" in p.parts for p in files)
    found = {str(p.relative_to(out)): leaks(p.read_bytes()) for p in files}
    found["stdout"], found["stderr"] = leaks(done.stdout), leaks(done.stderr)
    assert {where: pieces for where, pieces in found.items() if pieces} == {}


def test_a_key_split_by_the_truncated_answer_quote_is_still_redacted(endpoint, monkeypatch, caplog):
    """A non-JSON answer quoting the key across the 80-character cut of the rejection detail."""
    url, handler = endpoint
    monkeypatch.setenv("SPEECHKIT_LLM_API_KEY", KEY)
    handler.replies = ["prose-splitting-key"]
    prefix = "Your key "  # the key starts at character 9: 71 of its characters fall inside the cut
    assert len(prefix) < 80 < len(prefix) + len(KEY)
    words = [Word(w, float(i), i + 0.5) for i, w in enumerate("the kubernetes cluster is down".split())]
    transcript = Transcript("m1", [Segment.from_words(words, "S0")])
    with caplog.at_level(logging.DEBUG):
        result = LLMCorrector(base_url=url, model="m", max_retries=0).correct(
            transcript, Vocabulary.build(["Kubernetes"]))
    stats = json.dumps(result.stats_dict())
    assert result.stats.rejected_batches and handler.auth == [f"Bearer {KEY}"]
    assert leaks(stats.encode()) == [] and leaks(caplog.text.encode()) == []
