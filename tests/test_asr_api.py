"""The ``api`` ASR backend (issue 38): an OpenAI-compatible transcription endpoint through the LLM
client, against stand-ins on 127.0.0.1 (llm_helpers.Endpoint) and against ``speechkit serve``.

- what a request holds: the model, the format, word times, the prompt within its budget (none
  to a diarizing model), the enrollments as known speakers;
- long audio cut in requests within the endpoint's limits, in the pauses, stitched back in time;
- the server's speaker labels as the diarization (``transcribed``) and its names as the
  identification (``given``), so the stages after run unchanged;
- a failing, slow or model-less endpoint: the one-line error of every LLM stage;
- the backend against ``speechkit serve`` (in this process, on port 0): a transcript.
"""
from __future__ import annotations

import base64
import io
import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml
from llm_helpers import KEY, Endpoint, leaks
from reliability_helpers import error_line

from speechkit.cascade import Cascade
from speechkit.cli import main
from speechkit.core.audio import SAMPLE_RATE, load_audio, span_blocks
from speechkit.errors import SpeechkitError
from speechkit.io.seglst import read_seglst
from speechkit.llm.client import LLMUnavailable, RequestFailed
from speechkit.meeting_context import Biasing, MeetingContext
from speechkit.metrics.wer import word_error_rate
from speechkit.recipe import load_recipe
from speechkit.serve import ApiServer, TranscriptionService
from speechkit.stages import make_backend
from speechkit.stages.asr.api import answer_segments

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "workspaces" / "demo"
MODEL = "stand-in"
EXCERPT_S = 25.0


def api_recipe(url: str, model: str = MODEL, **asr):
    """The default recipe with the api ASR backend on ``url`` (no retries)."""
    settings = {"asr.backend": "api", "asr.base_url": url, "asr.model": model, "asr.max_retries": 0}
    settings.update({f"asr.{k}": v for k, v in asr.items()})
    return load_recipe("whisper").with_settings(settings)


def verbose(request: dict, call: int):
    """A verbose_json answer: two words in a segment at 0.5-1.5 s of every request's audio."""
    return 200, json.dumps({"text": "hello world", "segments": [{"start": 0.5, "end": 1.5, "text": "hello world"}],
                            "words": [{"word": "hello", "start": 0.5, "end": 0.9},
                                      {"word": "world", "start": 1.0, "end": 1.5}]}), 0.0


@pytest.fixture
def served():
    endpoints: list[Endpoint] = []
    yield endpoints
    for e in endpoints:
        e.close()


@pytest.fixture(scope="module")
def excerpt(tmp_path_factory) -> Path:
    """The first EXCERPT_S seconds of the demo's first meeting, as WAV."""
    path = tmp_path_factory.mktemp("excerpt") / "m01-start.wav"
    sf.write(path, load_audio(DEMO / "meetings" / "m01" / "audio.flac")[:int(EXCERPT_S * SAMPLE_RATE)], SAMPLE_RATE)
    return path


def excerpt_reference() -> str:
    """The reference words said within the excerpt."""
    rows = json.loads((DEMO / "meetings" / "m01" / "reference.json").read_text())
    return " ".join(w["word"] for r in rows for w in r["word_times"] if w["end"] <= EXCERPT_S)


# --- the answers read ---

