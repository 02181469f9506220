"""The OSynth paper's three systems as shipped recipes (speechkit/recipes/openai-stack.yaml,
gemini-stack.yaml, speechbrain-stack.yaml; tests/test_recipe.py loads them at every level):
`models list` says what the open one needs, and each runs L1-L3 end to end offline on two demo
meetings, against local stand-ins (tests/audio_chat.py) or on test-built weights (tests/model_builders.py), with the
paper's level rules visible in what the stand-in was asked."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from audio_chat import AudioChat, demo_subset

REPO = Path(__file__).resolve().parents[1]
MEETINGS = ("m04", "m06")  # the two shortest, with one person in both
TEXT_MODEL = "text-model"


def speechkit(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(REPO), **env}
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "SPEECHKIT_LLM_API_KEY"):
        environ.pop(name, None)
    return subprocess.run([sys.executable, "-m", "speechkit", *args], cwd=REPO, env=environ,
                          capture_output=True, text=True, timeout=1800)


def levels_written(out: Path, meetings: tuple[str, ...]) -> dict[int, dict]:
    """Per level, its scores.json, after checking the level wrote every meeting's transcript and notes."""
    scores = {}
    for level in (1, 2, 3):
        run = out / f"l{level}"
        for mid in meetings:
            assert (run / "transcripts" / f"{mid}.json").is_file() and (run / "notes" / f"{mid}.json").is_file()
        scores[level] = json.loads((run / "scores.json").read_text())
    assert (out / "comparison.md").is_file()
    return scores


def test_models_list_says_what_the_speechbrain_stack_needs(offline_models):
    done = speechkit("models", "list", env={"SPEECHKIT_MODELS_DIR": str(offline_models), "HF_HUB_OFFLINE": "1",
                                            "HF_HUB_CACHE": str(offline_models.parent / "hf")})
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = [line.split() for line in done.stdout.splitlines() if line.startswith("speechbrain-stack ")]
    needs = ["speechbrain-vad-crdnn", "speechbrain-wav2vec2-commonvoice-14-en", "speechbrain-ecapa-voxceleb"]
    assert row == ["speechbrain-stack", *[f"{n}," for n in needs[:-1]], needs[-1], "no:", "speechkit", "models",
                   "fetch", *needs, "environment"]
    (row,) = [line.split() for line in done.stdout.splitlines() if line.startswith("openai-stack ")]
    assert row == ["openai-stack", "silero-vad", "yes", "gpt-4o-transcribe-diarize,", "gpt-audio,", "gpt-5.5"]


@pytest.mark.slow
def test_the_speechbrain_stack_runs_end_to_end_on_test_built_weights(offline_models, tmp_path):
    from model_builders import build_ecapa, build_speechbrain_ctc, build_speechbrain_vad

    build_speechbrain_vad(offline_models / "speechbrain-vad-crdnn")
    build_speechbrain_ctc(offline_models / "speechbrain-wav2vec2-commonvoice-14-en")
    build_ecapa(offline_models / "speechbrain-ecapa-voxceleb")
    ws = demo_subset(tmp_path / "ws", MEETINGS)
    chat = AudioChat(ws, [TEXT_MODEL])
    try:
        done = speechkit("recipe", "-L", "all", "--asr", "speechbrain-stack", "-w", str(ws), "--out",
                         str(tmp_path / "out"), "--device", "cpu",
                         env={"SPEECHKIT_MODELS_DIR": str(offline_models), "HF_HUB_OFFLINE": "1",
                              "HF_HUB_CACHE": str(offline_models.parent / "hf"),
                              "SPEECHKIT_LLM_BASE_URL": chat.url, "SPEECHKIT_LLM_MODEL": TEXT_MODEL})
    finally:
        chat.close()
    assert done.returncode == 0, done.stderr[-3000:]
    scores = levels_written(tmp_path / "out", MEETINGS)
    assert all(scores[level]["aggregate"]["wer"]["value"] > 0 for level in (1, 2, 3))  # random weights: words
    run = json.loads((tmp_path / "out" / "l3" / "run.json").read_text())
    assert run["recipe"]["stages"]["diarize"]["clustering"] == "nme-sc"
    # the level rules, in what the text model was asked (vocabulary correction at L3 only: none
    # from the system's own words) and in the CONTEXT blocks of the notes requests
    assert_context_levels(chat.log)
    notes = [i for i, e in enumerate(chat.log) if e["kind"] == "notes"]
    assert {e["kind"] for e in chat.log[:notes[3]]} == {"notes"} and "correct" in chat.kinds()[notes[3]:]


