"""An OpenAI-compatible transcription server over a recipe (``speechkit serve``).

It answers what OpenAI's audio API and the official ``openai`` client ask:

- ``GET /v1/models``: the names the recipe is served under (by default the recipe's name);
- ``POST /v1/audio/transcriptions`` (a ``multipart/form-data`` form): ``file`` (the audio, any
  format speechkit reads), ``model`` (one of the served names), ``response_format`` (``json``,
  ``text``, ``verbose_json``, ``srt``, ``vtt``, ``diarized_json``), ``prompt`` (the ASR's
  prompt), ``timestamp_granularities[]`` (``word`` adds the words to ``verbose_json``),
  ``known_speaker_names[]`` with ``known_speaker_references[]`` (data URLs of a clip of each
  person's voice): those persons are the meeting's enrollments, and identification names their
  speech. ``temperature`` (a number from 0 to 1) is checked; it, ``language`` and
  ``chunking_strategy`` are left to the recipe.

Each request runs the recipe's cascade (:class:`~speechkit.cascade.Cascade`; with a stage cache
folder, results of audio sent before are reused) on the uploaded audio, with the context of
level 1 plus what the request gives (its prompt, its known speakers). One cascade runs at a
time; at most :attr:`ServeOptions.max_waiting` requests are in flight (receiving their body,
waiting, running), so at most that many bodies are held at once; more are answered 503. Every
input is bounded (:class:`ServeOptions`: the body's size, the time to receive a request from its
first byte, the time to answer, the form's parts) and nothing of a request names a file: the
upload and the references go to a temporary folder of the server's (inside its cache folder
when it has one), are read as audio before the cascade is asked, and are removed after the
answer. Errors, those of HTTP itself included (a malformed request line, a method it does not
serve), are answered as OpenAI's are (``{"error": {"message", "type", "param", "code"}}``), a
problem with the audio naming no path.

With a request log (``speechkit serve --request-log FILE``) each transcription request's form
is appended to FILE as one JSON line, before it is answered: its text fields (a repeated field
as a list; a known speaker's reference as its length) and each file's size, which shows what a
system under test sent at each level (a prompt, known speakers).
"""
from __future__ import annotations

import base64
import binascii
import io
import json
import logging
import math
import re
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from speechkit.cache import StageCache
from speechkit.core.audio import audio_duration
from speechkit.core.options import StageOptions, bounded
from speechkit.errors import AudioError, FormatError, SpeechkitError
from speechkit.io.multipart import FormReader, Part
from speechkit.io.subtitles import render_srt, render_vtt
from speechkit.meeting_context import Biasing, MeetingContext
from speechkit.recipe import Recipe
from speechkit.transcript import Transcript

log = logging.getLogger(__name__)

#: The ``response_format`` values answered.
RESPONSE_FORMATS = ("json", "text", "verbose_json", "srt", "vtt", "diarized_json")
#: Audio types by their first bytes, and by the type a data URL or file part names.
_MAGIC = ((b"RIFF", ".wav"), (b"fLaC", ".flac"), (b"OggS", ".ogg"), (b"ID3", ".mp3"), (b"\x1aE\xdf\xa3", ".webm"))
_SUFFIXES = {"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/flac": ".flac",
             "audio/x-flac": ".flac", "audio/ogg": ".ogg", "audio/mpeg": ".mp3", "audio/mp3": ".mp3",
             "audio/mp4": ".m4a", "audio/m4a": ".m4a", "audio/x-m4a": ".m4a", "audio/webm": ".webm"}


