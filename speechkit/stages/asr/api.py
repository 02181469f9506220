"""The ``api`` ASR backend: an OpenAI-compatible transcription endpoint (``POST /audio/transcriptions``).

OpenAI's whisper-1, gpt-4o-transcribe and gpt-4o-transcribe-diarize, vLLM and speaches serving
Whisper, and ``speechkit serve`` answer it. Requests go through :mod:`speechkit.llm`'s client
(:class:`~speechkit.llm.client.LLMClient`): the endpoint and key come from the options or the
environment (``SPEECHKIT_ASR_BASE_URL``, else the LLM stages' ``SPEECHKIT_LLM_BASE_URL`` /
``OPENAI_BASE_URL``; the model from the option or ``SPEECHKIT_ASR_MODEL``; the key from
``api_key_env``), each request has the client's deadline, retries and bounded, redacted answer,
is counted in the run's LLM session (run.json ``llm``), and the endpoint is probed before any
audio is sent (a model the server does not list is unavailable).

Each call cuts the speech it is given into requests of at most ``max_chunk_s`` seconds and
``max_upload_bytes`` bytes of encoded audio, cut in the pauses between the VAD's speech regions
(:func:`~speechkit.core.audio.span_blocks`; a request over the byte limit is split again at its
widest pause, a single region in its middle), and the answers' times are shifted back onto the
recording. What comes back, by ``transcript_format``:

- ``verbose_json``: segments with times and, with ``word`` in ``timestamp_granularities``, words
  with times (each word goes to the segment holding its midpoint);
- ``json``: text only; its words are spread evenly over the request's speech;
- ``diarized_json``: segments with times and a speaker label each; a segment's words are spread
  evenly over it, and the label is kept on the segment (``Segment.speaker``), where the
  ``transcribed`` diarization backend (:mod:`speechkit.stages.diarize.transcribed`) reads it.
  The meeting's enrollments (L3) go with each request as ``known_speaker_names[]`` and
  ``known_speaker_references[]`` (a data URL of at most ``reference_s`` seconds of each person's
  clips, WAV), and the server then labels their speech with their names. A label from a request
  after the first that is no known name gets ``#N`` appended (N: the request's number), since
  servers label each request on its own.

Biasing (L2, L3): ``prompt`` takes the hot words, then the prompt's last words, within
``prompt_chars`` characters (:func:`~speechkit.stages.asr.prompt_budget.fit_biasing`); a
diarizing request takes no prompt. Words carry no confidence (the API gives none).

A request that fails for good (after the retries) stops the run with the endpoint's one-line
error (:class:`~speechkit.llm.client.LLMUnavailable`), whatever ``failures`` says: a
recognition missing part of the meeting would be kept in the stage cache as if it were whole.
"""
from __future__ import annotations

import base64
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from speechkit.core.audio import SAMPLE_RATE, encode_audio, load_audio, span_blocks
from speechkit.core.options import OptionError, bounded
from speechkit.io.multipart import Part, encode_form
from speechkit.llm import session
from speechkit.llm.client import ClientOptions, LLMClient, RequestFailed
from speechkit.llm.endpoint import BASE_URL_VARIABLES, Endpoint, resolve_endpoint
from speechkit.stages.asr import Recognition
from speechkit.stages.asr.biasing import AsrOptions, Biasing
from speechkit.stages.asr.prompt_budget import fit_biasing
from speechkit.transcript import Segment, Word

log = logging.getLogger(__name__)

#: Where the endpoint comes from when the options name none, in order.
ASR_BASE_URL_VARIABLES = ("SPEECHKIT_ASR_BASE_URL", *BASE_URL_VARIABLES)
#: Where the model comes from when the options name none.
ASR_MODEL_VARIABLE = "SPEECHKIT_ASR_MODEL"
#: The endpoint's path under the base URL.
TRANSCRIPTIONS = "/audio/transcriptions"
_MIME = {"wav": "audio/wav", "flac": "audio/flac"}


