"""The ``extractive`` notes backend: no language model, deterministic, fast (the offline baseline).

:func:`extract_notes` reads a speaker-attributed transcript and finds

- **action items** in requests ("Adriana, can you add a load test for Kafka by Wednesday?") and
  commitments ("I'll send the DPA redlines by Friday"). The assignee is the person addressed by
  name, else the person who answers the request (their ``speaker_name``), else, for a
  commitment, the speaker. A reply to a request accepts it ("Sure, I'll ...") rather than
  opening a second item. Status asks ("can you give us an update") are not action items.
- **decisions** in "let's go with X", "we decided on X", "the decision is X", with the topic of
  the nearest "we need to decide on ..." before them.
- **an outline**: the subjects of status questions and decisions, in order.
- **a summary**: the most informative sentences (rare words of the meeting, numbers, names,
  the sentences that hold items and decisions), in the order they were said.

With a ``roster`` (the workspace people, as the L3 context gives them), names are resolved to
canonical names ("Toby" -> "Tobias Tanaka", also in the summary); without one (L1) a name is
kept as written and a speaker without a name yields no assignee. Fillers (um, uh) and
stuttered repeats are dropped first; text with or without punctuation works.
"""
from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from speechkit.core.options import StageOptions, bounded
from speechkit.meeting_context import NotesContext
from speechkit.notes import ActionItem, Decision, Notes
from speechkit.text_similarity import FUNCTION_WORDS, fold
from speechkit.transcript import Transcript
from speechkit.workspace import Person

FILLERS = frozenset({"um", "uh", "er", "erm", "hmm", "mm", "uh-huh", "mm-hmm"})
#: Capitalised words that start sentences and are never an addressee.
NOT_ADDRESSEES = frozenset(fold(w) for w in (
    "so okay ok and but yeah yes well hey hi hello sorry now then also great right alright oh actually "
    "maybe please i you we they he she it also just sure good thanks cool fine anyway").split())
_DUE = (r"(?:(?:next|this) )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|"
        r"eod|eow|end of (?:the )?(?:day|week|month)|next week|\w+ \d{1,2}(?:st|nd|rd|th)?)")
#: A request to the person addressed ("Adriana, can you ..."): the task follows it.
REQUEST = re.compile(r"\b(?:can|could|would|will) you (?:please )?(?P<task>.+)", re.I)
_COMMIT = re.compile(r"\b(?:i'll|i will|i'm going to|i am going to|let me) (?P<task>.+)", re.I)
_BY_DUE = re.compile(rf"\s+by (?P<due>{_DUE})\b.*$", re.I)
_STATUS_ASK = re.compile(r"^(?:give|get|tell|walk|remind|hear|repeat|say|share|send) (?:us|me)\b|^(?:hear|see) "
                         r"|\b(?:an?|quick|brief|short) (?:status )?update\b", re.I)
_DECIDED = re.compile(r"\b(?:let's|let us|we'll|we will) (?:go with|go for|pick|stick with|use) (?P<choice>.+)"
                      r"|\bwe(?:'ve| have)? (?:decided|agreed) (?:on|to) (?P<choice2>.+)"
                      r"|\bthe decision is (?:to )?(?P<choice3>.+)", re.I)
_TOPIC = re.compile(r"\b(?:decide|decision|agree) (?:on|about|between) (?P<topic>.+)", re.I)
_SUBJECT = re.compile(r"\b(?:where are we on|update on|how is|how's|status of|decide on) (?P<topic>.+)", re.I)
_CUT = re.compile(r"\s+(?:it's|it is|either|whether|because|going|then|too|as well|for now|right now)\b.*$"
                  r"|[.,;:?!](?:\s.*)?$", re.I)


@dataclass(frozen=True)
class ExtractiveOptions(StageOptions):
    """``summary_share`` (0, 1]: the share of the meeting's sentences the summary keeps, at most
    ``max_summary_sentences`` [1, 1000]; ``reply_turns`` [0, 100]: how many turns after a request
    its answer is looked for; ``topic_turns`` [0, 1000]: how many turns before a decision its
    topic is looked for."""

    summary_share: float = bounded(0.3, gt=0.0, le=1.0)
    max_summary_sentences: int = bounded(12, ge=1, le=1000)
    reply_turns: int = bounded(2, ge=0, le=100)
    topic_turns: int = bounded(6, ge=0, le=1000)


@dataclass(frozen=True)
class _Turn:
    speaker: str
    name: str | None
    sentences: tuple[str, ...]


