"""The language-model roles of a probe: generator, self-verifier, the system under test, the judge.

Every role is one request through :class:`speechkit.llm.LLMClient` with a JSON schema of its
answer, and what each role sees is fixed here (paper 000_):

- the **generator** sees the reference transcript, the cognitive demand to target and the
  questions asked before; it writes one natural question;
- the **self-verifier** sees the reference transcript and the question, and checks five things:
  answerable from the transcript, objective, information-seeking, natural, concrete;
- the **system under test** sees only its own run output at its level (its transcript, its notes
  and the context its level gave it) and the question;
- the **judge** sees only the reference transcript, the question and the answer, and scores
  faithfulness and completeness from 1 to 5.

A :class:`TokenMeter` counts what the requests cost (estimated at 4 characters a token, prompt
and answer, answers from the response cache included, so the same probe costs the same) against
the probe's token budget.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from speechkit.llm.client import BadAnswer, LLMClient, extract_json

#: Characters counted as one token by :class:`TokenMeter`.
CHARS_PER_TOKEN = 4
#: Longest question and answer an answer may hold (characters).
QUESTION_CHARS, ANSWER_CHARS = 300, 800
CHECKS = ("answerable", "objective", "information_seeking", "natural", "concrete")

#: The cognitive demands probed by default, each with the guidance the generator gets.
DEMANDS: dict[str, str] = {
    "factual recall": "a fact stated once in the meeting (what, which, where)",
    "attribution": "who said, proposed or objected to something",
    "action ownership": "who is to do a task, and by when",
    "decision tracking": "what was decided, and what was chosen over what",
    "numeric detail": "a number, amount, date or limit that was stated, with its unit",
    "temporal ordering": "what happened or was said before or after something else",
    "causal link": "why something was done or decided, as the speakers explained it",
    "synthesis": "something that needs two or more separate turns put together",
}

GENERATOR_SYSTEM = ("You write questions a participant of a workplace meeting would naturally ask about it "
                    "afterwards. Each question must be answerable from the transcript alone.")
GENERATOR_PROMPT = """TRANSCRIPT:
{transcript}

Write one question about this meeting that tests {demand}: {guidance}.
{avoid}Ask it as a participant would, about one concrete thing the transcript states. \
Answer as a JSON object: {{"question": "..."}}"""

VERIFIER_SYSTEM = "You check questions about a meeting before they are asked. You answer only true or false."
VERIFIER_PROMPT = """TRANSCRIPT:
{transcript}

QUESTION: {question}

Check the question. As a JSON object with true or false for each:
- "answerable": the transcript answers it
- "objective": its answer is a matter of what was said, not of opinion
- "information_seeking": it asks for information (not a test, a trick or a request to do something)
- "natural": a participant could ask it so (one question, not several, not exam-like)
- "concrete": it asks about what happened, not about what might have happened"""

ASSISTANT_SYSTEM = ("You are a meeting assistant. You answer questions about a meeting from its transcript, "
                    "its notes and the context you were given, and from nothing else.")
ASSISTANT_PROMPT = """{material}

QUESTION: {question}

Answer briefly and completely, as a JSON object: {{"answer": "..."}}"""

JUDGE_SYSTEM = ("You judge answers to questions about a meeting against its transcript, which is the "
                "truth. You give whole-number scores from 1 to 5.")
JUDGE_PROMPT = """TRANSCRIPT:
{transcript}

QUESTION: {question}

ANSWER: {answer}