def test_each_format_becomes_timed_words():
    speech = [(1.0, 3.0)]
    words_given = {"text": "a b", "segments": [{"start": 1.0, "end": 2.0, "text": "a b"}],
                   "words": [{"word": " a", "start": 1.0, "end": 1.4}, {"word": "b,", "start": 1.5, "end": 2.0}]}
    (seg,) = answer_segments(words_given, "verbose_json", speech)
    assert [(w.text, w.start, w.end) for w in seg.words] == [("a", 1.0, 1.4), ("b,", 1.5, 2.0)] and seg.speaker == ""
    no_words = {"text": "a b c d", "segments": [{"start": 0.0, "end": 2.0, "text": "a b"},
                                                 {"start": 4.0, "end": 5.0, "text": "c d"}]}
    first, second = answer_segments(no_words, "verbose_json", speech)
    assert [(w.start, w.end) for w in first.words] == [(0.0, 1.0), (1.0, 2.0)] and second.start == 4.0
    (plain,) = answer_segments({"text": "one two three four"}, "json", [(1.0, 2.0), (2.5, 3.0)])
    assert (plain.start, plain.end, plain.text) == (1.0, 3.0, "one two three four")
    diarized = {"text": "x", "segments": [{"start": 0.0, "end": 1.0, "text": "hi there", "speaker": "A"},
                                         {"start": 1.0, "end": 2.0, "text": "", "speaker": "B"}]}
    (turn,) = answer_segments(diarized, "diarized_json", speech)
    assert turn.speaker == "A" and turn.text == "hi there"
    assert answer_segments({"text": ""}, "json", speech) == []
    for bad in ({"segments": []}, {"text": "x", "segments": [{"start": "soon"}]}, {"segments": [{"text": "x"}]}):
        with pytest.raises(RequestFailed, match="not a"):
            answer_segments(bad, "diarized_json" if "segments" in bad and bad["segments"] else "json", speech)


# --- what the requests hold; long audio cut and stitched ---

def test_long_audio_goes_in_requests_within_the_limits_cut_in_pauses_and_comes_back_in_time(served):
    served.append(Endpoint(verbose, models=[MODEL]))
    sent: list[dict] = []
    behaviour = served[-1].behaviour
    served[-1].behaviour = lambda request, call: (sent.append(request), behaviour(request, call))[1]
    recognizer = make_backend("asr", "api", base_url=served[-1].url, model=MODEL, max_chunk_s=20.0,
                              audio_format="wav")
    audio = np.zeros(70 * SAMPLE_RATE, dtype=np.float32)
    recognition = recognizer.transcribe(audio, speech=[(1.0, 5.0), (8.0, 12.0), (30.0, 35.0), (60.0, 64.0)])
    # 1-12 s fit one request (at most 20 s), 30-35 and 60-64 s one each; each starts 0.5 s before its speech
    assert [s.start for s in recognition] == [1.0, 30.0, 60.0]
    assert [w.start for s in recognition for w in s.words] == [1.0, 1.5, 30.0, 30.5, 60.0, 60.5]
    assert len(sent) == 3 and all(r["model"] == MODEL and r["response_format"] == "verbose_json" for r in sent)
    assert sent[0]["timestamp_granularities[]"] == ["segment", "word"] and "prompt" not in sent[0]
    assert sent[0]["file"] == 44 + 2 * 12 * SAMPLE_RATE  # 0.5-12.5 s as 16-bit WAV
    # a byte limit below one request's audio splits it at its widest pause (5-8 s)
    sent.clear()
    small = make_backend("asr", "api", base_url=served[-1].url, model=MODEL, max_upload_bytes=300_000,
                         audio_format="wav")
    assert [s.start for s in small.transcribe(audio, speech=[(1.0, 5.0), (8.0, 12.0)])] == [1.0, 8.0]
    assert len(sent) == 2 and max(r["file"] for r in sent) <= 300_000
    # times past the request's audio are held within it
    served[-1].behaviour = lambda request, call: (200, json.dumps(
        {"text": "far", "words": [{"word": "far", "start": 3.0, "end": 1e6}]}), 0.0)
    (far,) = small.transcribe(audio, speech=[(1.0, 2.0)])
    assert (far.start, far.end) == (2.5, 2.5)  # the request held 0.5-2.5 s