def _clean(text: str) -> str:
    """``text`` without fillers and stuttered repeats ("the the", "Toby Toby")."""
    out: list[str] = []
    for word in text.split():
        bare = fold(word)
        if bare in FILLERS or (out and bare and bare == fold(out[-1])):
            continue
        out.append(word)
    return " ".join(out)


def split_sentences(text: str) -> tuple[str, ...]:
    """The sentences of ``text`` (fillers and stutters removed), cut after ``.``, ``?`` or ``!``."""
    return tuple(s for s in (p.strip() for p in re.split(r"(?<=[.?!])\s+", _clean(text))) if s)


def _tidy(phrase: str) -> str:
    return _CUT.sub("", phrase).strip(" ,.;:?!")


class Roster:
    """Name resolution against the workspace people (or none, at L1)."""

    def __init__(self, people: Sequence[Person] | None) -> None:
        self.people = tuple(people or ())
        self.keys: dict[str, Person] = {}
        for p in self.people:
            for key in (p.name, p.first_name, *p.nicknames):
                self.keys.setdefault(fold(key), p)

    def resolve(self, name: str | None) -> Person | None:
        if not name or not self.people:
            return None
        key = fold(name)
        if key in self.keys:
            return self.keys[key]
        close = difflib.get_close_matches(key, list(self.keys), n=1, cutoff=0.8)
        return self.keys[close[0]] if close else None

    def item(self, description: str, due: str | None, addressed: str | None, answered_by: str | None) -> ActionItem:
        """The action item, its assignee resolved: the addressee, else whoever answered."""
        for name in (addressed, answered_by):
            person = self.resolve(name)
            if person is not None:
                return ActionItem(description, person.name, person.id, due)
        return ActionItem(description, addressed or answered_by, None, due)

    def canonical(self, sentence: str) -> str:
        """``sentence`` with each first name or nickname (and a following surname) written as the canonical name."""
        for p in self.people:
            words = [re.escape(w) for w in (p.first_name, *p.nicknames)]
            surname = re.escape(p.name.split()[-1]) if len(p.name.split()) > 1 else None
            tail = rf"(?:\s+{surname})?" if surname else ""
            sentence = re.sub(rf"\b(?:{'|'.join(words)}){tail}\b", p.name, sentence)
        return sentence


def _addressee(before: str) -> str | None:
    """The name right before "can you": one or two capitalised words that are not sentence openers."""
    words = [w.strip(",;:") for w in before.split()][-2:]
    names = [w for w in words if w[:1].isupper() and fold(w) not in NOT_ADDRESSEES]
    if not names or names[-1] != words[-1]:
        return None
    return " ".join(names) if len(names) == 2 and names[0] == words[0] else names[-1]


def _task(phrase: str) -> tuple[str, str | None]:
    """``(description, due)`` of a request's or commitment's verb phrase."""
    phrase = phrase.strip(" ,.;:?!")
    due = None
    m = _BY_DUE.search(phrase)
    if m:
        due, phrase = m.group("due"), phrase[:m.start()]
    return _tidy(phrase), due


def _turns(transcript: Transcript) -> list[_Turn]:
    out = []
    for seg in transcript.segments:
        sentences = split_sentences(seg.text)
        if sentences:
            out.append(_Turn(seg.speaker, seg.speaker_name, sentences))
    return out


def _reply(turns: list[_Turn], index: int, reach: int) -> int | None:
    """The index of the first turn by someone else within ``reach`` turns after ``index``."""
    return next((j for j in range(index + 1, min(len(turns), index + 1 + reach))
                 if turns[j].speaker != turns[index].speaker), None)


def _action_items(turns: list[_Turn], roster: Roster,
                  options: ExtractiveOptions) -> tuple[list[ActionItem], set[tuple[int, int]]]:
    items: list[ActionItem] = []
    used: set[tuple[int, int]] = set()
    requests: list[tuple[int, int]] = []  # (turn, item) of each request
    replies: set[int] = set()
    for i, turn in enumerate(turns):
        for k, sentence in enumerate(turn.sentences):
            request = REQUEST.search(sentence)
            if request and not _STATUS_ASK.search(request.group("task")):
                description, due = _task(request.group("task"))
                if description:
                    reply = _reply(turns, i, options.reply_turns)
                    addressed = _addressee(sentence[:request.start()])
                    items.append(roster.item(description, due, addressed, None if reply is None else turns[reply].name))
                    requests.append((i, len(items) - 1))
                    used.add((i, k))
                    if reply is not None:
                        replies.add(reply)
                continue
            commit = _COMMIT.search(sentence)
            if not commit:
                continue
            description, due = _task(commit.group("task"))
            echoed = next((n for t, n in reversed(requests) if i - t <= options.reply_turns and description
                           and fold(description).startswith(fold(items[n].description))), None)
            if echoed is not None:  # "Sure, I'll <the request, in full> by <day>": the same item, completed
                items[echoed] = replace(items[echoed], description=description, due=items[echoed].due or due)
            elif i not in replies and len(description.split()) >= 2:
                items.append(roster.item(description, due, None, turn.name))
                used.add((i, k))
    return items, used