@dataclass(frozen=True)
class ApiAsrOptions(AsrOptions, ClientOptions):
    """Options of the ``api`` backend: the LLM client's (``base_url``, ``model``, ``api_key_env``,
    ``timeout_s`` per request, ``max_retries``, ``backoff_s``, ``max_backoff_s``, ``temperature``;
    see :class:`~speechkit.llm.client.ClientOptions`: its ``server``, ``response_format``,
    ``max_tokens``, ``failures`` and ``max_failed_share`` do not apply, a failed request stops
    the run) and these.

    ``base_url`` unset: ``SPEECHKIT_ASR_BASE_URL``, ``SPEECHKIT_LLM_BASE_URL``, ``OPENAI_BASE_URL``
    (one is needed); ``model`` unset: ``SPEECHKIT_ASR_MODEL``.
    ``transcript_format``: the ``response_format`` asked: ``verbose_json`` (segment and word
    times), ``json`` (text only) or ``diarized_json`` (segments with speaker labels; a diarizing
    model such as gpt-4o-transcribe-diarize). ``timestamp_granularities``: ``segment`` and/or
    ``word`` (``verbose_json`` only). ``language``: the spoken language's code (None: the server
    detects it). ``prompt_chars``: most characters of the prompt (hot words first, then the
    prompt's last words; 0: no prompt). ``chunking_strategy``: ``auto`` sends
    ``chunking_strategy=auto`` (OpenAI's diarizing model needs it beyond 30 s); ``none`` sends
    none. ``max_chunk_s``: most seconds of audio per request; ``max_upload_bytes``: most bytes
    of encoded audio per request (OpenAI takes 25 MB); ``audio_format``: how the audio is sent
    (``flac`` or ``wav``, 16 kHz mono 16-bit). ``max_known_speakers``: most enrolled persons
    sent to a diarizing model (OpenAI takes 4; 0: none); ``reference_s``: longest reference clip
    per person (OpenAI takes 2 to 10 s). ``block_s``: see
    :class:`~speechkit.stages.asr.biasing.AsrOptions` (by default an hour, so a meeting's speaker
    labels come from as few requests as the limits allow). ``timeout_s``: by default 600 s, a
    long recording's transcription taking a while.
    """

    timeout_s: float = bounded(600.0, gt=0, le=3600)
    block_s: float = bounded(3600.0, ge=30.0, le=7200.0)
    transcript_format: Literal["verbose_json", "json", "diarized_json"] = "verbose_json"
    timestamp_granularities: tuple[Literal["segment", "word"], ...] = ("segment", "word")
    language: str | None = "en"
    prompt_chars: int = bounded(800, ge=0, le=100_000)
    chunking_strategy: Literal["none", "auto"] = "none"
    max_chunk_s: float = bounded(1200.0, ge=10.0, le=86_400.0)
    max_upload_bytes: int = bounded(24 << 20, ge=64 << 10, le=1 << 30)
    audio_format: Literal["flac", "wav"] = "flac"
    max_known_speakers: int = bounded(4, ge=0, le=100)
    reference_s: float = bounded(10.0, ge=1.0, le=120.0)
    chat = False

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(set(self.timestamp_granularities)) != len(self.timestamp_granularities):
            raise OptionError("timestamp_granularities", "a granularity is named twice")

    def resolve_endpoint(self, environ: Mapping[str, str] | None = None) -> Endpoint:
        """The transcription endpoint: these options, else the environment (no local default)."""
        return resolve_endpoint(self.base_url, self.model, self.api_key_env, environ,
                                base_url_variables=ASR_BASE_URL_VARIABLES, model_variable=ASR_MODEL_VARIABLE,
                                local=False)

    @property
    def diarizes(self) -> bool:
        """Whether the server labels speakers (``diarized_json``)."""
        return self.transcript_format == "diarized_json"


