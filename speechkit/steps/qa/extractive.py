"""The ``extractive`` QA backend: no language model, deterministic (the baseline).

Each question is matched by its key words (its content words less the words every question of
its type has: "who owns the action item to ..."; a word also matches one it starts or that starts
it, "run" and "running") against the system's own output, and the answer is the entity of the
expected type found there:

- ``who_owns`` / ``due``: the action item of the meeting's notes whose description shares most
  key words with the question (the run's notes; where they have no such item, the notes the
  extractive notes backend takes from the transcript), its assignee or its due day.
- ``decision``: the notes' decision whose topic and choice share most key words; its choice.
- ``who_asked``: the action item the extractive notes backend finds in the transcript
  (:func:`~speechkit.stages.summarize.extractive.requested_items`: requests, open calls, named
  assignments) whose description shares most key words; the name of the speaker who asked for it
  (as identification named it; a label such as ``SPEAKER_00`` names nobody; a commitment nobody
  asked for answers nothing).
- ``number``: the transcript sentence with a number that shares most key words, its own counted
  twice and those of the sentence before it once (where a question asked for the number: "What's
  the test batch at the moment?" "It's 2,500."; backchannels are skipped); the first number in it
  after those words, or, where the speaker corrects it ("2,500, sorry, 2,600"), the number after
  the correction, with the word after it (the unit), as written.

Person names are resolved against the roster the level gives (L3: "Toby" -> "Tobias Tanaka"),
with the notes backend's resolver (:mod:`speechkit.stages.summarize.extractive`); without one a
name stays as written. Ties go to the earliest candidate; a question with no candidate sharing a
key word gets the empty answer.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from speechkit.core.options import StageOptions
from speechkit.io.questions import Ask
from speechkit.io.run_output import MeetingOutput
from speechkit.metrics.qa import normalized
from speechkit.stages.summarize.extractive import (
    Roster,
    extract_notes,
    is_backchannel,
    requested_items,
    split_sentences,
)
from speechkit.text_similarity import content_words

#: Words of the question templates, never key words.
TEMPLATE_WORDS = frozenset("who owns own asked ask action item what was decided decide about when due "
                           "is are for".split())
_NUMBER = re.compile(r"\d")
#: Words that take back the number said before them.
_CORRECTION = frozenset("sorry correction rather mean make actually wait".split())
_MONTHS = frozenset("january february march april may june july august september october november december".split())


@dataclass(frozen=True)
class ExtractiveQaOptions(StageOptions):
    """The extractive QA backend has no options."""


def key_words(text: str) -> frozenset[str]:
    """The words of ``text`` a match is scored on: its content words, template words left out."""
    return content_words(text) - TEMPLATE_WORDS


def shared_words(wanted: frozenset[str], words: frozenset[str]) -> int:
    """How many of ``wanted`` occur in ``words``, a word also matching one it starts or that starts
    it, three letters at least ("run" and "running", "test" and "tests")."""
    return sum(1 for w in wanted if w in words or any(
        min(len(w), len(o)) >= 3 and (o.startswith(w) or w.startswith(o)) for o in words))


def _best(ask: Ask, candidates: Sequence[Any], text: Any, context: Any = None) -> Any:
    """The candidate whose ``text(candidate)`` shares most key words with the question
    (:func:`shared_words`), those of ``context(candidate)`` (if given) counting half as much; the
    first of equals; None when none shares one."""
    wanted = key_words(ask.text)
    best, shared = None, 0
    for candidate in candidates:
        n = 2 * shared_words(wanted, content_words(text(candidate)))
        if context is not None:
            n += shared_words(wanted, content_words(context(candidate)))
        if n > shared:
            best, shared = candidate, n
    return best


def _number(sentence: str, ask: Ask) -> str:
    """The first number of ``sentence`` after the question's key words (the one after a correction
    word, where one follows it), with the word after it, as written."""
    words = [w for w in (raw.strip(",.;:?!") for raw in sentence.split()) if w]
    wanted = key_words(ask.text)
    start = max((i for i, w in enumerate(words) if content_words(w) & wanted), default=-1) + 1
    numbers = [i for i in [*range(start, len(words)), *range(0, start)] if _NUMBER.search(words[i])]
    if not numbers:
        return ""
    i = numbers[0]
    later = [j for j in numbers[1:] if j > i and _CORRECTION & {w.lower() for w in words[i + 1:j]}]
    i = later[0] if later else i
    unit = words[i + 1:i + 2]
    return " ".join([words[i - 1]] * (i > 0 and words[i - 1].lower() in _MONTHS) + [words[i]] + unit)


class ExtractiveAnswerer:
    """The ``extractive`` QA backend (see the module docstring)."""

    Options = ExtractiveQaOptions

    def __init__(self, options: ExtractiveQaOptions) -> None:
        self.options = options

    def check(self) -> None:
        """Nothing to check before answering."""

    def answer(self, asks: Sequence[Ask], output: MeetingOutput) -> tuple[dict[str, str], dict[str, Any]]:
        """The answers (question id -> text) and what the backend did."""
        roster = Roster(output.context.roster)
        extracted = extract_notes(output.transcript, output.context.roster or None)
        notes = [n for n in (output.notes, extracted) if n is not None]
        sentences = [s for seg in output.transcript.segments if not is_backchannel(seg.text)
                     for s in split_sentences(seg.text)]
        said = [(s, sentences[k - 1] if k else "") for k, s in enumerate(sentences) if _NUMBER.search(normalized(s))]
        asked = requested_items(output.transcript, output.context.roster or None)

        def person(name: str | None) -> str:
            found = roster.resolve(name)
            return found.name if found is not None else (name or "")

        def item(ask: Ask) -> Any:
            return next((i for n in notes if (i := _best(ask, n.action_items, lambda a: a.description))), None)

        out: dict[str, str] = {}
        for ask in asks:
            if ask.type in ("who_owns", "due"):
                found = item(ask)
                out[ask.id] = ("" if found is None else person(found.assignee) if ask.type == "who_owns"
                               else found.due or "")
            elif ask.type == "decision":
                found = next((d for n in notes if (d := _best(ask, n.decisions, lambda d: f"{d.topic} {d.choice}"))),
                             None)
                out[ask.id] = found.choice if found is not None else ""
            elif ask.type == "who_asked":
                found = _best(ask, asked, lambda a: a[0].description)
                out[ask.id] = person(found[1]) if found is not None and found[1] else ""
            else:
                found = _best(ask, said, lambda s: s[0], lambda s: s[1])
                out[ask.id] = _number(found[0], ask) if found is not None else ""
        return out, {"backend": "extractive", "roster": len(output.context.roster),
                     "notes": "run" if output.notes is not None else "extracted"}

