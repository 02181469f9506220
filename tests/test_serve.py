"""`speechkit serve` (issue 38): an OpenAI-compatible transcription server over a recipe, started
as the command on 127.0.0.1 port 0, answering the official ``openai`` client.

- the first line printed is the URL it listens on; ``/v1/models`` lists the recipe;
- a demo meeting in every response format, each consistent with the others and with the
  reference (slow: the cascade runs on the whole meeting once; the stage cache serves the rest);
- known speakers (names and data-URL clips) name the speakers of ``diarized_json``;
- bounded and refused requests: a model it does not serve, a bad format, no file, audio that is
  none, a body over the limit or without a length, a path it does not serve; none names a file
  of the server's.
"""
from __future__ import annotations

import base64
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import openai
import pytest

from speechkit.core.audio import audio_duration
from speechkit.io.multipart import Part, encode_form
from speechkit.metrics.wer import word_error_rate
from speechkit.recipe import load_recipe
from speechkit.serve import ApiServer, ServeOptions, TranscriptionService

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "workspaces" / "demo"
MEETING = DEMO / "meetings" / "m01" / "audio.flac"
PEOPLE = {"p1": "Samuel Sokolowski", "p2": "Tobias Tanaka", "p3": "Priya Whitfield", "p4": "Renata Hargrove",
          "p5": "Adriana Quintero", "p6": "Helena Lindqvist"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``speechkit serve --port 0`` with a stage cache: its URL (the first line it printed)."""
    cache = tmp_path_factory.mktemp("serve-cache")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-m", "speechkit", "serve", "--port", "0", "--cache-dir", str(cache),
                                "--max-upload-mb", "8"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", url), (url, process.stderr.read() if not url else "")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stdout.close()
        process.stderr.close()


def client(url: str):
    return openai.OpenAI(base_url=url, api_key="not-needed", max_retries=0, timeout=600)


def reference_text() -> str:
    rows = json.loads((DEMO / "meetings" / "m01" / "reference.json").read_text())
    return " ".join(r["words"] for r in sorted(rows, key=lambda r: r["start_time"]))


def transcribe(url: str, fmt: str, **extra):
    with MEETING.open("rb") as audio:
        return client(url).audio.transcriptions.create(model="whisper", file=audio, response_format=fmt, **extra)


def cues(subtitles: str) -> list[tuple[str, str]]:
    """(start, end) of each cue of an SRT or WebVTT text."""
    return re.findall(r"^(\d\d:\d\d:\d\d[,.]\d\d\d) --> (\d\d:\d\d:\d\d[,.]\d\d\d)$", subtitles, re.M)


@pytest.mark.decodes
@pytest.mark.slow  # the cascade on a whole meeting (about 100 s of audio), then five answers from the cache
def test_the_openai_client_transcribes_a_demo_meeting_in_every_format(server):
    assert [m.id for m in client(server).models.list()] == ["whisper"]
    plain = transcribe(server, "json").text
    # WER measured on one CPU's AVX-512, AVX2 and generic paths: 0.327, 0.332, 0.350
    assert word_error_rate(reference_text(), plain).ratio.value < 0.5
    assert transcribe(server, "text").strip() == plain
    verbose = transcribe(server, "verbose_json", timestamp_granularities=["word", "segment"])
    assert verbose.text == plain and verbose.language == "en"
    assert verbose.duration == pytest.approx(audio_duration(MEETING), abs=0.01)
    segments = verbose.segments
    assert " ".join(s.text for s in segments) == plain
    assert all(0 <= s.start < s.end <= verbose.duration for s in segments)
    words = verbose.words
    assert len(words) == len(plain.split()) and [w.start for w in words] == sorted(w.start for w in words)
    srt, vtt = transcribe(server, "srt"), transcribe(server, "vtt")
    assert vtt.startswith("WEBVTT") and len(cues(srt)) == len(cues(vtt)) == len(segments)
    assert [a.replace(",", ".") for a, _ in cues(srt)] == [a for a, _ in cues(vtt)]
    diarized = transcribe(server, "diarized_json")
    assert [s.text for s in diarized.segments] == [s.text for s in segments]
    assert len({s.speaker for s in diarized.segments}) >= 2  # the demo has several voices
    assert all(s.speaker in srt for s in diarized.segments)  # the SRT cues lead with the same speakers


@pytest.mark.decodes  # the stage cache serves the earlier test's decode: a cold cache decodes here
@pytest.mark.slow  # the cascade with six enrollments on a whole meeting
def test_known_speakers_name_the_speakers_of_diarized_json(server):
    clips = [(DEMO / "enrollments" / f"{p}.flac").read_bytes() for p in PEOPLE]
    references = [f"data:audio/flac;base64,{base64.b64encode(clip).decode()}" for clip in clips]
    diarized = transcribe(server, "diarized_json", known_speaker_names=list(PEOPLE.values()),
                          known_speaker_references=references)
    speakers = {s.speaker for s in diarized.segments}
    named = speakers & set(PEOPLE.values())
    assert len(named) >= 2, speakers  # identification named voices by the clips sent


def post(url: str, body: bytes, headers: dict[str, str], path: str = "/v1/audio/transcriptions"
         ) -> tuple[int, dict]:
    """A raw request to the server: the status and the JSON body."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def form(*parts: Part) -> tuple[bytes, dict[str, str]]:
    body, content_type = encode_form(parts)
    return body, {"Content-Type": content_type, "Content-Length": str(len(body))}


def test_requests_it_cannot_answer_are_refused_as_openai_refuses_them(server):
    with pytest.raises(openai.NotFoundError, match="The model 'whisper-1' does not exist; this server serves whisper"):
        with MEETING.open("rb") as audio:
            client(server).audio.transcriptions.create(model="whisper-1", file=audio)
    with pytest.raises(openai.BadRequestError, match="response_format must be one of"):
        transcribe(server, "xml")
    audio_part = Part("file", MEETING.read_bytes()[:1000], "../../etc/passwd", "audio/flac")
    status, answer = post(server, *form(Part("model", b"whisper")))
    assert status == 400 and answer["error"]["param"] == "file"
    noise = Part("file", os.urandom(3000), "x.wav", "audio/wav")
    status, answer = post(server, *form(Part("model", b"whisper"), noise))
    assert status == 400 and answer["error"]["param"] == "file" and "/tmp" not in answer["error"]["message"]
    status, answer = post(server, *form(Part("model", b"whisper"), audio_part,
                                        Part("known_speaker_names[]", b"Ann"),
                                        Part("known_speaker_references[]", b"/etc/passwd")))
    assert status == 400 and "data URLs" in answer["error"]["message"]
    status, answer = post(server, *form(Part("model", b"whisper"), audio_part, Part("known_speaker_names[]", b"Ann")))
    assert status == 400 and answer["error"]["param"] == "known_speaker_names[]"
    status, answer = post(server, b"x", {"Content-Type": "multipart/form-data; boundary=b",
                                         "Content-Length": str(9 << 20)})
    assert status == 413 and "over the server's limit of 8,388,608" in answer["error"]["message"]
    status, answer = post(server, b"--b\r\n", {"Content-Type": "multipart/form-data; boundary=b",
                                               "Content-Length": "5"})
    assert status == 400 and "the request's form" in answer["error"]["message"]
    status, answer = post(server, b"{}", {"Content-Type": "application/json", "Content-Length": "2"})
    assert status == 400 and "multipart/form-data" in answer["error"]["message"]
    status, answer = post(server, b"", {"Content-Length": "0"}, path="/v1/files")
    assert status == 404 and answer["error"]["code"] == "not_found"


@pytest.mark.decodes
def test_a_request_past_its_deadlines_is_answered_408_or_504_and_the_server_goes_on(realdata):
    """In this process: a body that stops coming (408 at ``upload_timeout_s``), and a transcription
    longer than ``request_timeout_s`` (504). The cascade the 504 left running finishes before the
    test ends (a decode running on would be counted against the tests after it)."""
    service = TranscriptionService(load_recipe("whisper"), options=ServeOptions(upload_timeout_s=1.0,
                                                                                request_timeout_s=0.2))
    server = ApiServer(service, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        host, port = server.server_address[:2]
        with socket.create_connection((host, port), timeout=30) as stalled:
            stalled.sendall(b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n"
                            b"Content-Type: multipart/form-data; boundary=b\r\n\r\n--b\r\n")
            started = time.monotonic()
            chunks = []  # the answer closes the connection; its head and body may come apart
            while chunk := stalled.recv(65536):
                chunks.append(chunk)
            answer = b"".join(chunks).decode()
        assert answer.startswith("HTTP/1.1 408") and "not received within 1 s" in answer
        assert time.monotonic() - started < 10
        status, error = post(server.url, *form(Part("model", b"whisper"),
                                               Part("file", (realdata / "faster-whisper" / "jfk.flac").read_bytes(),
                                                    "jfk.flac", "audio/flac")))
        assert status == 504 and error["error"]["code"] == "timeout"
        assert post(server.url, *form(Part("model", b"nope")))[0] == 404  # still answering
    finally:
        server.shutdown()
        server.server_close()
        service.close(wait=True)
