"""The local LLM server (llama.cpp's, through llama-cpp-python) on the packaged SmolLM2 model:
served on 127.0.0.1 only, bounded in time, stopped by its owner or with it; and the LLM recipe
end to end, offline."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from speechkit.io.manifest import load_workspace
from speechkit.llm.client import reply_limit
from speechkit.llm.server import LocalServer, free_port
from speechkit.llm.transport import exchange
from speechkit.recipe import load_recipe
from speechkit.runner import run_workspace

REPO = Path(__file__).resolve().parents[1]
SPEECHKIT = [sys.executable, "-m", "speechkit"]


def answers(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def wait_until(condition, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def chat(base_url: str, model: str, schema: dict) -> dict:
    body = {"model": model, "temperature": 0, "max_tokens": 64,
            "response_format": {"type": "json_object", "schema": schema},
            "messages": [{"role": "user", "content": 'Vocabulary: pacs.008\n1. "we moved the [packs dot '
                          'zero zero eight] mapping" options: "packs dot zero zero eight" | "pacs.008"\n'
                          "Return a JSON object mapping the item number to the chosen option."}]}
    reply = exchange("POST", f"{base_url}/chat/completions", json.dumps(body).encode(),
                     {"Content-Type": "application/json"}, 60, reply_limit(64))
    assert reply.status == 200, reply.body[:300]
    return json.loads(json.loads(reply.body)["choices"][0]["message"]["content"])


def test_the_packaged_model_is_served_with_schema_constrained_answers():
    schema = {"type": "object",
              "properties": {"1": {"type": "string", "enum": ["packs dot zero zero eight", "pacs.008"]}},
              "required": ["1"], "additionalProperties": False}
    with LocalServer("smollm2-135m-instruct") as server:
        assert server.host == "127.0.0.1" and server.base_url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=5) as response:
            listed = [m["id"] for m in json.loads(response.read())["data"]]
        assert listed == ["smollm2-135m-instruct"]
        answer = chat(server.base_url, server.model_name, schema)
        assert set(answer) == {"1"} and answer["1"] in schema["properties"]["1"]["enum"]
        log_file = server.log_file
    assert not server.running and not answers(server.base_url)
    assert not log_file.exists()  # its own log goes with a clean stop


def test_cli_serves_until_interrupted(tmp_path):
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # A background job of a non-interactive shell (CI) inherits SIGINT ignored, and Python then
    # installs no KeyboardInterrupt handler: give the command the default disposition, as a terminal would.
    process = subprocess.Popen([*SPEECHKIT, "llm", "serve", "--port", str(port), "--for", "120"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        first = process.stdout.readline()  # printed once the server answers
        assert first.startswith(f"serving smollm2-135m-instruct at {base_url}"), process.stderr.read()
        assert answers(base_url)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=90)  # the server gets 10 s to stop, then is killed
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert not answers(base_url)  # the server went with the command


def test_the_server_dies_with_its_owner(tmp_path):
    """A run killed outright leaves no server behind."""
    port = free_port()
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from pathlib import Path
        from speechkit.llm.server import LocalServer
        LocalServer("smollm2-135m-instruct", port={port}, log_file=Path({str(tmp_path / "server.log")!r})).start()
        print("up", flush=True)
        time.sleep(120)
    """)], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        assert owner.stdout.readline().strip() == "up"
        assert answers(base_url)
        owner.kill()
        owner.wait(timeout=10)
        assert wait_until(lambda: not answers(base_url), 20)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()


def test_missing_model_is_one_line_and_exit_2(tmp_path):
    result = subprocess.run([*SPEECHKIT, "llm", "serve", str(tmp_path / "nope.gguf"), "--port", "0"],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"speechkit llm: error: {tmp_path / 'nope.gguf'}: no such model file or folder"]


@pytest.fixture(scope="module")
def llm_runs(make_real_workspace, tmp_path_factory):
    """The whisper-llm recipe at L3 on the real-speech workspace, without and with its correction
    (the stages before correction come from the cache of the first run)."""
    ws = load_workspace(make_real_workspace(tmp_path_factory.mktemp("ws")))
    out = tmp_path_factory.mktemp("run")
    recipe = load_recipe("whisper-llm", level=3).with_overrides(device="cpu")
    # correction only: the LLM notes on the packaged model are test_summarize_local_llm's
    recipe = replace(recipe, stages={k: v for k, v in recipe.stages.items() if k != "summarize"})
    uncorrected = replace(recipe, stages={k: v for k, v in recipe.stages.items() if k != "correct"})
    return {"uncorrected": run_workspace(uncorrected, ws, out, progress=False),
            "corrected": run_workspace(recipe, ws, out, progress=False)}


@pytest.mark.decodes
def test_the_llm_recipe_runs_offline_on_the_packaged_model(llm_runs):
    corrected = llm_runs["corrected"]
    (called,) = json.loads((corrected.out / "run.json").read_text())["llm"]["endpoints"]
    assert called["local_model"] == "smollm2-135m-instruct" and called["sources"] == {"base_url": "default",
                                                                                     "model": "default"}
    assert called["base_url"].startswith("http://127.0.0.1:") and called["probe"].startswith("ok")
    assert called["failed"] == 0
    stats = [r.summaries.get("correct", {}) for r in corrected.results.values()]
    assert stats and all(s["backend"] == "llm" for s in stats)
    assert all(not s["failures"] and not s["rejected_batches"] for s in stats)  # every answer parsed
    before, after = (llm_runs[k].scores["aggregate"]["wer"]["value"] for k in ("uncorrected", "corrected"))
    assert after <= before