class ApiRecognizer:
    """The ``api`` backend: recognition by an OpenAI-compatible transcription endpoint."""

    Options = ApiAsrOptions
    #: What of the meeting's context the ASR stage hands this backend besides the biasing.
    context_fields = ("enrollments",)

    def __init__(self, options: ApiAsrOptions | None = None, device: str = "auto") -> None:
        self.options = options or ApiAsrOptions()
        self.client = LLMClient(self.options)
        self._references: dict[tuple[Path, ...], str] = {}  # clips -> their data URL

    def __repr__(self) -> str:
        return f"ApiRecognizer({self.client!r})"

    def transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                   biasing: Biasing | None = None,
                   enrollments: Mapping[str, Sequence[Path]] | None = None) -> Recognition:
        """Recognise ``audio`` (16 kHz mono float32), ``speech`` (s; None: all of it) cut into
        requests within the endpoint's limits; ``enrollments`` (name -> clips) go to a diarizing
        model as its known speakers. Raises :class:`~speechkit.llm.client.LLMUnavailable` when a
        request fails."""
        audio = np.asarray(audio, dtype=np.float32)
        if speech is None:
            speech = [(0.0, len(audio) / SAMPLE_RATE)] if len(audio) else []
        speech = [(max(0.0, s), min(e, len(audio) / SAMPLE_RATE)) for s, e in sorted(speech) if e > s]
        if not speech:
            return Recognition()
        self._probe_once()
        fields = self._fields(biasing, enrollments)
        known = {p.text for p in fields if p.name == "known_speaker_names[]"}
        out = Recognition()
        for number, (start, end, regions, encoded) in enumerate(self._requests(audio, speech)):
            data = self._ask(fields, encoded)
            local = [(s - start, e - start) for s, e in regions]
            segments = [_within(s, end - start) for s in answer_segments(data, self.options.transcript_format, local)]
            if number and self.options.diarizes:
                segments = [s if s.speaker in known else s.with_speaker(f"{s.speaker}#{number + 1}") for s in segments]
            out.extend(s.shifted(start) for s in segments)
        return out

    def _probe_once(self) -> None:
        """Probe the endpoint unless the run's check before any audio did."""
        usage = session.current().usage(self.client.base_url, self.client.model)
        if usage.probe == "not probed":
            try:
                usage.probe = self.client.probe()
            except Exception as e:
                usage.probe = f"failed: {e}"
                raise

    def _fields(self, biasing: Biasing | None, enrollments: Mapping[str, Sequence[Path]] | None) -> list[Part]:
        """The form's fields besides the file, the same for every request of a call."""
        o = self.options
        fields = [Part("model", self.client.model.encode()), Part("response_format", o.transcript_format.encode()),
                  Part("temperature", repr(o.temperature).encode())]
        if o.language:
            fields.append(Part("language", o.language.encode()))
        if o.transcript_format == "verbose_json":
            fields += [Part("timestamp_granularities[]", g.encode()) for g in o.timestamp_granularities]
        if o.chunking_strategy == "auto":
            fields.append(Part("chunking_strategy", b"auto"))
        if o.diarizes:
            names = list(enrollments or {})
            if len(names) > o.max_known_speakers:
                log.warning("%d enrolled persons; the endpoint is told the first %d (max_known_speakers): %s",
                            len(names), o.max_known_speakers, ", ".join(names[:o.max_known_speakers]))
            for name in names[:o.max_known_speakers]:
                fields += [Part("known_speaker_names[]", name.encode()),
                           Part("known_speaker_references[]", self._reference(enrollments[name]).encode())]
        elif (prompt := self.prompt(biasing)) is not None:
            fields.append(Part("prompt", prompt.encode()))
        return fields

    def prompt(self, biasing: Biasing | None) -> str | None:
        """The prompt a request takes: the hot words, then the prompt's last words, within
        ``prompt_chars`` characters (None: nothing to send)."""
        budget = self.options.prompt_chars
        if not biasing or budget < 2:
            return None
        prompt, hotwords = fit_biasing(biasing, budget - 1, len)  # 1: the space between the two
        return " ".join(p for p in (hotwords, prompt) if p) or None

    def _reference(self, clips: Sequence[Path]) -> str:
        """A data URL of at most ``reference_s`` seconds of a person's enrollment clips (WAV)."""
        key = tuple(clips)
        if key not in self._references:
            audio = np.concatenate([load_audio(c) for c in clips])[:round(self.options.reference_s * SAMPLE_RATE)]
            self._references[key] = "data:audio/wav;base64," + base64.b64encode(encode_audio(audio, "wav")).decode()
        return self._references[key]

    def _requests(self, audio: np.ndarray, speech: list[tuple[float, float]]
                  ) -> Iterator[tuple[float, float, list[tuple[float, float]], bytes]]:
        """``speech`` as requests (audio start, end, regions, encoded audio) within ``max_chunk_s`` and
        ``max_upload_bytes``: regions grouped by :func:`span_blocks` (a region longer than a
        request split first), a group over the byte limit split at its widest pause."""
        limit = self.options.max_chunk_s - 1.0  # span_blocks adds its margins on both sides
        regions = [(s + k * limit, min(e, s + (k + 1) * limit)) for s, e in speech
                   for k in range(int(np.ceil((e - s) / limit)))]
        todo = [group for _, _, group in span_blocks(regions, limit)]
        while todo:
            group = todo.pop(0)
            start, end, _ = span_blocks(group, float("inf"))[0]
            end = min(end, len(audio) / SAMPLE_RATE)
            encoded = encode_audio(audio[round(start * SAMPLE_RATE):round(end * SAMPLE_RATE)],
                                   self.options.audio_format)
            if len(encoded) <= self.options.max_upload_bytes:
                yield start, end, group, encoded
                continue
            if end - start < 2.0:
                raise self.client.unavailable(f"{len(encoded):,} bytes of audio for {end - start:.1f} s: "
                                              f"max_upload_bytes ({self.options.max_upload_bytes:,}) is too small")
            todo[:0] = _halves(group)

    def _ask(self, fields: list[Part], encoded: bytes) -> Any:
        """The JSON answer to one request; a failed one raises the endpoint's error."""
        fmt = self.options.audio_format
        body, content_type = encode_form([*fields, Part("file", encoded, f"audio.{fmt}", _MIME[fmt])])
        try:
            reply = self.client.post(TRANSCRIPTIONS, body, content_type)
            if not isinstance(reply.data, dict):
                raise RequestFailed("bad-response", f"not a JSON transcription: {reply.text[:80]!r}")
        except RequestFailed as e:
            raise self.client.unavailable(e.detail) from None
        return reply.data