@dataclass(frozen=True)
class ServeOptions(StageOptions):
    """Bounds of ``speechkit serve``.

    ``max_upload_bytes``: most bytes of a request's body (the audio and the reference clips
    together). ``upload_timeout_s``: most seconds to receive a request, its line, headers and
    body, from its first byte (a client that trickles it in is answered 408). ``request_timeout_s``:
    most seconds from a request's arrival to its answer, its wait for the cascade included (a
    cascade still running then finishes before the next one starts). ``max_waiting``: most
    transcription requests in flight at once (receiving their body, waiting for the cascade or
    running it); more are answered 503 and their bodies dropped as they come, so that memory
    holds at most ``max_waiting`` bodies. ``max_known_speakers``: most known speakers a request
    may name.
    """

    max_upload_bytes: int = bounded(64 << 20, ge=1 << 10, le=4 << 30)
    upload_timeout_s: float = bounded(120.0, gt=0, le=3600)
    request_timeout_s: float = bounded(600.0, gt=0, le=86_400)
    max_waiting: int = bounded(8, ge=1, le=1000)
    max_known_speakers: int = bounded(16, ge=0, le=100)


class ApiError(Exception):
    """A request the server refuses or cannot answer: HTTP ``status``, ``message``, the form
    field at fault (``param``) and OpenAI's error ``kind`` (``invalid_request_error``, ...)."""

    def __init__(self, status: int, message: str, param: str | None = None,
                 kind: str = "invalid_request_error", code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.kind, self.code = status, message, param, kind, code

    def body(self) -> dict[str, Any]:
        """The answer's JSON body."""
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class Answer:
    """An answer: HTTP status, content type and body."""

    status: int
    content_type: str
    body: bytes

    @classmethod
    def json(cls, data: Any, status: int = 200) -> Answer:
        """``data`` as a JSON answer."""
        return cls(status, "application/json", json.dumps(data, ensure_ascii=False).encode())

    @classmethod
    def text(cls, text: str) -> Answer:
        """``text`` as a plain-text answer."""
        return cls(200, "text/plain; charset=utf-8", text.encode())


class TranscriptionService:
    """A recipe's cascade answering transcription requests, one at a time."""

    def __init__(self, recipe: Recipe, names: tuple[str, ...] = (), options: ServeOptions | None = None,
                 cache_dir: Path | None = None, request_log: Path | None = None) -> None:
        from speechkit.cascade import Cascade

        self.recipe = recipe
        self.request_log = request_log
        self._log_lock = threading.Lock()
        self.cache = StageCache(cache_dir)
        #: Where the requests' temporary folders go: inside the cache folder (None: the system's).
        self.scratch = None if cache_dir is None else Path(cache_dir) / ".uploads"
        if self.scratch is not None:
            self.scratch.mkdir(parents=True, exist_ok=True)
        self.names = names or (recipe.name,)
        self.options = options or ServeOptions()
        self.cascade = Cascade(recipe)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="speechkit-serve")
        self._waiting = threading.BoundedSemaphore(self.options.max_waiting)

    def close(self, wait: bool = False) -> None:
        """Stop taking work: a running cascade finishes (``wait``: before this returns)."""
        self._worker.shutdown(wait=wait, cancel_futures=True)

    def models(self) -> Answer:
        """``GET /v1/models``."""
        return Answer.json({"object": "list", "data": [{"id": n, "object": "model", "created": 0,
                                                        "owned_by": "speechkit"} for n in self.names]})

    def admit(self) -> AbstractContextManager:
        """A place among the transcription requests in flight, held from before its body is read
        to its answer (``with service.admit(): ...``); raises :class:`ApiError` 503 when there is none."""
        if not self._waiting.acquire(blocking=False):
            raise ApiError(503, f"the server is busy: {self.options.max_waiting} requests are in flight "
                                "(max_waiting); try again later", kind="server_error", code="busy")
        place = ExitStack()
        place.callback(self._waiting.release)
        return place

    def transcribe(self, parts: list[Part], arrived: float) -> Answer:
        """``POST /v1/audio/transcriptions``: the answer to a parsed form (``arrived``: the
        request's ``time.monotonic()``, from which its deadline runs), given within a place of
        :meth:`admit`. Raises :class:`ApiError`."""
        self._log(parts)
        form = _Form(parts)
        model = form.text("model", required=True)
        if model not in self.names:
            raise ApiError(404, f"The model {model[:100]!r} does not exist; this server serves "
                                f"{', '.join(self.names)}", "model", code="model_not_found")
        fmt = form.text("response_format") or "json"
        if fmt not in RESPONSE_FORMATS:
            raise ApiError(400, f"response_format must be one of {', '.join(RESPONSE_FORMATS)}, got {fmt[:40]!r}",
                           "response_format")
        _check_temperature(form.text("temperature"))
        granularities = form.texts("timestamp_granularities[]")
        if set(granularities) - {"word", "segment"}:
            raise ApiError(400, "timestamp_granularities[] takes word and segment", "timestamp_granularities[]")
        audio = form.file("file")
        names = form.texts("known_speaker_names[]")
        references = form.texts("known_speaker_references[]")
        if len(names) != len(references) or len(set(names)) != len(names) or not all(n.strip() for n in names):
            raise ApiError(400, "known_speaker_names[] and known_speaker_references[] must pair distinct, "
                                "non-empty names with one reference each", "known_speaker_names[]")
        if len(names) > self.options.max_known_speakers:
            raise ApiError(400, f"at most {self.options.max_known_speakers} known speakers", "known_speaker_names[]")
        prompt = form.text("prompt") or None
        with tempfile.TemporaryDirectory(prefix="upload-", dir=self.scratch) as tmp:
            folder = Path(tmp)
            upload = folder / f"upload{_suffix(audio.value, audio.content_type, audio.filename)}"
            upload.write_bytes(audio.value)
            duration = _seconds(upload, "the uploaded file", "file")
            enrollments = {name: [_reference(folder, i, ref)] for i, (name, ref) in enumerate(zip(names, references))}
            context = MeetingContext(biasing=Biasing(prompt=prompt), enrollments=enrollments)
            job = self._worker.submit(self._run, upload, context)
            left = self.options.request_timeout_s - (time.monotonic() - arrived)
            try:
                transcript = job.result(timeout=max(left, 0.0))
            except FutureTimeout:
                job.cancel()
                raise ApiError(504, f"no transcript within {self.options.request_timeout_s:g} s "
                                    "(the server's request_timeout_s)", kind="server_error",
                               code="timeout") from None
            except SpeechkitError as e:
                raise ApiError(400, str(e).replace(str(folder) + "/", ""), "file") from None
        return render(transcript, fmt, duration, "word" in granularities, self.language)

    def _log(self, parts: list[Part]) -> None:
        """Append the request's form to the request log (if any) as one JSON line."""
        if self.request_log is None:
            return
        entry: dict[str, Any] = {}
        for p in parts:
            value: Any = ({"bytes": len(p.value)} if p.filename is not None or p.name == "known_speaker_references[]"
                          else p.text)
            if p.name.endswith("[]"):
                entry.setdefault(p.name, []).append(value)
            else:
                entry[p.name] = value
        with self._log_lock, self.request_log.open("a", encoding="utf-8") as log_file:
            log_file.write(json.dumps(entry, ensure_ascii=False) + "\n")

    @property
    def language(self) -> str:
        """The language the recipe's stages are told (their ``language`` option; ``en`` when none is)."""
        told = (getattr(spec.options, "language", None) for spec in self.recipe.stages.values())
        return next((code for code in told if isinstance(code, str) and code), "en")

    def _run(self, audio: Path, context: MeetingContext) -> Transcript:
        """The cascade's transcript of ``audio`` (on the worker thread)."""
        return self.cascade.run(audio, context, cache=self.cache, session_id="upload").transcript