Score the answer as a JSON object:
- "faithfulness": 5 when every claim of the answer is what the transcript says; 1 when it is \
made up, distorted or attributed to the wrong person.
- "completeness": 5 when it gives all the information the transcript has on the question; 1 \
when it leaves out what matters."""


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


QUESTION_SCHEMA = _object({"question": {"type": "string", "maxLength": QUESTION_CHARS}})
CHECKS_SCHEMA = _object({c: {"type": "boolean"} for c in CHECKS})
ANSWER_SCHEMA = _object({"answer": {"type": "string", "maxLength": ANSWER_CHARS}})
SCORES_SCHEMA = _object({d: {"type": "integer", "enum": [1, 2, 3, 4, 5]} for d in ("faithfulness", "completeness")})


@dataclass
class TokenMeter:
    """Estimated tokens spent (prompt and answer) against ``budget``."""

    budget: int
    spent: int = 0

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.budget

    def count(self, messages: list[dict[str, str]], answer: str) -> None:
        chars = sum(len(m["content"]) for m in messages) + len(answer)
        self.spent += math.ceil(chars / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Verdict:
    """The self-verifier's checks: the names of those that failed (none: the question passes)."""

    failed: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failed


class Roles:
    """The four roles on one client, counting into one :class:`TokenMeter`."""

    def __init__(self, client: LLMClient, meter: TokenMeter) -> None:
        self.client = client
        self.meter = meter

    def ask(self, system: str, user: str, schema: dict[str, Any], name: str) -> dict[str, Any]:
        """The JSON object answering ``user``; :class:`BadAnswer` (``invalid-json``) if there is none,
        and what :meth:`LLMClient.complete_text` raises."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        text = self.client.complete_text(messages, schema, name=name)
        self.meter.count(messages, text)
        data = extract_json(text, dict)
        if not isinstance(data, dict):
            raise BadAnswer("invalid-json", f"not a JSON object: {text[:80]!r}")
        return data

    def generate(self, reference: str, demand: str, earlier: list[str], elsewhere: bool = False) -> str:
        """A question testing ``demand`` (``elsewhere``: a replacement, from another part of the meeting)."""
        avoid = "".join(f"- {q}\n" for q in earlier[-20:])
        avoid = f"Do not repeat these questions:\n{avoid}" if avoid else ""
        if elsewhere:
            avoid += "Take it from another part of the meeting than your last question.\n"
        prompt = GENERATOR_PROMPT.format(transcript=reference, demand=demand,
                                         guidance=DEMANDS.get(demand, demand), avoid=avoid)
        return _text(self.ask(GENERATOR_SYSTEM, prompt, QUESTION_SCHEMA, "question"), "question")

    def verify(self, reference: str, question: str) -> Verdict:
        """The five checks of ``question`` (a check the answer leaves out or does not say true fails)."""
        data = self.ask(VERIFIER_SYSTEM, VERIFIER_PROMPT.format(transcript=reference, question=question),
                        CHECKS_SCHEMA, "checks")
        return Verdict(tuple(c for c in CHECKS if data.get(c) is not True))

    def answer(self, material: str, question: str) -> str:
        """The system under test's answer from its own output (``material``)."""
        prompt = ASSISTANT_PROMPT.format(material=material, question=question)
        return _text(self.ask(ASSISTANT_SYSTEM, prompt, ANSWER_SCHEMA, "answer"), "answer", allow_empty=True)

    def judge(self, reference: str, question: str, answer: str) -> tuple[int, int]:
        """Faithfulness and completeness (1-5) of ``answer``, judged against the reference transcript."""
        data = self.ask(JUDGE_SYSTEM, JUDGE_PROMPT.format(transcript=reference, question=question,
                                                          answer=answer or "(no answer)"), SCORES_SCHEMA, "scores")
        scores = tuple(data.get(k) for k in ("faithfulness", "completeness"))
        if not all(type(s) is int and 1 <= s <= 5 for s in scores):
            raise BadAnswer("wrong-shape", f"scores are not whole numbers from 1 to 5: {scores!r}"[:120])
        return scores[0], scores[1]


def _text(data: dict[str, Any], key: str, allow_empty: bool = False) -> str:
    """``data[key]`` as one line of text; :class:`BadAnswer` (``wrong-shape``) if it is not a string."""
    value = data.get(key)
    if not isinstance(value, str) or not (value.strip() or allow_empty):
        raise BadAnswer("wrong-shape", f"no {key} in the answer: {str(data)[:80]!r}")
    return " ".join(value.split())