def _halves(group: list[tuple[float, float]]) -> list[list[tuple[float, float]]]:
    """``group`` (speech regions) cut in two at its widest pause; a single region in its middle."""
    if len(group) == 1:
        (s, e), = group
        return [[(s, (s + e) / 2)], [((s + e) / 2, e)]]
    gaps = [group[i + 1][0] - group[i][1] for i in range(len(group) - 1)]
    cut = int(np.argmax(gaps)) + 1
    return [group[:cut], group[cut:]]


def answer_segments(data: Mapping[str, Any], transcript_format: str,
                    speech: list[tuple[float, float]]) -> list[Segment]:
    """The segments of one transcription answer (times in the request's audio); ``speech``: the
    request's speech regions, over which an answer without times has its words spread.
    Raises :class:`~speechkit.llm.client.RequestFailed` (``bad-response``) on an answer of
    another shape."""
    try:
        if transcript_format == "diarized_json":
            return [s for item in data.get("segments") or [] if (s := _spread(
                str(item["text"]), float(item["start"]), float(item["end"]), str(item["speaker"]))) is not None]
        words = [Word(_clean(w["word"]), float(w["start"]), float(w["end"])) for w in data.get("words") or []
                 if _clean(w["word"])]
        rows = [(float(s["start"]), float(s["end"]), str(s["text"])) for s in data.get("segments") or []]
        text = str(data["text"])
    except (KeyError, TypeError, ValueError) as e:
        raise RequestFailed("bad-response", f"not a {transcript_format} transcription: "
                                            f"{type(e).__name__} {str(e)[:80]}") from None
    if words:
        bounds = [(s, e) for s, e, _ in rows] or [(words[0].start, words[-1].end)]
        groups: dict[int, list[Word]] = {}
        for w in words:
            mid = (w.start + w.end) / 2
            k = min(range(len(bounds)), key=lambda i: 0 if bounds[i][0] <= mid <= bounds[i][1]
                    else min(abs(mid - bounds[i][0]), abs(mid - bounds[i][1])))
            groups.setdefault(k, []).append(w)
        return [Segment.from_words(groups[k], speaker="") for k in sorted(groups)]
    if rows:
        return [s for start, end, seg_text in rows if (s := _spread(seg_text, start, end, "")) is not None]
    if not speech:
        return []
    segment = _spread(text, speech[0][0], speech[-1][1], "")
    return [segment] if segment is not None else []


def _within(segment: Segment, length: float) -> Segment:
    """``segment`` with its words' times held within its request's audio, 0 to ``length`` s (times
    past it are the server's error, and would land in another part of the recording)."""
    words = [replace(w, start=min(max(w.start, 0.0), length), end=min(max(w.end, 0.0), length)) for w in segment.words]
    return Segment.from_words(words, segment.speaker)


def _clean(word: Any) -> str:
    return str(word).strip()


def _spread(text: str, start: float, end: float, speaker: str) -> Segment | None:
    """A segment of ``text``'s words spread evenly from ``start`` to ``end`` (None: no words)."""
    words = text.split()
    if not words:
        return None
    end = max(end, start)
    step = (end - start) / len(words)
    return Segment.from_words([Word(w, round(start + i * step, 3), round(start + (i + 1) * step, 3))
                               for i, w in enumerate(words)], speaker=speaker)