def _decisions(turns: list[_Turn], options: ExtractiveOptions) -> tuple[list[Decision], set[tuple[int, int]]]:
    decisions: list[Decision] = []
    used: set[tuple[int, int]] = set()
    for i, turn in enumerate(turns):
        for k, sentence in enumerate(turn.sentences):
            m = _DECIDED.search(sentence)
            if not m:
                continue
            choice = _tidy(next(g for g in m.groups() if g))
            if not choice:
                continue
            topic = None
            for earlier in reversed(turns[max(0, i - options.topic_turns):i + 1]):
                asked = next((_TOPIC.search(s) for s in earlier.sentences if _TOPIC.search(s)), None)
                if asked and _tidy(asked.group("topic")):
                    topic = _tidy(asked.group("topic"))
                    break
            decisions.append(Decision(topic or _tidy(sentence) or choice, choice))
            used.add((i, k))
    return decisions, used


def _outline(turns: list[_Turn]) -> list[str]:
    found = [_tidy(m.group("topic")) for t in turns for s in t.sentences for m in [_SUBJECT.search(s)] if m]
    return list(dict.fromkeys(f for f in found if f))


def _summary(turns: list[_Turn], marked: set[tuple[int, int]], roster: Roster, options: ExtractiveOptions) -> str:
    """The most informative sentences, in the order said."""
    sentences = [((i, k), s) for i, t in enumerate(turns) for k, s in enumerate(t.sentences) if len(s.split()) >= 4]
    if not sentences:
        return ""
    words = [{fold(w) for w in s.split()} - FUNCTION_WORDS - {""} for _, s in sentences]
    df: dict[str, int] = {}
    for ws in words:
        for w in ws:
            df[w] = df.get(w, 0) + 1
    n = len(sentences)
    scores = []
    for (key, text), ws in zip(sentences, words):
        # fsum: a set's order (string hashing) changes between processes; the sum must not
        informative = math.fsum(math.log(1 + n / df[w]) for w in ws) / math.sqrt(len(text.split()))
        named = sum(1 for w in text.split()[1:] if w[:1].isupper() or any(c.isdigit() for c in w))
        scores.append(informative + 0.5 * named + (2.0 if key in marked else 0.0))
    keep = max(1, min(options.max_summary_sentences, math.ceil(options.summary_share * n)))
    chosen: list[int] = []
    for j in sorted(range(n), key=lambda j: (-scores[j], j)):
        if len(chosen) == keep:
            break
        if all(len(words[j] & words[c]) < 0.7 * max(1, min(len(words[j]), len(words[c]))) for c in chosen):
            chosen.append(j)
    text = [sentences[j][1] for j in sorted(chosen)]
    return " ".join(roster.canonical(s) if roster.people else s for s in text)


def extract_notes(transcript: Transcript, roster: Sequence[Person] | None = None,
                  options: ExtractiveOptions = ExtractiveOptions()) -> Notes:
    """The notes of one meeting from its speaker-attributed transcript (see the module docstring)."""
    names = Roster(roster)
    turns = _turns(transcript)
    items, item_keys = _action_items(turns, names, options)
    decisions, decision_keys = _decisions(turns, options)
    return Notes(summary=_summary(turns, item_keys | decision_keys, names, options),
                 action_items=tuple(dict.fromkeys(items)), decisions=tuple(dict.fromkeys(decisions)),
                 outline=tuple(_outline(turns)))


class ExtractiveSummarizer:
    """The ``extractive`` backend: :func:`extract_notes` with the roster the level's notes context gives."""

    Options = ExtractiveOptions
    #: The stage keeps its results in the stage cache.
    stored = True

    def __init__(self, options: ExtractiveOptions, device: str = "auto") -> None:
        self.options = options

    def summarize(self, transcript: Transcript, context: NotesContext) -> tuple[Notes, dict]:
        """The notes of ``transcript`` and what the backend did (for run.json)."""
        notes = extract_notes(transcript, context.roster or None, self.options)
        return notes, {"backend": "extractive", "roster": len(context.roster)}