class _Form:
    """A request's form fields by name."""

    def __init__(self, parts: list[Part]) -> None:
        self.parts = parts

    def texts(self, name: str) -> list[str]:
        """The values of the text field ``name``, in order."""
        return [p.text for p in self.parts if p.name == name and p.filename is None]

    def text(self, name: str, required: bool = False) -> str | None:
        """The value of the text field ``name`` given at most once (None: not given)."""
        values = self.texts(name)
        if len(values) > 1:
            raise ApiError(400, f"{name} is given {len(values)} times", name)
        if required and not values:
            raise ApiError(400, f"you must provide a {name} parameter", name)
        return values[0] if values else None

    def file(self, name: str) -> Part:
        """The one non-empty file given in the field ``name``."""
        files = [p for p in self.parts if p.name == name]
        if len(files) != 1 or files[0].filename is None or not files[0].value:
            given = "an empty one" if len(files) == 1 and files[0].filename is not None else len(files)
            raise ApiError(400, f"expected one non-empty file in the {name} field, got {given}", name)
        return files[0]


def _check_temperature(value: str | None) -> None:
    """Refuse a ``temperature`` that is no number from 0 to 1 (OpenAI's range)."""
    if value is None:
        return
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not 0 <= number <= 1:
        raise ApiError(400, f"temperature must be a number from 0 to 1, got {value[:40]!r}", "temperature")


