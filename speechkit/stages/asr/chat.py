"""The ``chat`` ASR backend: an audio-in chat model returns the speaker-tagged segments of a block.

The OSynth paper's Gemini stack: one multimodal model ingests the meeting audio and returns a JSON
array of speaker-tagged segments. Each block of speech the ASR stage reads (at most ``block_s``
seconds) goes to the model as a base64 WAV ``input_audio`` part (:mod:`speechkit.llm.audio`) with
the instruction; the answer is ``{"segments": [{"speaker", "start", "end", "text"}, ...]}``, asked
as a JSON schema where the server takes them (``response_format``), and read tolerantly where it
does not (code fences or prose around it). Times are seconds from the block's start;
they are clipped to the block, so a model that invents times cannot place words outside it.

The segments keep the model's speaker labels (``Speaker 1``, ...), which the ``asr`` diarization
backend turns into the meeting's diarization, so that identification, correction and notes
run after it unchanged. The model gives no word times: a segment's words are untimed. Labels are
the model's per request: a recording longer than ``block_s`` is asked block by block, and a
speaker's label in one block is not linked to the same person's in the next.

With ``biasing`` the level's ASR prompt (L3: the meeting's title, attendees and terms) is given
in the request as vocabulary that may occur; the paper's stacks give none (their vocabulary
goes to post-correction), so the shipped recipes leave it off.

A request that fails for good (after the retries), or an answer that holds no segments, stops
the run with the endpoint's one-line error (:class:`~speechkit.llm.client.LLMUnavailable`),
whatever ``failures`` says, as the ``api`` backend's: a recognition missing a block would be
kept in the stage cache as if it were whole.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from speechkit.core.audio import SAMPLE_RATE
from speechkit.core.options import bounded
from speechkit.llm.audio import AudioChatOptions, audio_part, text_part
from speechkit.llm.client import BadAnswer, LLMClient, NoAnswer
from speechkit.stages.asr import Recognition
from speechkit.stages.asr.biasing import AsrOptions, Biasing
from speechkit.transcript import Segment

SYSTEM_PROMPT = ("You transcribe recordings of workplace meetings verbatim and say who speaks when. You write "
                 "every word as spoken, never a summary.")
INSTRUCTION = """Transcribe this meeting recording ({seconds:.1f} seconds). Split it into segments, one per \
stretch of speech by one speaker, in time order. Label the speakers "Speaker 1", "Speaker 2", ... in the order \
they first speak, and give each voice the same label throughout. Give each segment's start and end in seconds \
from the start of the recording.

Return only a JSON object: {{"segments": [{{"speaker": "Speaker 1", "start": 0.0, "end": 4.2, "text": "..."}}, \
...]}}."""
VOCABULARY = "Words and names that may occur: {prompt}"
#: Longest speaker label an answer may hold (characters).
LABEL_CHARS = 40


@dataclass(frozen=True)
class ChatAsrOptions(AudioChatOptions, AsrOptions):
    """Options of the ``chat`` ASR backend: the client's (:class:`~speechkit.llm.audio.AudioChatOptions`:
    endpoint, model, deadline, retries, ``response_format``; the endpoint must be given, in the
    options or the environment; ``failures`` does not apply: a block without segments stops the
    run), the stage's (``block_s``: the most seconds of speech per request) and these.

    ``timeout_s`` [> 0, 3600]: as the client's, longer by default (a model listens to minutes of
    audio). ``max_tokens`` [1, 1000000]: as the client's, by default 32000 (ten minutes of speech
    take about 5000; the longest answer the schema allows would pass the models' output limits,
    which the servers refuse). ``max_segments`` [1, 10000]: most segments an answer may hold.
    ``max_segment_chars`` [10, 100000]: longest text of one segment. ``biasing``: give the
    level's ASR prompt in the request (the paper's stacks do not).
    """

    timeout_s: float = bounded(600.0, gt=0, le=3600)
    max_tokens: int | None = bounded(32_000, ge=1, le=1_000_000)
    max_segments: int = bounded(400, ge=1, le=10_000)
    max_segment_chars: int = bounded(2000, ge=10, le=100_000)
    biasing: bool = False


def segments_schema(max_segments: int, max_segment_chars: int) -> dict[str, Any]:
    """The JSON schema of an answer: the speaker-tagged segments."""
    segment = {"type": "object", "properties": {
        "speaker": {"type": "string", "maxLength": LABEL_CHARS}, "start": {"type": "number"},
        "end": {"type": "number"}, "text": {"type": "string", "maxLength": max_segment_chars}},
        "required": ["speaker", "start", "end", "text"], "additionalProperties": False}
    return {"type": "object", "properties": {"segments": {"type": "array", "maxItems": max_segments, "items": segment}},
            "required": ["segments"], "additionalProperties": False}


def read_segments(answer: dict[str, Any], seconds: float) -> list[Segment]:
    """The segments an answer (``{"segments": [...]}``) holds, times clipped to ``[0, seconds]``,
    segments without text left out, in time order; :class:`BadAnswer` (``wrong-shape``) if an
    item is not a segment."""
    rows = answer.get("segments")
    if not isinstance(rows, list):
        raise BadAnswer("wrong-shape", "no segments array in the answer")
    out = []
    for i, row in enumerate(rows):
        try:
            speaker, text = " ".join(str(row["speaker"]).split())[:LABEL_CHARS], " ".join(row["text"].split())
            start, end = float(row["start"]), float(row["end"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise BadAnswer("wrong-shape", f"segment {i} is not {{speaker, start, end, text}}: "
                                           f"{type(e).__name__}") from None
        if not (math.isfinite(start) and math.isfinite(end)):
            raise BadAnswer("wrong-shape", f"segment {i} has a time that is not a number")
        start = min(max(start, 0.0), seconds)
        end = min(max(end, start), seconds)
        if text:
            out.append(Segment(start, end, speaker or "Speaker ?", text))
    return sorted(out, key=lambda s: (s.start, s.end))


class ChatTranscriber:
    """The ``chat`` ASR backend (see the module docstring)."""

    Options = ChatAsrOptions

    def __init__(self, options: ChatAsrOptions | None = None, device: str = "auto") -> None:
        self.options = options or ChatAsrOptions()
        self.schema = segments_schema(self.options.max_segments, self.options.max_segment_chars)
        self.client = LLMClient(self.options)

    def messages(self, audio: np.ndarray, biasing: Biasing | None) -> list[dict[str, Any]]:
        """The request for one block of audio."""
        text = INSTRUCTION.format(seconds=len(audio) / SAMPLE_RATE)
        if self.options.biasing and biasing is not None and biasing.prompt:
            text += "\n\n" + VOCABULARY.format(prompt=biasing.prompt)
        return [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": [text_part(text), audio_part(audio)]}]

    def transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                   biasing: Biasing | None = None) -> Recognition:
        """The speaker-tagged segments of ``audio`` (16 kHz mono). Raises
        :class:`~speechkit.llm.client.LLMUnavailable` when the request gives none."""
        seconds = len(audio) / SAMPLE_RATE
        try:
            return Recognition(self.client.complete(self.messages(audio, biasing), self.schema, name="segments",
                                                    read=lambda answer: read_segments(answer, seconds)))
        except NoAnswer as e:
            raise self.client.unavailable(f"the transcription of a {seconds:.1f} s block: {e.reason}: "
                                          f"{e.detail}") from None
