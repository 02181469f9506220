"""The ``llm`` QA backend: a language model answers a meeting's questions, through :mod:`speechkit.llm`.

One request per meeting (the endpoint and model are the LLM client's,
:class:`~speechkit.llm.client.ClientOptions`, as for the notes and correction stages): the
level's CONTEXT block ("(none)" at L1), the system's own NOTES of the meeting, its TRANSCRIPT as
``[MM:SS] Name: text`` lines (cut to ``transcript_bytes`` between lines), then the questions by
id; the answer follows a JSON schema (``{"answers": [{"id": ..., "answer": ...}]}``, ids from the
questions, answers bounded), sent as ``response_format``. A request that fails for good, or an
answer that is not answers (none of the questions answered), gives the meeting no answers: its
question scores are not applicable, with the reason, never 0 (:func:`speechkit.metrics.qa.score_run`);
it is counted in the backend's stats (``failures``, ``rejected``) and as a failed request. The
endpoint is probed before the first question (:meth:`LLMAnswerer.check`); an unreachable one, or
failed requests (answers that are not answers included) above ``max_failed_share``, stop the
step unless ``failures`` is ``allow``.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from speechkit.core.options import bounded
from speechkit.io.questions import Ask
from speechkit.io.run_output import MeetingOutput
from speechkit.llm.client import BadAnswer, ClientOptions, LLMClient, LLMUnavailable, NoAnswer
from speechkit.stages.summarize.llm import chunk_lines, transcript_lines

log = logging.getLogger(__name__)

SYSTEM_PROMPT = ("You answer questions about a workplace meeting from its transcript and notes. Answer with "
                 "what they say, briefly: a person's full name as the context lists the people, a number "
                 "with its unit, a day, a decision's choice. Answer \"\" when they do not say.")

USER_PROMPT = """CONTEXT:
{context}

NOTES:
{notes}

TRANSCRIPT:
{transcript}

QUESTIONS:
{questions}

Answer every question as a JSON object: "answers", a list of {{"id": the question's id, "answer": the answer}}."""


@dataclass(frozen=True)
class LLMQaOptions(ClientOptions):
    """Options of the LLM QA backend: the client's (endpoint, model, local server, deadline,
    retries, failure policy) and these. ``max_tokens`` [1, 1000000]: 800 by default.
    ``transcript_bytes`` [200, 1000000]: most UTF-8 bytes of transcript lines in the request
    (cut between lines). ``answer_chars`` [10, 1000]: longest answer the schema allows."""

    max_tokens: int | None = bounded(800, ge=1, le=1_000_000)
    transcript_bytes: int = bounded(12000, ge=200, le=1_000_000)
    answer_chars: int = bounded(120, ge=10, le=1000)


def answers_schema(ids: Sequence[str], answer_chars: int) -> dict[str, Any]:
    """The JSON schema of an answer to the questions ``ids``."""
    item = {"type": "object", "properties": {"id": {"type": "string", "enum": list(ids)},
                                             "answer": {"type": "string", "maxLength": answer_chars}},
            "required": ["id", "answer"], "additionalProperties": False}
    return {"type": "object", "properties": {"answers": {"type": "array", "maxItems": len(ids), "items": item}},
            "required": ["answers"], "additionalProperties": False}


def answers_of(reply: dict[str, Any], ids: Sequence[str]) -> dict[str, str]:
    """The answers a reply holds (question id -> text); :class:`BadAnswer` (``wrong-shape``) if none."""
    try:
        found = {a["id"]: " ".join(a["answer"].split()) for a in reply["answers"] if a["id"] in ids}
    except (KeyError, TypeError, AttributeError) as e:
        raise BadAnswer("wrong-shape", f"not answers: {type(e).__name__}: {e}"[:200]) from None
    if not found:
        raise BadAnswer("wrong-shape", f"answers none of the {len(ids)} questions asked")
    return found


class LLMAnswerer:
    """The ``llm`` QA backend (see the module docstring)."""

    Options = LLMQaOptions

    def __init__(self, options: LLMQaOptions) -> None:
        self.options = options
        self.client = LLMClient(options)
        self.requests = self.failed = 0

    def check(self) -> None:
        """Probe the endpoint before any question is asked; raises :class:`LLMUnavailable` unless
        failures are allowed."""
        try:
            self.client.probe()
        except LLMUnavailable as e:
            if self.options.failures == "fail":
                raise
            log.warning("qa: %s (going on: failures are allowed)", e)

    def messages(self, asks: Sequence[Ask], output: MeetingOutput) -> list[dict[str, str]]:
        """The request's messages for one meeting."""
        first = (chunk_lines(transcript_lines(output.transcript), self.options.transcript_bytes) or [[]])[0]
        usable = output.notes is not None and output.notes.failed is None
        notes = json.dumps(output.notes.to_dict(), ensure_ascii=False) if usable else "(none)"
        user = USER_PROMPT.format(context=output.context.text() or "(none)", notes=notes,
                                  transcript="\n".join(first) or "(none)",
                                  questions="\n".join(f"{a.id}: {a.text}" for a in asks))
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def answer(self, asks: Sequence[Ask], output: MeetingOutput) -> tuple[dict[str, str] | None, dict[str, Any]]:
        """The answers (question id -> text; None: no usable answer) and what the backend did."""
        ids = [a.id for a in asks]
        stats: dict[str, Any] = {"backend": "llm", "failures": {}, "rejected": {}}
        if not ids:
            return {}, stats
        self.requests += 1
        try:
            return self.client.complete(self.messages(asks, output), answers_schema(ids, self.options.answer_chars),
                                        name="answers", read=lambda reply: answers_of(reply, ids)), stats
        except NoAnswer as e:
            bad = isinstance(e, BadAnswer)
            log.warning("llm answers of %s %s: %s", output.meeting, "rejected" if bad else "failed", e.detail)
            stats["rejected" if bad else "failures"] = {e.reason: 1}
            self.failed += 1
            if self.options.failures == "fail" and self.failed / self.requests > self.options.max_failed_share:
                raise LLMUnavailable(f"{self.client.base_url}: model {self.client.model}: {e.detail} "
                                     "(qa: failures=allow goes on, the meeting's question scores n/a)") from None
        return None, stats