def test_the_prompt_keeps_the_hot_words_and_the_last_words_and_a_diarizing_model_gets_speakers_instead(
        served, tmp_path):
    served.append(Endpoint(verbose, models=[MODEL]))
    sent: list[dict] = []
    served[-1].behaviour = lambda request, call: (sent.append(request), verbose(request, call))[1]
    biasing = Biasing(prompt="one two three four five six", hotwords=["Kafka", "pacs.008"])
    recognizer = make_backend("asr", "api", base_url=served[-1].url, model=MODEL, prompt_chars=30)
    audio = np.zeros(10 * SAMPLE_RATE, dtype=np.float32)
    recognizer.transcribe(audio, speech=[(1.0, 4.0)], biasing=biasing)
    assert sent[-1]["prompt"] == "Kafka, pacs.008 four five six"  # 29 characters; one word more would pass 30
    clips = {}
    for name, seconds in (("Ann Lee", 3.0), ("Bo Ng", 14.0)):
        clips[name] = [tmp_path / f"{name}.wav"]
        sf.write(clips[name][0], np.full(int(seconds * SAMPLE_RATE), 0.1, dtype=np.float32), SAMPLE_RATE)

    def diarized(request: dict, call: int):
        sent.append(request)
        segment = {"start": 0.5, "end": 1.0, "text": "hi", "speaker": "A"}
        return 200, json.dumps({"text": "hi", "segments": [segment]}), 0.0
    served[-1].behaviour = diarized
    diarizing = make_backend("asr", "api", base_url=served[-1].url, model=MODEL, transcript_format="diarized_json",
                             chunking_strategy="auto", max_known_speakers=1)
    (seg,) = diarizing.transcribe(audio, speech=[(1.0, 4.0)], biasing=biasing, enrollments=clips)
    request = sent[-1]
    assert "prompt" not in request and "timestamp_granularities[]" not in request
    assert request["chunking_strategy"] == "auto" and seg.speaker == "A"
    assert request["known_speaker_names[]"] == ["Ann Lee"]  # max_known_speakers
    (reference,) = request["known_speaker_references[]"]
    head, _, data = reference.partition(",")
    clip, rate = sf.read(io.BytesIO(base64.b64decode(data)))
    assert head == "data:audio/wav;base64" and rate == SAMPLE_RATE and len(clip) == 3 * SAMPLE_RATE


def test_the_servers_speaker_labels_are_the_diarization_and_its_names_the_identification(served, excerpt):
    """A diarizing stand-in labels the first half of each request "Samuel Sokolowski" (an enrolled
    name), the rest "B": the transcript names Samuel, the other speaker gets a label."""
    def diarized(request: dict, call: int):
        names = request.get("known_speaker_names[]", [])
        first = "Samuel Sokolowski" if "Samuel Sokolowski" in names else "A"
        return 200, json.dumps({"text": "x", "segments": [
            {"start": 0.5, "end": 6.0, "text": "morning everyone", "speaker": first},
            {"start": 7.0, "end": 12.0, "text": "sounds good to me", "speaker": "B"},
            {"start": 12.5, "end": 14.0, "text": "great", "speaker": first}]}), 0.0
    served.append(Endpoint(diarized, models=[MODEL]))
    recipe = api_recipe(served[-1].url, transcript_format="diarized_json").with_settings(
        {"diarize.backend": "transcribed", "identify.backend": "given"})
    enrolled = MeetingContext(enrollments={"Samuel Sokolowski": [DEMO / "enrollments" / "p1.flac"],
                                           "Tobias Tanaka": [DEMO / "enrollments" / "p2.flac"]})
    result = Cascade(recipe).run(excerpt, enrolled)
    spoken = [(s.speaker, s.speaker_name, s.text) for s in result.transcript.segments]
    assert spoken == [("SPEAKER_00", "Samuel Sokolowski", "morning everyone"),
                      ("SPEAKER_01", None, "sounds good to me"), ("SPEAKER_00", "Samuel Sokolowski", "great")]
    turns = result.speaker_turns.segments
    at = span_blocks(result.record.result("vad").regions, EXCERPT_S)[0][0]  # where the request's audio began
    assert [(t.speaker, round(t.start - at, 3), round(t.end - at, 3)) for t in turns] == [
        ("SPEAKER_00", 0.5, 6.0), ("SPEAKER_01", 7.0, 12.0), ("SPEAKER_00", 12.5, 14.0)]
    # without enrollments (L1) the labels stay unnamed; with stable labels (L2) they get new labels
    plain = Cascade(recipe).run(excerpt, MeetingContext())
    assert {s.speaker_name for s in plain.transcript.segments} == {None}
    stable = Cascade(recipe).run(excerpt, MeetingContext(stable_labels=True, prior_speakers={"Speaker 1": [1.0]}))
    assert [s.speaker_name for s in stable.transcript.segments] == ["Speaker 2", "Speaker 3", "Speaker 2"]
    # identification by voice has no voice prints to compare after the server's labels
    by_voice = recipe.with_settings({"identify.backend": "cosine"})
    with pytest.raises(SpeechkitError, match=r"no embedder to identify speakers with \(identify: \{backend: given"):
        Cascade(by_voice).run(excerpt, enrolled)