def _seconds(path: Path, what: str, param: str) -> float:
    """The seconds of audio in ``path`` (read with the audio loader, before the cascade is asked);
    audio that is none, empty or cut short is answered 400, naming ``what``, not the path."""
    try:
        return audio_duration(path)
    except AudioError as e:
        raise ApiError(400, f"{what}: {e.problem.replace(str(path.parent), '')}", param) from None


def _suffix(data: bytes, content_type: str | None, filename: str | None) -> str:
    """The file suffix audio reading goes by: from the first bytes, else the type or the file
    name's suffix where it is a known audio type, else none (ffmpeg then tells what it is)."""
    for magic, suffix in _MAGIC:
        if data.startswith(magic):
            return suffix
    if data[4:8] == b"ftyp":
        return ".m4a"
    named = Path(filename or "").suffix.lower()
    return _SUFFIXES.get(content_type or "", named if named in _SUFFIXES.values() else ".audio")


def _reference(folder: Path, index: int, url: str) -> Path:
    """A known speaker's reference clip (a ``data:`` URL of base64 audio) written into ``folder``."""
    head, sep, payload = url.partition(",")
    if not (head.startswith("data:") and head.endswith(";base64") and sep):
        raise ApiError(400, "known_speaker_references[] takes data URLs (data:audio/wav;base64,...)",
                       "known_speaker_references[]")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(400, "a known speaker reference is not valid base64", "known_speaker_references[]") from None
    path = folder / f"reference-{index}{_suffix(data, head[5:-7], None)}"
    path.write_bytes(data)
    _seconds(path, f"known speaker reference {index + 1}", "known_speaker_references[]")
    return path


def render(transcript: Transcript, fmt: str, duration: float, words: bool = False, language: str = "en") -> Answer:
    """``transcript`` answered in ``fmt`` (one of :data:`RESPONSE_FORMATS`); ``words``: the words
    with their times in ``verbose_json``; ``duration``: the audio's seconds."""
    segments = [s for s in transcript.segments if s.text.strip()]
    text = " ".join(s.text.strip() for s in segments)
    if fmt == "text":
        return Answer.text(text + "\n")
    if fmt == "srt":
        return Answer.text(render_srt(transcript))
    if fmt == "vtt":
        return Answer.text(render_vtt(transcript))
    usage = {"type": "duration", "seconds": math.ceil(duration)}
    if fmt == "json":
        return Answer.json({"text": text, "usage": usage})
    if fmt == "diarized_json":
        return Answer.json({"task": "transcribe", "duration": round(duration, 3), "text": text, "usage": usage,
                            "segments": [{"type": "transcript.text.segment", "id": f"seg_{i}",
                                          "start": round(s.start, 3), "end": round(s.end, 3), "text": s.text,
                                          "speaker": s.speaker_name or s.speaker} for i, s in enumerate(segments)]})
    out: dict[str, Any] = {
        "task": "transcribe", "language": language, "duration": round(duration, 3), "text": text, "usage": usage,
        "segments": [{"id": i, "seek": 0, "start": round(s.start, 3), "end": round(s.end, 3), "text": s.text,
                      "tokens": [], "temperature": 0.0, "avg_logprob": 0.0, "compression_ratio": 0.0,
                      "no_speech_prob": 0.0} for i, s in enumerate(segments)]}
    if words:
        out["words"] = [{"word": w.text, "start": round(w.start, 3), "end": round(w.end, 3)}
                        for w, _ in transcript.words() if w.start is not None and w.end is not None]
    return Answer.json(out)