def assert_context_levels(log: list[dict]) -> None:
    """The notes requests of L1-L3 over :data:`MEETINGS`, in order: the CONTEXT block empty at L1
    (and for the first meeting at L2, which has no earlier one), the system's own earlier notes
    at L2, the roster and the rest of the workspace at L3."""
    notes = [e for e in log if e["kind"] == "notes"]
    contexts = [e["texts"][-1].split("CONTEXT:\n", 1)[1].split("\n\nTRANSCRIPT", 1)[0] for e in notes]
    assert len(contexts) == 3 * len(MEETINGS)
    assert contexts[:3] == ["(none)"] * 3
    assert contexts[3].startswith("Earlier meetings (the notes taken then):\nm04: ") and "People:" not in contexts[3]
    assert all("People:\n" in c and "This meeting:\n" in c for c in contexts[4:])


def named_speakers(out: Path, level: int, mid: str) -> set[str | None]:
    rows = json.loads((out / f"l{level}" / "transcripts" / f"{mid}.json").read_text())
    return {row.get("speaker_name") for row in rows}


@pytest.mark.slow
def test_the_gemini_stack_runs_end_to_end_against_a_local_audio_chat_stand_in(tmp_path):
    ws = demo_subset(tmp_path / "ws", MEETINGS)
    chat = AudioChat(ws, ["gemini-3-flash", "gemini-3.1-pro-preview"])
    try:
        done = speechkit("recipe", "-L", "all", "--asr", "gemini-stack", "-w", str(ws), "--out", str(tmp_path / "out"),
                         env={"SPEECHKIT_LLM_BASE_URL": chat.url})
    finally:
        chat.close()
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out"
    scores = levels_written(out, MEETINGS)
    assert scores[1]["aggregate"]["wer"]["value"] < 0.2  # the stand-in transcribes from the reference
    log = chat.log
    # one transcription request per meeting (its result is the stage cache's at L2 and L3), with
    # the audio and no vocabulary; gemini-3-flash transcribes, corrects and writes the notes
    transcribe = [e for e in log if e["kind"] == "transcribe"]
    assert len(transcribe) == len(MEETINGS) and all(e["audio"] == 1 for e in transcribe)
    assert not any("may occur" in t for e in transcribe for t in e["texts"])
    assert {e["model"] for e in log if e["kind"] != "identify"} == {"gemini-3-flash"}
    # identification only at L3 (after the last L2 notes), by gemini-3.1-pro-preview, one request
    # per speaker of each meeting, each with every invitee's enrollment; the L3 names are right
    notes = [i for i, e in enumerate(log) if e["kind"] == "notes"]
    identify = [i for i, e in enumerate(log) if e["kind"] == "identify"]
    assert identify and min(identify) > notes[3] and {log[i]["model"] for i in identify} == {"gemini-3.1-pro-preview"}
    manifest = yaml.safe_load((ws / "workspace.yaml").read_text())
    people = {p["id"]: p["name"] for p in manifest["people"]}
    invited = {m["id"]: [people[p] for p in m["attendees"]] for m in manifest["meetings"]}
    assert len(identify) == sum(len(v) for v in invited.values())  # one cluster per voice (from the reference)
    for mid in MEETINGS:
        # the stand-in names the reference speaker whose turn starts where the target clip does
        assert named_speakers(out, 3, mid) == set(invited[mid]), mid
        assert not named_speakers(out, 1, mid) - {None}
    # correction only at L3 (the vocabulary), with the stricter prompt; the CONTEXT blocks by level
    assert "correct" in {log[i]["kind"] for i in range(notes[3], len(log))}
    assert all("Never insert a term" in e["texts"][-1] for e in log if e["kind"] == "correct")
    assert "correct" not in {log[i]["kind"] for i in range(notes[3])}
    assert_context_levels(log)


