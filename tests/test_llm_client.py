"""The LLM client (speechkit.llm) against local stand-in OpenAI-compatible endpoints: which endpoint
and model it resolves, structured output, the response cache, the probe before a run, a local
server restarted once when it dies, and `llm serve` on a port where another server answers."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_helpers import Endpoint, completion, serving

from speechkit.llm import session
from speechkit.llm.client import ClientOptions, LLMClient, LLMUnavailable, RequestFailed
from speechkit.llm.endpoint import resolve_endpoint
from speechkit.llm.server import LocalServer

REPO = Path(__file__).resolve().parents[1]
HELPERS = Path(__file__).resolve().parent / "llm_helpers.py"
ENV = {"SPEECHKIT_LLM_BASE_URL": "http://env-host:8000/v1", "SPEECHKIT_LLM_MODEL": "env-model"}
SCHEMA = {"type": "object", "properties": {"term": {"type": "string", "enum": ["pacs.008", "P99"]}},
          "required": ["term"], "additionalProperties": False}
MESSAGES = [{"role": "user", "content": "Which term is 'p ninety nine'?"}]


def start(served: list[Endpoint], behaviour, models: list[str] | None = None) -> Endpoint:
    server = Endpoint(behaviour, models)
    served.append(server)
    return server


def client(url: str, model: str, **options) -> LLMClient:
    return LLMClient(ClientOptions(base_url=url, model=model, **{"timeout_s": 5.0, "max_retries": 1,
                                                                  "backoff_s": 0.01, **options}))


@pytest.mark.parametrize("given, environ, expected", [
    ({}, {}, (None, "smollm2-135m-instruct", "default", "default")),  # nothing: the local server
    ({}, ENV, ("http://env-host:8000/v1", "env-model", "environment", "environment")),
    ({"model": "recipe-model"}, ENV, ("http://env-host:8000/v1", "recipe-model", "environment", "recipe")),
    ({"base_url": "http://recipe:1/v1/", "model": "m"}, ENV, ("http://recipe:1/v1", "m", "recipe", "recipe")),
    ({}, {"SPEECHKIT_LLM_MODEL": "other.gguf"}, (None, "other.gguf", "default", "environment")),
    ({}, {"OPENAI_BASE_URL": "http://openai-env/v1", "SPEECHKIT_LLM_MODEL": "m"},
     ("http://openai-env/v1", "m", "environment", "environment")),
])
def test_an_option_written_in_the_recipe_wins_over_the_environment_which_wins_over_the_default(given, environ,
                                                                                               expected):
    endpoint = resolve_endpoint(given.get("base_url"), given.get("model"), environ=environ)
    assert (endpoint.base_url, endpoint.model, endpoint.sources["base_url"], endpoint.sources["model"]) == expected


def test_structured_output_is_sent_as_a_json_schema_and_parsed(served):
    seen: list[dict] = []

    def answer(request: dict, call: int) -> tuple[int, str, float]:
        seen.append(request)
        return 200, completion('```json\n{"term": "P99"}\n```'), 0.0

    server = start(served, answer)
    assert client(server.url, "m").complete(MESSAGES, schema=SCHEMA, name="term") == {"term": "P99"}
    (request,) = seen
    assert request["response_format"] == {"type": "json_schema",
                                          "json_schema": {"name": "term", "strict": True, "schema": SCHEMA}}
    assert request["model"] == "m" and request["messages"] == MESSAGES and request["temperature"] == 0.0


def test_the_same_request_is_answered_from_the_cache(served, tmp_path):
    server = start(served, serving(["m"], '{"term": "P99"}'))
    llm = client(server.url, "m")
    with session.opened(tmp_path / "llm") as opened:
        first = llm.complete(MESSAGES, schema=SCHEMA)
        again = llm.complete(MESSAGES, schema=SCHEMA)
        other = llm.complete([{"role": "user", "content": "And 'packs dot zero zero eight'?"}], schema=SCHEMA)
    usage = opened.usage(server.url, "m")
    assert first == again == other == {"term": "P99"}
    assert server.calls == 2  # the repeated request never reached the server
    assert (usage.requests, usage.cache_hits, usage.failed, usage.reported) == (3, 1, 0, {"m"})
    assert len(list((tmp_path / "llm").glob("*.json"))) == 2
    assert not list((tmp_path / "llm").glob(".*.tmp"))  # written atomically, nothing left over


def test_a_model_the_server_does_not_serve_fails_the_probe_with_the_servers_message(served):
    server = start(served, serving(["served-model"]), models=["served-model"])
    assert client(server.url, "served-model").probe().startswith("ok")
    with pytest.raises(LLMUnavailable) as caught:
        client(server.url, "Qwen/Qwen2.5-7B-Instruct").probe()
    assert str(caught.value) == (f"{server.url}: model Qwen/Qwen2.5-7B-Instruct: HTTP 404 Not Found: "
                                 "The model `Qwen/Qwen2.5-7B-Instruct` does not exist.")


def test_an_unreachable_endpoint_fails_the_probe():
    with pytest.raises(LLMUnavailable, match=r"^http://127.0.0.1:9/v1: model m: ConnectionRefusedError.*after 2 tries"):
        client("http://127.0.0.1:9/v1", "m").probe()


def test_a_server_that_lists_no_models_passes_the_probe(served):
    server = start(served, serving(["m"]))  # GET /models: 404
    assert "lists no models" in client(server.url, "m").probe()


class StandIn(LocalServer):
    """A local server whose process is the stand-in endpoint (tests/llm_helpers.py), not llama.cpp."""

    def command(self) -> list[str]:
        return [sys.executable, str(HELPERS), str(self.port), self.model_name]


@pytest.fixture
def stand_in(tmp_path, monkeypatch) -> Iterator[StandIn]:
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the stand-in process imports this checkout
    server = StandIn("stand-in", host="127.0.0.1", log_file=tmp_path / "server.log").start()
    yield server
    server.stop()


def kill(server: LocalServer) -> None:
    server._process.kill()
    server._process.wait(timeout=10)


@pytest.mark.parametrize("policy", ["fail", "allow"])
def test_a_local_server_that_dies_is_restarted_once_then_lost(stand_in, policy):
    llm = LLMClient(ClientOptions(max_retries=0, timeout_s=5.0, failures=policy), environ={}, server=stand_in)
    assert llm.complete(MESSAGES) == {} and llm.base_url == stand_in.base_url
    kill(stand_in)
    assert llm.complete(MESSAGES) == {}  # restarted on the same port, answered
    assert stand_in.restarts == 1 and stand_in.running
    kill(stand_in)
    if policy == "fail":
        with pytest.raises(LLMUnavailable, match=f"^{stand_in.base_url}: model stand-in: the local LLM server "
                                                 "died again after a restart"):
            llm.complete(MESSAGES)
    else:
        with pytest.raises(RequestFailed) as caught:
            llm.complete(MESSAGES)
        assert caught.value.reason == "server-lost"
    assert stand_in.restarts == 1 and not stand_in.running


def test_llm_serve_refuses_a_port_where_another_server_answers(served):
    other = start(served, serving(["smollm2-135m-instruct"]), models=["smollm2-135m-instruct"])
    port = int(other.url.split(":")[-1].split("/")[0])
    result = subprocess.run([sys.executable, "-m", "speechkit", "llm", "serve", "--port", str(port), "--for", "5"],
                            capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 2 and "serving" not in result.stdout
    assert result.stderr.strip().splitlines() == [
        f"speechkit llm: error: 127.0.0.1:{port}: port in use: another server listens there; "
        "choose another port (0: a free one)"]
    assert other.calls == 0
