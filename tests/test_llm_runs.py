"""LLM runs that a user can trust: `speechkit run` with the LLM corrector against a local stand-in
endpoint, the endpoint and model given by the environment. run.json records what was called; a
model the server does not serve fails the run before any audio is read, with one line naming it;
with `--llm-failures allow` the run goes on and report.md's first line states the failed share;
failed requests above the recipe's share fail the run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from llm_helpers import Endpoint, completion, serving, turns_of

from speechkit.recipe import load_recipe

REPO = Path(__file__).resolve().parents[1]
UNSERVED = "Qwen/Qwen2.5-7B-Instruct"


@pytest.fixture(scope="module")
def setup(make_real_workspace, tmp_path_factory) -> dict[str, Path]:
    """The real-speech workspace, an L3 recipe whose corrector is the LLM (endpoint and model
    left to the environment) and a stage cache the runs share (VAD, ASR, diarization run once)."""
    root = tmp_path_factory.mktemp("llm-runs")
    recipe = load_recipe("l3").to_dict()
    recipe["name"] = "l3-llm"
    recipe["stages"]["correct"] = {"backend": "llm", "mode": "rewrite", "batch_turns": 4, "max_retries": 0,
                                   "timeout_s": 20.0}
    (root / "l3-llm.yaml").write_text(yaml.safe_dump(recipe))
    return {"ws": make_real_workspace(root / "ws"), "recipe": root / "l3-llm.yaml", "cache": root / "cache"}


@pytest.fixture
def endpoint():
    started: list[Endpoint] = []

    def start(behaviour, models: list[str] | None) -> Endpoint:
        started.append(Endpoint(behaviour, models))
        return started[-1]

    yield start
    for server in started:
        server.close()


def run(setup: dict[str, Path], out: Path, url: str, model: str, *extra: str,
        cache: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "SPEECHKIT_LLM_BASE_URL": url, "SPEECHKIT_LLM_MODEL": model}
    env.pop("OPENAI_BASE_URL", None)
    return subprocess.run([sys.executable, "-m", "speechkit", "run", str(setup["recipe"]), "--workspace",
                           str(setup["ws"]), "--out", str(out), "--cache-dir", str(cache or setup["cache"]), *extra],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=900)


def echoing(request: dict, call: int) -> tuple[int, str, float]:
    """Every turn back as it was, from a server that names its model more precisely than asked."""
    reply = json.loads(completion(json.dumps(turns_of(request))))
    reply["model"] = "test-model-q4_k_m"
    return 200, json.dumps(reply), 0.0


@pytest.mark.decodes
def test_run_json_records_the_endpoint_and_the_model_the_server_reported(setup, endpoint, tmp_path):
    server = endpoint(echoing, models=["test-model"])
    done = run(setup, tmp_path / "run", server.url, "test-model")
    assert done.returncode == 0, done.stderr[-3000:]
    llm = json.loads((tmp_path / "run" / "run.json").read_text())["llm"]
    (called,) = llm["endpoints"]
    assert server.calls > 0 and called["requests"] == server.calls
    assert {k: called[k] for k in ("base_url", "model", "sources", "models_reported", "failed", "local_model")} == {
        "base_url": server.url, "model": "test-model", "sources": {"base_url": "environment", "model": "environment"},
        "models_reported": ["test-model-q4_k_m"], "failed": 0, "local_model": None}
    assert called["probe"] == "ok: the server lists the model" and llm["policy"] == ["fail"]
    report = (tmp_path / "run" / "report.md").read_text()
    assert report.startswith("# ")  # no failure notice
    # the report names the system's endpoints
    assert (f"Endpoints: `test-model` at {server.url} ({called['requests']} requests, "
            f"{called['cache_hits']} answered from the cache).") in report.splitlines()


def test_a_model_the_server_does_not_serve_fails_the_run_before_any_audio_is_read(setup, endpoint, tmp_path):
    server = endpoint(serving(["served-model"]), models=["served-model"])
    done = run(setup, tmp_path / "run", server.url, UNSERVED, cache=tmp_path / "cache")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"speechkit run: error: {server.url}: model {UNSERVED}: HTTP 404 Not Found: "
        f"The model `{UNSERVED}` does not exist."]
    assert not (tmp_path / "run" / "transcripts").exists() and not (tmp_path / "cache" / "vad").exists()


@pytest.mark.decodes  # its transcripts come from the shared cache a decode filled
def test_allowed_failures_run_on_and_the_report_says_what_share_failed(setup, endpoint, tmp_path):
    server = endpoint(serving(["served-model"]), models=["served-model"])
    done = run(setup, tmp_path / "run", server.url, UNSERVED, "--llm-failures", "allow")
    assert done.returncode == 0, done.stderr[-3000:]
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    (called,) = run_json["llm"]["endpoints"]
    assert called["requests"] > 0 and called["failed"] == called["requests"] == server.calls - 1  # - the probe's
    assert called["failures"] == {"http-404": called["failed"]} and called["probe"].startswith("failed: ")
    assert run_json["recipe"]["stages"]["correct"]["failures"] == "allow"
    first = (tmp_path / "run" / "report.md").read_text().splitlines()[0]
    assert first.startswith(f"**LLM failures allowed: {called['failed']} of {called['requests']} LLM requests "
                            f"(100%) to {server.url} (model {UNSERVED}) failed, and the check before the run failed")


@pytest.mark.decodes  # its transcripts come from the shared cache a decode filled
def test_failed_requests_above_the_recipes_share_fail_the_run(setup, endpoint, tmp_path):
    server = endpoint(lambda request, call: (500, json.dumps({"error": {"message": "out of memory"}}), 0.0),
                      models=["test-model"])
    done = run(setup, tmp_path / "run", server.url, "test-model")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()  # the warnings of the failed batches, then the error
    line = lines[-1]
    assert "Traceback" not in done.stderr and [x for x in lines if "error:" in x] == [line]
    assert line.startswith(f"speechkit run: error: {server.url}: model test-model: {server.calls} of "
                           f"{server.calls} requests failed (100%; the recipe allows 0%); last: HTTP 500 ")
    assert "out of memory" in line and not (tmp_path / "run" / "report.md").exists()