@pytest.fixture
def transcription_server(tmp_path):
    """``speechkit serve`` over the shipped whisper recipe, answering to gpt-4o-transcribe-diarize
    on a free loopback port, logging every request's form (``--request-log``); its URL and log."""
    log = tmp_path / "requests.jsonl"
    server = subprocess.Popen([sys.executable, "-m", "speechkit", "serve", "--recipe", "whisper", "--port", "0",
                               "--served-model-name", "gpt-4o-transcribe-diarize", "--device", "cpu",
                               "--request-log", str(log)],
                              cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url.rstrip("/"), log
    finally:
        server.terminate()
        server.wait(timeout=60)


@pytest.mark.decodes
@pytest.mark.slow
def test_the_openai_stack_runs_end_to_end_against_speechkit_serve_and_an_audio_chat_stand_in(
        transcription_server, tmp_path):
    url, request_log = transcription_server
    ws = demo_subset(tmp_path / "ws", MEETINGS)
    chat = AudioChat(ws, ["gpt-audio", "gpt-5.5"])
    try:
        done = speechkit("recipe", "-L", "all", "--asr", "openai-stack", "-w", str(ws), "--out", str(tmp_path / "out"),
                         env={"SPEECHKIT_ASR_BASE_URL": url, "SPEECHKIT_LLM_BASE_URL": chat.url})
    finally:
        chat.close()
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out"
    levels_written(out, MEETINGS)
    # the diarizing endpoint: diarized_json, never a prompt, never the enrollments; asked again
    # only where the context that keys the ASR changed (L3)
    forms = [json.loads(line) for line in request_log.read_text().splitlines()]
    assert len(forms) == 2 * len(MEETINGS)
    for form in forms:
        assert form["model"] == "gpt-4o-transcribe-diarize" and form["response_format"] == "diarized_json"
        assert form["file"]["bytes"] > 0 and "prompt" not in form and "known_speaker_names[]" not in form
    # gpt-audio identifies, at L3 only, every speaker the endpoint labelled; gpt-5.5 corrects (at
    # L3 only) and writes the notes; the CONTEXT blocks by level
    log = chat.log
    notes = [i for i, e in enumerate(log) if e["kind"] == "notes"]
    identify = [i for i, e in enumerate(log) if e["kind"] == "identify"]
    assert identify and min(identify) > notes[3] and {log[i]["model"] for i in identify} == {"gpt-audio"}
    assert all(log[i]["response_format"] is None and log[i]["max_completion_tokens"] == 1024 for i in identify)
    assert all(e["max_completion_tokens"] and e["max_tokens"] is None for e in log if e["kind"] == "notes")
    assert {e["model"] for e in log if e["kind"] != "identify"} == {"gpt-5.5"}
    assert "correct" not in {log[i]["kind"] for i in range(notes[3])}
    corrections = [e for e in log[notes[3]:] if e["kind"] == "correct"]
    assert corrections and not any("Never insert a term" in e["texts"][-1] for e in corrections)  # Figure 6's
    assert_context_levels(log)
    run = json.loads((out / "l3" / "run.json").read_text())
    assert {(e["base_url"], e["model"]) for e in run["llm"]["endpoints"]} == {
        (url, "gpt-4o-transcribe-diarize"), (chat.url, "gpt-audio"), (chat.url, "gpt-5.5")}


@pytest.mark.parametrize(("reply", "settings", "problem"), [
    ((500, json.dumps({"error": {"message": "internal error"}}), 0.0), (),
     "http-500: HTTP 500 Internal Server Error: internal error (after 1 tries)"),
    ((200, "{}", 3.0), ("--set", "asr.timeout_s=1"), "timeout: no complete answer within 1 s (after 1 tries)")])
def test_a_failing_or_slow_chat_transcription_endpoint_stops_the_run_in_one_line(tmp_path, reply, settings, problem):
    from llm_helpers import Endpoint

    ws = demo_subset(tmp_path / "ws", MEETINGS[1:])
    server = Endpoint(lambda request, call: reply, ["gemini-3-flash", "gemini-3.1-pro-preview"])
    try:
        done = speechkit("recipe", "-L", "1", "--asr", "gemini-stack", "-w", str(ws), "--out", str(tmp_path / "out"),
                         "--set", "asr.max_retries=0", *settings, env={"SPEECHKIT_LLM_BASE_URL": server.url})
    finally:
        server.close()
    assert done.returncode == 1 and "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"speechkit recipe: error: {server.url}: model gemini-3-flash: the transcription of a ")
    assert line.endswith(f" s block: {problem}")
    assert not (tmp_path / "out" / "transcripts").exists() and not list((tmp_path / "out" / "cache").glob("asr/*"))