class _Late(Exception):
    """A request not received by its deadline (no ``TimeoutError``: http.server drops those unanswered)."""


class _DeadlineReader(io.RawIOBase):
    """A connection's reading end whose reads give up at ``deadline`` (a ``time.monotonic()``,
    raising :class:`_Late`) or, with none, after ``idle_s`` of silence (``TimeoutError``): a
    client that sends a byte a second cannot keep a request coming longer than its deadline."""

    def __init__(self, connection: socket.socket, idle_s: float) -> None:
        super().__init__()
        self.connection, self.idle_s = connection, idle_s
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.idle_s if self.deadline is None else self.deadline - time.monotonic()
        if left <= 0:
            raise _Late
        self.connection.settimeout(left)
        try:
            return self.connection.recv_into(buffer)
        except TimeoutError:
            if self.deadline is None:
                raise
            raise _Late from None


#: A Content-Length header's value: ASCII digits only.
_LENGTH = re.compile(r"[0-9]{1,20}")


class _Handler(BaseHTTPRequestHandler):
    """One connection's requests (``server.service``: the :class:`TranscriptionService`)."""

    server: ApiServer
    protocol_version = "HTTP/1.1"
    #: Seconds a connection may stay silent between requests.
    timeout = 120

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # replaced by one that keeps the request's deadline
        self.reader = _DeadlineReader(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self.reader)

    def handle_one_request(self) -> None:
        """One request, received within ``upload_timeout_s`` from its first byte (else 408)."""
        self.reader.deadline = None
        try:
            if not self.rfile.peek(1):
                self.close_connection = True
                return
        except (TimeoutError, OSError):  # silent for the idle timeout, or gone
            self.close_connection = True
            return
        self.arrived = time.monotonic()
        self.reader.deadline = self.arrived + self.server.service.options.upload_timeout_s
        self.command, self.requestline, self.request_version = "", "", self.protocol_version
        try:
            super().handle_one_request()
        except _Late:  # in the request line or the headers
            self.send_error(408)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        log.info("%s %s", self.address_string(), format % args)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a malformed request line or header, a method it does not
        know, 408) as OpenAI-style JSON errors; the connection is closed after them."""
        self.log_error("code %d, message %s", code, message)
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # a request line it could not read: answered with a status line
            self.request_version = self.protocol_version
        text = message or self.responses.get(code, ("",))[0]
        self._send_error(self._late() if code == 408 else
                         ApiError(code, text, kind="invalid_request_error" if code < 500 else "server_error"))

    def _late(self) -> ApiError:
        return ApiError(408, f"the request was not received within {self.server.service.options.upload_timeout_s:g} s"
                             " (the server's upload_timeout_s)")

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.headers.get("Transfer-Encoding") or self.headers.get("Content-Length", "0").strip() != "0":
            self.close_connection = True  # its body is not read: never taken for the next request
        if self.path.split("?")[0].rstrip("/") in ("/v1/models", "/models"):
            self._send(self.server.service.models())
        else:
            self._send_error(ApiError(404, f"no such path: {self.path[:100]}", code="not_found"))

    def _not_allowed(self) -> None:
        """The methods other than GET and POST that HTTP knows: 405, ``Allow: GET, POST``."""
        self.close_connection = True  # a body it may have is not read
        self._send_error(ApiError(405, f"method {self.command} is not allowed; this server answers GET and POST",
                                  code="method_not_allowed"), {"Allow": "GET, POST"})

    do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        service = self.server.service
        closing, self.close_connection = self.close_connection, True  # closed unless the body is read whole
        try:
            if self.path.split("?")[0].rstrip("/") not in ("/v1/audio/transcriptions", "/audio/transcriptions"):
                raise ApiError(404, f"no such path: {self.path[:100]}", code="not_found")
            length = self._length()
            try:
                form = FormReader(self.headers.get("Content-Type", ""))
                place = service.admit()
            except (ApiError, FormatError):
                self._receive(length, lambda chunk: None)  # dropped as it comes, so the client reads the answer
                self.close_connection = closing
                raise
            with place:
                self._receive(length, form.write)
                self.close_connection = closing
                self._send(service.transcribe(form.parts(), self.arrived))
        except ApiError as e:
            self._send_error(e)
        except FormatError as e:
            self._send_error(ApiError(400, str(e)))
        except Exception as e:  # a bug, not the request's fault: said in one line, logged in full
            log.exception("transcription request failed")
            self._send_error(ApiError(500, f"internal error: {type(e).__name__}: {str(e)[:300]}",
                                      kind="server_error"))

    def _length(self) -> int:
        """The body's Content-Length, refused when it is missing, malformed, given twice or over
        ``max_upload_bytes`` (the body then unread)."""
        limit = self.server.service.options.max_upload_bytes
        lengths = self.headers.get_all("Content-Length") or []
        if self.headers.get("Transfer-Encoding"):
            raise ApiError(411, "send the body with a Content-Length (no transfer encoding)")
        if not lengths:
            raise ApiError(411, "the request has no Content-Length")
        if len(lengths) > 1 or not _LENGTH.fullmatch(lengths[0].strip()):
            raise ApiError(400, "the request's Content-Length is not one number")
        if int(lengths[0]) > limit:
            raise ApiError(413, f"the request's {int(lengths[0]):,} bytes are over the server's limit of "
                                f"{limit:,} (max_upload_bytes)")
        return int(lengths[0])

    def _receive(self, length: int, take: Callable[[bytes], None]) -> None:
        """The body's ``length`` bytes, chunk by chunk to ``take``, by the request's deadline
        (408) and without ending early (400)."""
        left = length
        while left:
            try:
                chunk = self.rfile.read1(min(left, 1 << 16))
            except _Late:
                raise self._late() from None
            if not chunk:
                raise ApiError(400, "the request's body ended before its Content-Length")
            take(chunk)
            left -= len(chunk)

    def _send(self, answer: Answer, headers: dict[str, str] | None = None) -> None:
        self.reader.deadline = None  # the request is in: the answer is written under the idle timeout
        self.connection.settimeout(self.timeout)
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer.body)

    def _send_error(self, error: ApiError, headers: dict[str, str] | None = None) -> None:
        self._send(Answer.json(error.body(), error.status), headers)


class ApiServer(ThreadingHTTPServer):
    """The HTTP server of a :class:`TranscriptionService` (a thread per connection)."""

    daemon_threads = True

    def __init__(self, service: TranscriptionService, host: str = "127.0.0.1", port: int = 0) -> None:
        self.service = service
        super().__init__((host, port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed outside an answer: a client gone while it was answered is
        logged in a line, anything else in full (never printed to stderr, as socketserver does)."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            log.info("%s went away: %s", client_address[0], error)
        else:
            log.exception("connection from %s failed", client_address[0])

    @property
    def url(self) -> str:
        """The base URL clients give (``http://HOST:PORT/v1``)."""
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in str(host) else host
        return f"http://{host}:{port}/v1"