# --- failing, slow and model-less endpoints: the one-line error of every LLM stage ---

def _transcribe(excerpt: Path, tmp_path: Path, url: str, *settings: str) -> int:
    return main(["transcribe", str(excerpt), "--out", str(tmp_path / "out"), "--set", "asr.backend=api",
                 "--set", f"asr.base_url={url}", "--set", f"asr.model={MODEL}", "--set", "asr.max_retries=0",
                 *(x for s in settings for x in ("--set", s))])


def test_a_failing_endpoint_stops_with_one_error_line_and_no_transcript(served, excerpt, tmp_path, capsys,
                                                                         monkeypatch):
    monkeypatch.setenv("SPEECHKIT_LLM_API_KEY", KEY)
    served.append(Endpoint(lambda r, c: (500, json.dumps({"error": {"message": f"boom {KEY}"}}), 0.0), models=[MODEL]))
    assert _transcribe(excerpt, tmp_path, served[-1].url) == 1
    line = error_line(capsys)
    assert line == (f"speechkit transcribe: error: {served[-1].url}: model {MODEL}: HTTP 500 Internal Server Error: "
                    "boom *** (after 1 tries)")
    assert not leaks(line.encode()) and not list(tmp_path.rglob("*.json"))
    assert served[-1].auth[-1] == f"Bearer {KEY}"  # the key went in the header, and nowhere out


def test_a_slow_endpoint_stops_at_the_deadline(served, excerpt, tmp_path, capsys):
    served.append(Endpoint(lambda r, c: (*verbose(r, c)[:2], 3.0), models=[MODEL]))
    assert _transcribe(excerpt, tmp_path, served[-1].url, "asr.timeout_s=1") == 1
    assert error_line(capsys) == (f"speechkit transcribe: error: {served[-1].url}: model {MODEL}: "
                                  "no complete answer within 1 s (after 1 tries)")


def test_the_endpoint_is_probed_before_any_audio_is_sent(served, excerpt, tmp_path, capsys):
    served.append(Endpoint(verbose, models=["whisper-1"]))
    assert _transcribe(excerpt, tmp_path, served[-1].url) == 1
    assert error_line(capsys) == (f"speechkit transcribe: error: {served[-1].url}: model {MODEL}: the server does "
                                  "not serve this model (it lists whisper-1)")
    assert served[-1].calls == 0  # no audio was posted
    with pytest.raises(LLMUnavailable, match="Connection refused"):
        make_backend("asr", "api", base_url="http://127.0.0.1:9/v1", model=MODEL, max_retries=0).transcribe(
            np.zeros(SAMPLE_RATE, dtype=np.float32))


