"""The ``chat`` identification backend: an audio-in chat model names each diarization cluster by ear.

The OSynth paper's enrollment-based speaker identification (Appendix H, Figure 5; gpt-audio in its
OpenAI stack, gemini-3.1-pro-preview in its Gemini stack): one request per cluster, whose user
content is a short framing text, then one ``Enrollment -- NAME:`` text and clip pair per enrolled
person (the meeting's invitees at L3), then ``Target turn:`` and the cluster's representative
clip (its longest turns, up to ``clip_s`` seconds), and the closed list of names to answer from.
The answer is one line, matched back to the list by :func:`match_name`: the full name, else a
name it contains, else a tolerant first-name fallback; ``unknown`` (or anything that matches no
one) leaves the cluster unnamed. Where the server takes JSON-schema answers
(``response_format`` other than ``none``) the line is asked as ``{"name": ...}`` with the names
(and ``unknown``) as its choices.

Clusters are named one by one, so two clusters may get one name (a person the diarizer split).
With no enrollments (L1, L2) nothing is asked, unless the level rules ask identification at every
level (``context.rules: paper``, :mod:`speechkit.level_rules`): then each cluster's target turn is
sent alone with the open question :data:`OPEN_QUESTION`, and the name the model gives (cut to
:data:`MAX_NAME_WORDS` words) is the cluster's, invented or not, so one invented name may come back
in several meetings. A cluster left
unnamed keeps its label, or, with stable labels (L2 and up), gets a ``Speaker N`` label no earlier
meeting used, as with the other backends. A request that fails for good leaves its cluster
unnamed and is counted against the run's failure policy (:mod:`speechkit.llm.run`), as every
LLM stage's requests are.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from speechkit.core.audio import SAMPLE_RATE, load_audio, read_spans
from speechkit.core.options import bounded
from speechkit.core.record import MeetingRecord
from speechkit.llm.audio import AudioChatOptions, audio_part, text_part
from speechkit.llm.client import LLMClient, NoAnswer, extract_json
from speechkit.stages.identify import new_labels

if TYPE_CHECKING:
    from speechkit.stages.identify import IdentifyStage

log = logging.getLogger(__name__)

SYSTEM_PROMPT = ("You identify who is speaking in a recording of a workplace meeting by their voice. You are "
                 "given short enrollment recordings of known people, each introduced by the person's name, then "
                 "one target turn. Judge by the voice alone (timbre, pitch, accent, manner of speaking), never by "
                 "what is said.")
FRAMING = "Here are the voice enrollments of the people who may be speaking, then the target turn."
ENROLLMENT = "Enrollment -- {name}:"
TARGET = "Target turn:"
CONSTRAINT = ("Which enrolled person is speaking in the target turn? Answer with exactly one name from this list, "
              "copied exactly, and nothing else: {names}. If the voice matches none of them, answer {unknown}.")
UNKNOWN = "unknown"
OPEN_FRAMING = "Here is one turn of a recorded workplace meeting."
OPEN_QUESTION = ("What is the name of the person speaking in this turn? Answer with the name only, and nothing "
                 "else. If you cannot tell, answer {unknown}.")
#: Most words of a name an open answer gives (the rest is dropped).
MAX_NAME_WORDS = 3
#: Silence between the turns joined into one representative clip (seconds).
GAP_S = 0.3


@dataclass(frozen=True)
class ChatIdentifyOptions(AudioChatOptions):
    """Options of the ``chat`` identification backend: the client's
    (:class:`~speechkit.llm.audio.AudioChatOptions`: endpoint, model, deadline, retries, failure
    policy, ``response_format``: ``none`` asks for a plain line, as for gpt-audio; the endpoint
    must be given, in the options or the environment) and these.

    ``clip_s`` [0.5, 120]: seconds of a cluster's speech sent as its representative clip (its
    longest turns, joined in time order). ``enrollment_s`` [0.5, 120]: most seconds of a
    person's enrollment clips (joined) sent with their name. ``min_turn_s`` [0, 60]: turns
    shorter than this are left out of a representative clip unless the cluster has no longer one.
    ``max_tokens`` [1, 1000000]: as the client's, by default 1024: a name, with room for a model
    that reasons before it answers (its reasoning counts on some servers).
    """

    max_tokens: int | None = bounded(1024, ge=1, le=1_000_000)
    clip_s: float = bounded(10.0, ge=0.5, le=120.0)
    enrollment_s: float = bounded(15.0, ge=0.5, le=120.0)
    min_turn_s: float = bounded(1.0, ge=0.0, le=60.0)


def name_schema(names: list[str]) -> dict[str, Any]:
    """The JSON schema of an answer: one of ``names`` or ``unknown``."""
    return {"type": "object", "properties": {"name": {"type": "string", "enum": [*names, UNKNOWN]}},
            "required": ["name"], "additionalProperties": False}


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+(?:['’-][^\W_]+)*", text.casefold())


def open_name(answer: str) -> str | None:
    """The name an open answer gives: ``{"name": ...}`` or its first non-empty line, at most
    :data:`MAX_NAME_WORDS` words, each capitalised; None for ``unknown`` or no word."""
    data = extract_json(answer, dict)
    if isinstance(data, dict) and isinstance(data.get("name"), str):
        answer = data["name"]
    line = next((line for line in answer.splitlines() if line.strip()), "")
    said = re.findall(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", line)[:MAX_NAME_WORDS]
    if not said or [w.casefold() for w in said] == [UNKNOWN]:
        return None
    return " ".join(w[:1].upper() + w[1:] for w in said)


def match_name(answer: str, names: list[str]) -> str | None:
    """The name of ``names`` that ``answer`` gives, tolerantly: ``{"name": ...}`` or its first
    non-empty line, case, quotes and punctuation aside; the name in full, else the one name it
    contains in full, else the one name whose first name is its first word (or, that failing, one
    of its words); None for ``unknown`` or anything else."""
    data = extract_json(answer, dict)
    if isinstance(data, dict) and isinstance(data.get("name"), str):
        answer = data["name"]
    line = next((line for line in answer.splitlines() if line.strip()), "")
    said = _words(line)
    if not said or said == [UNKNOWN]:
        return None
    full = {name: _words(name) for name in names}
    exact = [name for name, words in full.items() if words == said]
    if exact:
        return exact[0]
    text = f" {' '.join(said)} "
    contained = [name for name, words in full.items() if words and f" {' '.join(words)} " in text]
    if len(contained) == 1:
        return contained[0]
    for candidates in ([said[0]], said):
        first = [name for name, words in full.items() if words and words[0] in candidates]
        if len(first) == 1:
            return first[0]
    return None


def representative_spans(turns: list[tuple[float, float]], clip_s: float,
                         min_turn_s: float) -> list[tuple[float, float]]:
    """The spans of a cluster's representative clip: its longest turns (those of at least
    ``min_turn_s`` seconds, or the longest one where none is), until ``clip_s`` seconds, the last
    one cut; in time order."""
    longest = sorted(turns, key=lambda t: (-(t[1] - t[0]), t[0]))
    kept = [t for t in longest if t[1] - t[0] >= min_turn_s] or longest[:1]
    spans, left = [], clip_s
    for start, end in kept:
        if left <= 0:
            break
        spans.append((start, min(end, start + left)))
        left -= spans[-1][1] - start
    return sorted(spans)


def joined(clips: list[np.ndarray], most_s: float) -> np.ndarray:
    """``clips`` joined with :data:`GAP_S` of silence between them, cut at ``most_s`` seconds."""
    gap = np.zeros(round(GAP_S * SAMPLE_RATE), dtype=np.float32)
    parts = [part for i, clip in enumerate(clips) for part in ([gap, clip] if i else [clip])]
    audio = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return audio[: round(most_s * SAMPLE_RATE)]


class ChatIdentifier:
    """The ``chat`` backend (see the module docstring)."""

    Options = ChatIdentifyOptions

    def __init__(self, options: ChatIdentifyOptions | None = None, device: str = "auto") -> None:
        self.options = options or ChatIdentifyOptions()
        self.client = LLMClient(self.options)

    @classmethod
    def for_stage(cls, options: ChatIdentifyOptions, device: str, stage: IdentifyStage) -> ChatIdentifier:
        """The backend of an identification stage (it needs nothing of the diarization stage)."""
        return cls(options, device)

    def messages(self, enrollments: dict[str, np.ndarray], target: np.ndarray) -> list[dict[str, Any]]:
        """The request for one cluster (Figure 5): framing, the enrollment pairs, the target turn
        and the closed list."""
        if not enrollments:
            content = [text_part(OPEN_FRAMING), text_part(TARGET), audio_part(target),
                       text_part(OPEN_QUESTION.format(unknown=UNKNOWN))]
            return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": content}]
        names = list(enrollments)
        content = [text_part(FRAMING)]
        for name, clip in enrollments.items():
            content += [text_part(ENROLLMENT.format(name=name)), audio_part(clip)]
        content += [text_part(TARGET), audio_part(target),
                    text_part(CONSTRAINT.format(names="; ".join(names), unknown=UNKNOWN))]
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": content}]

    def name_meeting(self, record: MeetingRecord, stage: IdentifyStage) -> dict[str, str | None]:
        """Diarization label -> enrolled name (None: unnamed; no request without enrollments in
        the context); with stable labels (L2 and up) the unnamed get ``Speaker N`` labels that no
        earlier meeting used (:func:`~speechkit.stages.identify.new_labels`)."""
        turns = record.result("diarize").turns
        labels = list(dict.fromkeys(t.speaker for t in turns))
        names: dict[str, str | None] = dict.fromkeys(labels)
        context = record.context
        if labels and (context.enrollments or context.identify_unenrolled):
            self.ask(record, names)
        return new_labels(names, set(context.prior_speakers)) if context.stable_labels else names

    def ask(self, record: MeetingRecord, names: dict[str, str | None]) -> None:
        """Name each label of ``names`` in place by one request (None: unnamed)."""
        turns = record.result("diarize").turns
        labels = list(names)
        enrollments = {name: self.enrollment_clip(clips) for name, clips in record.context.enrollments.items()}
        spans = {label: representative_spans([(t.start, t.end) for t in turns if t.speaker == label],
                                             self.options.clip_s, self.options.min_turn_s) for label in labels}
        schema = name_schema(list(enrollments)) if self.options.response_format != "none" and enrollments else None
        for label in labels:
            target = joined(list(read_spans(record.audio, spans[label], record.channel)), self.options.clip_s)
            try:
                answer = self.client.complete_text(self.messages(enrollments, target), schema, name="speaker")
            except NoAnswer as e:
                log.warning("speaker identification of %s in %s failed: %s", label, record.session_id, e.detail)
                continue
            names[label] = match_name(answer, list(enrollments)) if enrollments else open_name(answer)
            if names[label] is None:
                log.info("speaker identification of %s in %s: %r names no enrolled person", label,
                         record.session_id, answer[:80])

    def enrollment_clip(self, clips: list[Path]) -> np.ndarray:
        """A person's enrollment clips joined, cut at ``enrollment_s``."""
        return joined([load_audio(c) for c in clips], self.options.enrollment_s)

