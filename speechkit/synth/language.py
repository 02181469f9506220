"""The language a synthetic workspace is written in: its pools, phrasing families, spoken forms,
text rules, voices and gold-note phrasing (docs/synth.md, "Languages").

:class:`Language` is English, as the generator always wrote it; :mod:`speechkit.synth.cjk_language`
adds the rules Chinese and Japanese share (:mod:`speechkit.synth.zh`, :mod:`speechkit.synth.ja`),
and ``mixed`` is a Chinese or Japanese workspace whose jargon, tickers and numbers are English
(:func:`speechkit.synth.languages.language` gives each). Everything a meeting says goes through
its language: how a template becomes pieces (:meth:`Language.render`), how a number is said
(:meth:`Language.number_term`), which fillers a person uses, how long a minute of talk is.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from speechkit import cjk
from speechkit.synth import pools
from speechkit.synth.spoken import MONTHS, Piece, filler, plain
from speechkit.synth.state import Persona, Term, number_term

_SLOT = re.compile(r"^(.*?)\{(\w+)\}(.*)$")
_DISFLUENCY = re.compile(r"^\[([\w']+)\]$")


@dataclass(frozen=True)
class Pools:
    """What a latent state is sampled from (:mod:`speechkit.synth.pools` for English).

    ``first_names``: ``(given name, nickname or None)``; ``projects``: the project templates
    (name, topic, jargon, numbers, tasks, statuses, decisions; :data:`pools.PROJECTS`)."""

    orgs: tuple[str, ...]
    first_names: tuple[tuple[str, str | None], ...]
    surnames: tuple[str, ...]
    roles: tuple[str, ...]
    backchannels: tuple[str, ...]
    weekdays: tuple[str, ...]
    projects: tuple[dict, ...]
    enrollment_sentences: tuple[str, ...]


ENGLISH_POOLS = Pools(pools.ORGS, pools.FIRST_NAMES, pools.SURNAMES, pools.ROLES, pools.BACKCHANNELS,
                      pools.WEEKDAYS, pools.PROJECTS, pools.ENROLLMENT_SENTENCES)


#: English gold-notes sentences (:mod:`speechkit.synth.notes`).
NOTES = {"head": "{title} with {attendees}.", "item": "{name} is to {description} by {due}.",
         "closed": "{name} has done the action item to {description}.",
         "decision": "Decided on {question}: {choice}.", "number": "{project}: {topic} is {value}{unit}.",
         "unit": " {unit}"}
#: English gold questions (:mod:`speechkit.synth.questions`).
QUESTIONS = {"task": "the action item to {description}", "who_owns": "Who owns {task}?",
             "due": "When is {task} due?", "who_asked": "Who asked for {task}?",
             "decision": "What was decided about {question}?", "number": "What is {topic} for {project}?",
             "answer": "{value} {unit}"}


class Language:
    """English: the pools of :mod:`speechkit.synth.pools`, the families of
    :mod:`speechkit.synth.families`, words split at spaces, numbers said in English.

    ``code`` is what the manifest's ``language`` says (``en``, ``zh``, ``ja``, ``mixed``),
    ``languages`` the languages spoken (``("zh", "en")`` for a mixed one), ``base`` the language
    of the phrasing, names and gold notes. ``words_per_minute`` is the speaking rate a meeting's
    length is written to, in the language's verbatim words (characters in Chinese).
    ``rate_scale`` scales each person's filler, repeat and restart rates (per verbatim word)."""

    code = "en"
    base = "en"
    languages: tuple[str, ...] = ("en",)
    words_per_minute = 140
    fillers = ("um", "uh")
    repair_markers = ("I mean", "sorry", "well", "or")
    pools = ENGLISH_POOLS
    notes = NOTES
    questions = QUESTIONS

    @property
    def families(self) -> dict:
        """act -> its families (checked on import of the table)."""
        from speechkit.synth.families import FAMILIES

        return FAMILIES

    @property
    def voices(self) -> tuple:
        """The voices a workspace of this language uses, in order of preference."""
        from speechkit.synth.voices import VOICES

        return VOICES

    # --- text -----------------------------------------------------------------------------------

    def plain(self, text: str) -> list[Piece]:
        """Pieces for ordinary text (:func:`speechkit.synth.spoken.plain`)."""
        return plain(text)

    def filler(self, word: str) -> Piece:
        """A disfluency piece saying ``word``."""
        return filler(word)

    def echo(self, piece: Piece) -> list[Piece]:
        """``piece`` said again as a disfluency (a repeated word, a restart)."""
        return [filler(w) for w in piece.words]

    def marker(self, text: str) -> list[Piece]:
        """A repair marker ("I mean") as disfluency pieces."""
        return [filler(w) for w in text.split()]

    def pause_before(self, previous: Piece) -> bool:
        """Whether a filler may come after ``previous`` (English: after any word)."""
        return True

    def term_piece(self, term: Term, suffix: str) -> Piece:
        """The piece of a term: said in its spoken form, written canonically, ``suffix`` (punctuation) after it."""
        say = term.tts.split()
        say[-1] += suffix
        return Piece(canonical=term.canonical + suffix, words=tuple(term.spoken.split()), say=tuple(say),
                     term=None if term.kind == "slip" else term.canonical)

    def render(self, template: str, slots: dict[str, object]) -> list[Piece]:
        """Pieces for a template; ``{x}`` slots hold a Term, a Persona (said by first name) or text
        (rendered in turn); a ``[word]`` token is a disfluency."""
        out: list[Piece] = []
        for token in template.split():
            if d := _DISFLUENCY.match(token):
                out.append(self.filler(d.group(1)))
                continue
            m = _SLOT.match(token)
            if not m:
                out.extend(self.plain(token))
                continue
            prefix, key, suffix = m.groups()
            value = slots[key]
            if isinstance(value, Term):
                out.extend(self.plain(prefix))
                out.append(self.term_piece(value, suffix))
            elif isinstance(value, Persona):
                out.extend(self.plain(prefix + value.first_name + suffix))
            else:
                out.extend(self.render(prefix + str(value) + suffix, slots))
        return out

    def capital(self, text: str) -> str:
        """``text`` with its first letter capitalised (a sentence start)."""
        return text[:1].upper() + text[1:]

    def gerund(self, task: str) -> str:
        """A task (a verb phrase, "map the fields") as a noun phrase ("mapping the fields")."""
        verb, _, rest = task.partition(" ")
        if verb in ("set", "run"):
            verb += verb[-1]
        elif verb.endswith("e") and not verb.endswith("ee"):
            verb = verb[:-1]
        return f"{verb}ing {rest}".strip()

    def full_name(self, given: str, surname: str) -> str:
        """A person's full name from the pools' given name and surname."""
        return f"{given} {surname}"

    def nickname(self, nickname: str | None, surname: str) -> str | None:
        """The nickname of the pools' entry (a CJK one may be made from the surname)."""
        return nickname

    def meeting_title(self, kind: str, project: str, names: list[str]) -> str:
        """The title of a meeting of ``kind`` (``project``: its first project; ``names``: the attendees)."""
        return {"standup": "Team stand-up", "review": f"{project} review", "1:1": f"{names[0]} / {names[1]} 1:1"}[kind]

    def join(self, parts: list[str]) -> str:
        """Sentences or phrases joined as the language writes them (:func:`speechkit.cjk.join`)."""
        return cjk.join(parts)

    # --- numbers ----------------------------------------------------------------------------------

    def number_term(self, measure: str, value: int | dt.date, topic: str, unit: str) -> Term:
        """A number term of ``measure`` (:func:`speechkit.synth.state.number_term`)."""
        return number_term(measure, value, topic, unit)

    def value_of(self, term: Term) -> int | dt.date:
        """The value :meth:`number_term` wrote ``term`` from."""
        if term.measure == "date":
            month, day = term.canonical.split()
            return dt.date(2026, MONTHS.index(month) + 1, int(day))
        return int("".join(c for c in term.canonical if c.isdigit()))

    # --- gold notes and questions ---------------------------------------------------------------

    def listing(self, names: list[str]) -> str:
        """``a``, ``a and b``, ``a, b and c``."""
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"

    def without_article(self, text: str) -> str:
        """``text`` without a leading article (a decision's choice as a key entity)."""
        lowered = text.lower()
        return next((text[len(a):] for a in ("a ", "an ", "the ") if lowered.startswith(a)), text)

    def contains(self, text: str, term: str) -> bool:
        """Whether ``term`` occurs in ``text`` as whole words."""
        return f" {term} " in f" {text} "

    def notes_text(self, key: str, **fields: Any) -> str:
        """The gold-notes sentence ``key`` with its fields (:data:`NOTES` in English)."""
        return self.notes[key].format(**fields)

    def question_text(self, key: str, **fields: Any) -> str:
        """The gold question ``key`` with its fields (:data:`QUESTIONS` in English)."""
        return self.questions[key].format(**fields)


ENGLISH = Language()