def test_no_endpoint_anywhere_is_one_error_line(excerpt, tmp_path, capsys, monkeypatch):
    for variable in ("SPEECHKIT_ASR_BASE_URL", "SPEECHKIT_LLM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    assert main(["transcribe", str(excerpt), "--out", str(tmp_path / "out"), "--set", "asr.backend=api"]) == 1
    assert error_line(capsys).endswith("no endpoint given: set SPEECHKIT_ASR_BASE_URL or SPEECHKIT_LLM_BASE_URL or "
                                       "OPENAI_BASE_URL or the stage's base_url option")


# --- against speechkit serve ---

@pytest.fixture(scope="module")
def serve_url(tmp_path_factory):
    """``speechkit serve``'s server over the default recipe, in this process on 127.0.0.1, port 0,
    with its request log (the log's path is the server's ``log`` attribute)."""
    folder = tmp_path_factory.mktemp("serve")
    service = TranscriptionService(load_recipe("whisper"), cache_dir=folder / "cache", request_log=folder / "log.jsonl")
    server = ApiServer(service, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server.url, service.request_log
    server.shutdown()
    server.server_close()
    service.close()


@pytest.mark.decodes
def test_the_api_backend_against_speechkit_serve_gives_a_transcript(serve_url, excerpt, tmp_path):
    url, log = serve_url
    assert main(["transcribe", str(excerpt), "--out", str(tmp_path / "out"), "--prompt", "Kafka load test",
                 "--set", "asr.backend=api", "--set", f"asr.base_url={url}", "--set", "asr.model=whisper"]) == 0
    (request,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert request == {"model": "whisper", "response_format": "verbose_json", "temperature": "0.0", "language": "en",
                       "timestamp_granularities[]": ["segment", "word"], "prompt": "Kafka load test",
                       "file": {"bytes": request["file"]["bytes"]}} and request["file"]["bytes"] > 10_000
    (transcript,) = read_seglst(tmp_path / "out" / "m01-start.json").values()
    words = [w for s in transcript.segments for w in s.words]
    assert words and all(0.0 <= w.start <= w.end <= EXCERPT_S for w in words)
    # WER measured 0.443 on the AVX-512, AVX2 and generic paths of one CPU, 0.590 on an AVX2-only CPU: bound 0.7
    assert word_error_rate(excerpt_reference(), transcript.text).ratio.value < 0.7


@pytest.mark.decodes
@pytest.mark.slow  # a whole level-3 run of a demo meeting, its transcription by speechkit serve
def test_a_level_3_run_through_a_diarizing_endpoint_names_corrects_summarizes_and_scores(serve_url, tmp_path):
    url, log = serve_url
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    manifest = yaml.safe_load((ws / "workspace.yaml").read_text())
    manifest["meetings"] = manifest["meetings"][:1]
    manifest["artifacts"] = [a for a in manifest.get("artifacts", []) if a.get("meeting") in (None, "m01")]
    (ws / "workspace.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    recipe = tmp_path / "api-diarize.yaml"
    recipe.write_text(yaml.safe_dump({"name": "api-diarize", "stages": {
        "vad": {"backend": "silero"},
        "asr": {"backend": "api", "base_url": url, "model": "whisper", "transcript_format": "diarized_json"},
        "diarize": {"backend": "transcribed"}, "identify": {"backend": "given"},
        "correct": {"backend": "lexicon"}, "summarize": {"backend": "extractive"}}}))
    log.write_text("")
    out = tmp_path / "run"
    assert main(["run", str(recipe), "--level", "3", "--workspace", str(ws), "--out", str(out)]) == 0
    (request,) = [json.loads(line) for line in log.read_text().splitlines()]
    people = {p["name"] for p in manifest["people"]}
    assert "prompt" not in request and request["response_format"] == "diarized_json"
    assert request["known_speaker_names[]"] and set(request["known_speaker_names[]"]) <= people  # L3: enrollments
    (transcript,) = read_seglst(out / "transcripts" / "m01.json").values()
    named = {s.speaker_name for s in transcript.segments} - {None}
    assert named and named <= people  # the server's names, taken by identification
    run = json.loads((out / "run.json").read_text())
    (endpoint,) = run["llm"]["endpoints"]
    assert (endpoint["base_url"], endpoint["requests"], endpoint["failed"]) == (url, 1, 0)
    assert endpoint["probe"].startswith("ok")
    notes = json.loads((out / "notes" / "m01.json").read_text())
    assert notes["summary"]
    scores = json.loads((out / "scores.json").read_text())
    assert scores["aggregate"]["wer"]["value"] < 0.6  # measured 0.323 (AVX-512), 0.327 (AVX2), 0.346 (generic)
