"""The ``llm`` notes backend: meeting notes from a language model, through :mod:`speechkit.llm`.

The endpoint and model are the LLM client's (:class:`~speechkit.llm.client.ClientOptions`: the
recipe's ``base_url``/``model``, else ``SPEECHKIT_LLM_BASE_URL``/``SPEECHKIT_LLM_MODEL``, else the
local llama.cpp server on the packaged model), as for the LLM corrector. The prompt has the
paper's shape: a CONTEXT block (the level's notes context; "(none)" at L1), then the TRANSCRIPT
as ``[MM:SS] Name: text`` lines. One combined request asks for the whole notes, with a JSON
schema of them (:func:`notes_schema`: every string and list bounded, so a small model cannot
run on until its context is full), sent as ``response_format``, which llama.cpp's server,
vLLM and Ollama enforce: the answer always parses.

A transcript longer than ``chunk_bytes`` (UTF-8) is cut at turn boundaries into chunks, each
asked with the same context; the partial notes are merged: the summaries joined in order,
action items, decisions and outline entries deduplicated by their text (each list cut at
:data:`~speechkit.notes.MAX_ITEMS`, the summary at :data:`~speechkit.notes.MAX_SUMMARY_CHARS`, as
the notes reader allows). A chunk whose request fails for good, or whose answer is not notes,
adds nothing and is counted (``failures``, ``rejected_chunks`` in run.json) and, either way, as a
failed request of the endpoint; whether the run may go on is the run's decision
(:mod:`speechkit.llm.run`). When no chunk gave notes, the meeting's notes are empty and say so
(:attr:`~speechkit.notes.Notes.failed`), so that their scores are not applicable, never 0.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from speechkit.core.options import bounded
from speechkit.llm.client import BadAnswer, ClientOptions, LLMClient, NoAnswer
from speechkit.llm.schema import answer_token_limit
from speechkit.meeting_context import NotesContext
from speechkit.notes import MAX_ITEMS, MAX_SUMMARY_CHARS, ActionItem, Decision, Notes
from speechkit.text_similarity import fold
from speechkit.transcript import Transcript

log = logging.getLogger(__name__)

SYSTEM_PROMPT = ("You take the notes of workplace meetings from their transcripts. You write only what "
                 "the transcript says; the context tells you who the people are and what came before.")

USER_PROMPT = """CONTEXT:
{context}

TRANSCRIPT{part}:
{transcript}

Write the notes of this meeting{part} as a JSON object:
- "summary": one short paragraph: what was discussed, decided and assigned, with the numbers said.
- "action_items": what someone is to do: "assignee" (the person's full name as the context lists \
the people, else as said; "" when nobody), "description" (a short verb phrase), "due" (as said; "" \
when not said).
- "decisions": what was decided: "topic" (the question) and "choice" (what was chosen).
- "outline": the topics, in the order discussed."""

#: Longest strings of the answer (characters), besides the summary's ``max_summary_chars``.
_NAME_CHARS, _TEXT_CHARS, _DUE_CHARS = 40, 100, 30


@dataclass(frozen=True)
class LLMNotesOptions(ClientOptions):
    """Options of the LLM notes backend: the client's (:class:`~speechkit.llm.client.ClientOptions`:
    endpoint, model, local server, deadline, retries, failure policy) and these.

    ``max_tokens`` [1, 1000000]: as the client's; None (default): the longest answer the notes
    schema allows (:func:`~speechkit.llm.schema.answer_token_limit`), so a schema-valid answer is
    never cut, and a model that runs on still stops where the schema ends.
    ``chunk_bytes`` [200, 1000000]: most UTF-8 bytes of transcript lines per request (a longer
    transcript is asked in chunks, cut between turns, and the notes merged). ``max_items``
    [1, 100]: most action items, decisions and outline entries an answer may hold (each).
    ``max_summary_chars`` [50, 100000]: longest summary an answer may hold.
    """

    max_tokens: int | None = bounded(None, ge=1, le=1_000_000)
    chunk_bytes: int = bounded(4000, ge=200, le=1_000_000)
    max_items: int = bounded(4, ge=1, le=100)
    max_summary_chars: int = bounded(500, ge=50, le=100_000)


def notes_schema(max_items: int, max_summary_chars: int) -> dict[str, Any]:
    """The JSON schema of the notes an answer must be (all fields required, nothing else)."""
    def text(most: int) -> dict[str, Any]:
        return {"type": "string", "maxLength": most}

    def items(properties: dict[str, Any]) -> dict[str, Any]:
        return {"type": "array", "maxItems": max_items, "items": {
            "type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}}

    properties = {
        "summary": text(max_summary_chars),
        "action_items": items({"assignee": text(_NAME_CHARS), "description": text(_TEXT_CHARS),
                               "due": text(_DUE_CHARS)}),
        "decisions": items({"topic": text(_TEXT_CHARS), "choice": text(_TEXT_CHARS)}),
        "outline": {"type": "array", "maxItems": max_items, "items": text(_TEXT_CHARS)},
    }
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def transcript_lines(transcript: Transcript) -> list[str]:
    """The transcript as ``[MM:SS] Name: text`` lines (the label where no name was given)."""
    out = []
    for seg in transcript.segments:
        if seg.text.strip():
            minutes, seconds = divmod(int(seg.start), 60)
            out.append(f"[{minutes:02d}:{seconds:02d}] {seg.speaker_name or seg.speaker}: {' '.join(seg.text.split())}")
    return out


def chunk_lines(lines: list[str], budget: int) -> list[list[str]]:
    """``lines`` packed in order into chunks of at most ``budget`` UTF-8 bytes (newlines counted);
    a line longer than the budget is split between words (a word longer than it, between characters)."""
    pieces: list[str] = []
    for line in lines:
        while len(line.encode()) > budget:
            head = line.encode()[:budget].decode("utf-8", "ignore")
            cut = head.rfind(" ")
            head = head[:cut] if cut > 0 else head
            pieces.append(head)
            line = line[len(head):].lstrip()
        if line:
            pieces.append(line)
    chunks: list[list[str]] = []
    used = budget + 1
    for piece in pieces:
        size = len(piece.encode()) + 1
        if used + size > budget + 1:
            chunks.append([])
            used = 0
        chunks[-1].append(piece)
        used += size
    return chunks


def notes_of(answer: dict[str, Any]) -> Notes:
    """The notes an answer holds; :class:`BadAnswer` (``wrong-shape``) if it is not notes."""
    try:
        items = tuple(ActionItem(" ".join(a["description"].split()), _or_none(a["assignee"]), None, _or_none(a["due"]))
                      for a in answer["action_items"] if a["description"].strip())
        decisions = tuple(Decision(" ".join(d["topic"].split()) or d["choice"].strip(), " ".join(d["choice"].split()))
                          for d in answer["decisions"] if d["choice"].strip())
        outline = tuple(" ".join(o.split()) for o in answer["outline"] if o.strip())
        summary = " ".join(answer["summary"].split())
    except (KeyError, TypeError, AttributeError) as e:
        raise BadAnswer("wrong-shape", f"not notes: {type(e).__name__}: {e}"[:200]) from None
    return Notes(summary, items, decisions, outline)


def _or_none(value: str) -> str | None:
    value = " ".join(value.split())
    return value or None


def merge_notes(parts: list[Notes]) -> Notes:
    """The notes of a meeting from those of its chunks, in order: summaries joined, action items,
    decisions and outline entries deduplicated by their text (the first kept)."""
    def unique(values: list, text: Any) -> tuple:
        first: dict[str, Any] = {}
        for value in values:
            first.setdefault(fold(text(value)), value)
        return tuple(first.values())[:MAX_ITEMS]

    return Notes(summary=" ".join(p.summary for p in parts if p.summary)[:MAX_SUMMARY_CHARS],
                 action_items=unique([a for p in parts for a in p.action_items], lambda a: a.description),
                 decisions=unique([d for p in parts for d in p.decisions], lambda d: d.choice),
                 outline=unique([o for p in parts for o in p.outline], lambda o: o))


class LLMSummarizer:
    """The ``llm`` notes backend (see the module docstring)."""

    Options = LLMNotesOptions
    #: Not kept in the stage cache: the client caches every answer, never a failure.
    stored = False

    def __init__(self, options: LLMNotesOptions, device: str = "auto") -> None:
        self.options = options
        self.schema = notes_schema(options.max_items, options.max_summary_chars)
        self.client = LLMClient(options if options.max_tokens else
                                replace(options, max_tokens=answer_token_limit(self.schema)))

    def messages(self, lines: list[str], context: NotesContext, part: str = "") -> list[dict[str, str]]:
        """The request's messages for one chunk of transcript lines."""
        user = USER_PROMPT.format(context=context.text() or "(none)", part=part, transcript="\n".join(lines))
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def summarize(self, transcript: Transcript, context: NotesContext) -> tuple[Notes, dict]:
        """The notes of ``transcript`` and what the backend did (chunks, rejected answers, failures)."""
        chunks = chunk_lines(transcript_lines(transcript), self.options.chunk_bytes)
        parts, rejected, failures = [], Counter(), Counter()
        last: NoAnswer | None = None
        for i, lines in enumerate(chunks, 1):
            part = f" (part {i} of {len(chunks)})" if len(chunks) > 1 else ""
            try:
                parts.append(self.client.complete(self.messages(lines, context, part), self.schema, name="notes",
                                                  read=notes_of))
            except NoAnswer as e:
                bad = isinstance(e, BadAnswer)
                log.warning("llm notes of chunk %d of %s %s: %s", i, transcript.session_id,
                            "rejected" if bad else "failed", e.detail)
                (rejected if bad else failures)[e.reason] += 1
                last = e
        stats = {"backend": "llm", "chunks": len(chunks), "rejected_chunks": dict(rejected), "failures": dict(failures)}
        notes = merge_notes(parts)
        if last is not None and not parts:
            notes = replace(notes, failed=f"none of the {len(chunks)} request(s) for them gave notes; the last: "
                                          f"{last.reason}: {last.detail}"[:500])
        return notes, stats
