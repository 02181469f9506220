"""The ``extractive`` notes backend: no language model, deterministic, fast (the offline baseline).

:func:`extract_notes` reads a speaker-attributed transcript, turn by turn, and finds

- **action items**, from who says what to whom:

  - a request to the person addressed ("Adriana, can you add a load test for Kafka by
    Wednesday?"); a request to relay ("can you ask Priya to ...") belongs to the person named;
  - an open call ("who can ...", "can anyone ...", "someone needs to ...") taken by whoever
    answers it ("I'll take it");
  - a first-person commitment ("I'll send the DPA redlines by Friday", "I can ... if that helps");
  - a named assignment ("Priya should ...", "Priya's taking ...", "let's have Priya ...", "let's
    give ... to Priya", "... goes to Priya").

  The assignee is the person named, else the person who answers (their ``speaker_name``; a
  backchannel, "yeah", "got it", is no answer and is skipped), else, for a commitment, the
  speaker. A reply to a request accepts it ("Sure, I'll ...") rather than opening a second item;
  "I'll tell her", "I'll send him a note" pass an item on and open none. The due day is the one
  the request gives ("by Friday", ", due Friday", or in a later sentence of the same turn,
  "Ideally by Friday"); a correction within ``correction_turns`` turns ("actually, make that
  Thursday", "let's say Thursday") replaces it. A request the answer declines ("I can't,
  I'm swamped") goes to whoever is asked for it next or takes it next. Status asks ("can you give
  us an update") and hypotheticals ("we could ... some day") are not action items.
- **decisions** in "let's go with X", "let's stay with X", "we go with X", "we decided on X",
  "the decision is X", "X it is", "the votes for X", with the topic the sentence names ("X for the
  batch schedule") or that of the nearest "we need to decide on ..." or "for/on <topic>, ..."
  before them; a later decision on the same topic (or one that says "scrap that", "actually",
  "instead", "no,") replaces the earlier one: the notes keep what was decided last.
- **an outline**: the subjects of status questions and decisions, in order.
- **a summary**: the most informative sentences (rare words of the meeting, numbers, names,
  the sentences that hold items, decisions or a number), in the order they were said.

With a ``roster`` (the workspace people, as the L3 context gives them), names are resolved to
canonical names ("Toby" -> "Tobias Tanaka", also in the summary); without one (L1) a name is
kept as written and a speaker without a name yields no assignee. Fillers (um, uh) and
stuttered repeats are dropped first; text with or without punctuation works.
:func:`requested_items` gives the action items with who asked for each (the QA backend's
``who_asked``).
"""
from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from speechkit.core.options import StageOptions, bounded
from speechkit.meeting_context import NotesContext
from speechkit.notes import ActionItem, Decision, Notes
from speechkit.text_similarity import FUNCTION_WORDS, fold
from speechkit.transcript import Transcript
from speechkit.workspace import Person

FILLERS = frozenset({"um", "uh", "er", "erm", "hmm", "mm", "uh-huh", "mm-hmm"})
#: The words of a backchannel ("yeah", "got it", "makes sense"): a turn of only these holds no act.
BACKCHANNEL_WORDS = frozenset(w for said in (
    "yeah yep yes right okay ok sure mm-hmm mhm uh-huh got it makes sense cool great true exactly nice".split())
    for w in fold(said).split())
#: Capitalised words that start sentences and are never an addressee.
NOT_ADDRESSEES = frozenset(fold(w) for w in (
    "so okay ok and but yeah yes well hey hi hello sorry now then also great right alright oh actually "
    "maybe please i you we they he she it also just sure good thanks cool fine anyway that this there these "
    "those everyone everybody someone somebody anyone nobody everything something nothing which what who "
    "monday tuesday wednesday thursday friday saturday sunday today tomorrow").split())
_DUE = (r"(?:(?:next|this) )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|"
        r"eod|eow|end of (?:the )?(?:day|week|month)|next week|\w+ \d{1,2}(?:st|nd|rd|th)?)")
_NAME = r"[A-Z][\w-]*"
#: A request to the person addressed ("Adriana, can you ..."): the task follows it.
REQUEST = re.compile(r"\b(?:(?:can|could|would|will) you (?:please )?|would you mind |would you be able to |"
                     r"are you able to |do you have time to |can i ask you to |could i get you to |i need you to |"
                     r"i'd like you to )(?P<task>.+)", re.I)
#: A request to pass on ("can you ask Priya to ..."): the item is the named person's.
_RELAYED = re.compile(rf"^(?:ask|tell|get|have) (?P<name>{_NAME}) to (?P<task>.+)")
#: A request to whoever takes it ("who can ...", "can anyone ...", "we need someone to ...").
_OPEN_CALL = re.compile(r"\b(?:who can|who could|who wants to|who'll|who will|who's going to|who is going to|"
                        r"can anyone|could anyone|can someone|could someone|can somebody|could somebody|"
                        r"does anyone want to|anyone want to|anyone free to|anyone able to|any volunteers to|"
                        r"(?:we )?need (?:someone|somebody|a volunteer) to|someone (?:needs|has) to|"
                        r"somebody (?:needs|has) to) (?P<task>.+)", re.I)
_COMMIT = re.compile(r"\b(?:i'll|i will|i'm going to|i am going to|let me|i can|i could|i'm happy to|"
                     r"i am happy to|put me down to|i'll go ahead and|i'm taking|i've got|i'm on) (?P<task>.+)", re.I)
#: Someone named gets the item: "Priya should ...", "Priya's taking ...", "let's have Priya ...".
_NAMED = re.compile(rf"(?:^|, )(?P<name>{_NAME}) (?:should|will|is going to|needs to|has to|can take|owns|takes|"
                    r"to) (?P<task>.+)"
                    rf"|(?:^|, )(?P<name2>{_NAME})(?:'s| is) (?:taking|handling|on|doing|got|picking up|owning) "
                    r"(?P<task2>.+)"
                    rf"|(?:^|\b(?i:let's|let us|we'll|can we|could we) )(?i:have|get) (?P<name3>{_NAME}) (?:to )?"
                    r"(?P<task3>.+)")
_GIVEN = re.compile(rf"\b(?:give|hand|assign|pass|leave) (?P<task>.+?) (?:to|with) (?P<name>{_NAME})\b"
                    rf"|^(?P<task2>.+?) (?:goes|go|is going) to (?P<name2>{_NAME})\b"
                    rf"|\bput (?P<name3>{_NAME}) (?:down )?(?:for|on) (?P<task3>.+)")
#: A commitment that only accepts ("I'll take it") or passes an item on ("I'll tell her").
_ACCEPT_ONLY = re.compile(r"^(?:(?:do|take|own|handle|grab|cover|pick up|get|look into|sort out|deal with|"
                          r"check|have) )?(?:it|that|this|one)(?: one)?$", re.I)
_RELAY = re.compile(r"^(?:tell|ask|let \S+ know|send \S+ an? (?:note|message|email|ping)|ping|loop in|"
                    r"follow up with)\b", re.I)
_ACCEPTS = re.compile(r"\b(?:i can|i'll|i will|i could|me|sure|happy to|on it|i've got|i got|mine|leave it with me|"
                      r"i'm on|count me in)\b", re.I)
_DECLINES = re.compile(r"\b(?:can't|cannot|won't be able|not this week|swamped|no bandwidth|too much on|"
                       r"i'm out|have to pass|not me)\b", re.I)
_BY_DUE = re.compile(rf"\s+(?:by|due|before|until|no later than|for) (?P<due>{_DUE})\b.*$", re.I)
_DUE_LATER = re.compile(rf"\b(?:by|due|before|until|no later than) (?P<due>{_DUE})\b|\b(?P<due2>{_DUE}) at the "
                        r"latest\b", re.I)
_DUE_FIX = re.compile(rf"\b(?:make|change|move|push|bump|shift) (?:that|it|this)(?: to| back to| out to)? "
                      rf"(?P<due>{_DUE})\b|\blet's say (?P<due2>{_DUE})\b|\b(?P<due3>{_DUE}) instead\b"
                      rf"|\bactually,? (?P<due4>{_DUE})\b", re.I)
_NOT_TASK = re.compile(r"^(?:be|have been|probably|still|not|never|also)\b", re.I)
_HYPOTHETICAL = re.compile(r"\b(?:some ?day|one day|if we had|would be nice|eventually)\b", re.I)
_STATUS_ASK = re.compile(r"^(?:give|get|tell|walk|remind|hear|repeat|say|share|send) (?:us|me)\b|^(?:hear|see) "
                         r"|\b(?:an?|quick|brief|short) (?:status )?update\b", re.I)
_DECIDED = re.compile(r"\b(?:let's|let us|we'll|we will|we should|we're going to) (?:go with|go for|pick|choose|"
                      r"stick with|stay with|keep|settle on|opt for|use) (?P<choice>.+)"
                      r"|\bwe(?:'ve| have)? (?:decided|agreed|settled) (?:on|to|that) (?P<choice2>.+)"
                      r"|\bthe (?:decision|call|verdict) is (?:to )?(?P<choice3>.+)"
                      r"|\b(?:we go|we're going|we are going|going) with (?P<choice4>.+)"
                      r"|(?:^|, )(?:so |then )?(?!(?:that|that's|this|it|it's|which|what|how|here|there)\b)"
                      r"(?P<choice5>[^,]{1,40}?) it is[.!]?$"
                      r"|\b(?:votes|vote) for (?P<choice6>.+)|\bmajority (?:wants|is for|for) (?P<choice7>.+)", re.I)
_OWN_TOPIC = re.compile(r"^(?P<choice>.+?) (?:for|on) (?P<topic>the .+)$")
_REVERSAL = re.compile(r"\b(?:scrap that|actually|instead|on second thought|never mind|wait)\b|\bno,", re.I)
_TOPIC = re.compile(r"\b(?:decide|decision|agree) (?:on|about|between) (?P<topic>.+)"
                    r"|^(?:so |okay |and )?(?:for|on|about) (?P<lead>[^,]+),", re.I)
_SUBJECT = re.compile(r"\b(?:where are we on|where are we with|update on|how is|how's|status of|decide on) "
                      r"(?P<topic>.+)", re.I)
_CUT = re.compile(r"\s+(?:it's|it is|either|whether|because|going|then|too|as well|for now|right now|if|ideally|"
                  r"hopefully|preferably)\b.*$"
                  r"|[.,;:?!](?:\s.*)?$", re.I)


@dataclass(frozen=True)
class ExtractiveOptions(StageOptions):
    """``summary_share`` (0, 1]: the share of the meeting's sentences the summary keeps, at most
    ``max_summary_sentences`` [1, 1000]; ``reply_turns`` [0, 100]: how many turns after a request
    its answer is looked for; ``topic_turns`` [0, 1000]: how many turns before a decision its
    topic is looked for; ``correction_turns`` [0, 100]: how many turns after an item a due-day
    correction ("make that Thursday") may come."""

    summary_share: float = bounded(0.3, gt=0.0, le=1.0)
    max_summary_sentences: int = bounded(12, ge=1, le=1000)
    reply_turns: int = bounded(2, ge=0, le=100)
    topic_turns: int = bounded(6, ge=0, le=1000)
    correction_turns: int = bounded(3, ge=0, le=100)


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

    def name(self, said: str | None) -> str | None:
        """The canonical name of a name as said (kept as said when the roster has no such person)."""
        person = self.resolve(said)
        return person.name if person is not None else said

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


def _group(m: re.Match, key: str) -> str | None:
    """The text of the first group of ``m`` named ``key`` or ``key`` and a digit that matched."""
    return next((v for k, v in m.groupdict().items() if k.rstrip("0123456789") == key and v is not None), None)


def _task(phrase: str) -> tuple[str, str | None]:
    """``(description, due)`` of a request's or commitment's verb phrase."""
    phrase = phrase.strip(" ,.;:?!")
    due = None
    m = _BY_DUE.search(phrase)
    if m:
        due, phrase = m.group("due"), phrase[:m.start()]
    return _tidy(phrase), due


def is_backchannel(text: str) -> bool:
    """Whether ``text`` is only a backchannel ("Yeah.", "Got it.", "Mm-hmm"), at most three words."""
    words = fold(text).split()
    return 0 < len(words) <= 3 and all(w in BACKCHANNEL_WORDS for w in words)


def _turns(transcript: Transcript) -> list[_Turn]:
    """The turns that say something: backchannels left out, so a reply is the next real turn."""
    out = []
    for seg in transcript.segments:
        sentences = split_sentences(seg.text)
        if sentences and not is_backchannel(seg.text):
            out.append(_Turn(seg.speaker, seg.speaker_name, sentences))
    return out


def _reply(turns: list[_Turn], index: int, reach: int) -> int | None:
    """The index of the first turn by someone else within ``reach`` turns after ``index``."""
    return next((j for j in range(index + 1, min(len(turns), index + 1 + reach))
                 if turns[j].speaker != turns[index].speaker), None)


@dataclass
class _Found:
    """An action item as found: what and by when, the name it was given to (``named``), the
    speaker who took it on (``taker``), the speaker who asked for it (None: nobody), its turn."""

    description: str
    due: str | None
    named: str | None
    taker: str | None
    asked_by: str | None
    turn: int


def _named(name: str, roster: Roster) -> bool:
    """Whether a capitalised word before "should"/"will" is a person: one of the roster's, or, without
    a roster, a word that is not a sentence opener or pronoun."""
    return roster.resolve(name) is not None if roster.people else fold(name) not in NOT_ADDRESSEES


def _request(turns: list[_Turn], i: int, k: int, roster: Roster,
             options: ExtractiveOptions) -> tuple[_Found, int | None] | None:
    """The item sentence ``k`` of turn ``i`` asks for (a request, a request to relay, an open call,
    a named assignment) and the turn that answers it (None: none looked for)."""
    turn, sentence = turns[i], turns[i].sentences[k]
    reply = _reply(turns, i, options.reply_turns)
    taker = None if reply is None else turns[reply].name
    m = REQUEST.search(sentence)
    if m and not _STATUS_ASK.search(m.group("task")):
        task, named = m.group("task"), _addressee(sentence[:m.start()])
        relayed = _RELAYED.match(task)
        if relayed:
            task, named, taker = relayed.group("task"), relayed.group("name"), None
        return _Found(*_task(task), named, taker, turn.name, i), reply
    m = _OPEN_CALL.search(sentence)
    if m:
        accepted = reply is not None and any(_ACCEPTS.search(s) for s in turns[reply].sentences)
        return _Found(*_task(m.group("task")), None, taker if accepted else None, turn.name, i), reply
    if sentence.rstrip().endswith("?"):
        return None
    m = _GIVEN.search(sentence) or _NAMED.search(sentence)
    if m and _named(_group(m, "name"), roster) and not _NOT_TASK.match(_group(m, "task")):
        return _Found(*_task(_group(m, "task")), _group(m, "name"), None, turn.name, i), None
    return None


def _found_items(turns: list[_Turn], roster: Roster,
                 options: ExtractiveOptions) -> tuple[list[_Found], set[tuple[int, int]]]:
    """Every action item of the meeting as found, and the (turn, sentence) keys that hold them.

    A request its answer declines ("I can't, I'm swamped") is open again: the next request for
    "it" ("Lena, can you take it?") or the next acceptance by someone else ("I'll take it") within
    ``reply_turns`` turns gives it its owner."""
    found: list[_Found] = []
    used: set[tuple[int, int]] = set()
    asks: list[_Found] = []  # the requests and open calls, whose answer may complete them
    replies: set[int] = set()
    declined: tuple[_Found, str, int] | None = None  # the item, who declined it, when
    for i, turn in enumerate(turns):
        if declined is not None and i - declined[2] > options.reply_turns + 1:
            declined = None
        for k, sentence in enumerate(turn.sentences):
            if _HYPOTHETICAL.search(sentence):
                continue
            fix = _DUE_FIX.search(sentence)
            recent = next((f for f in reversed(found) if i - f.turn <= options.correction_turns), None)
            if fix and recent is not None:
                recent.due = _group(fix, "due")
                used.add((i, k))
                continue
            asked = _request(turns, i, k, roster, options)
            if asked is not None:
                item, reply = asked
                if _ACCEPT_ONLY.match(item.description) and declined is not None:  # "then can you take it?"
                    declined[0].named, declined[0].taker = item.named, item.taker
                    declined = None
                elif item.description and not _ACCEPT_ONLY.match(item.description):
                    item.due = item.due or next((_group(m, "due") for s in turn.sentences[k:]
                                                 for m in [_DUE_LATER.search(s)] if m), None)
                    found.append(item)
                    asks.append(item)
                    used.add((i, k))
                    if reply is not None:
                        replies.add(reply)
                        if any(_DECLINES.search(s) for s in turns[reply].sentences):
                            item.named = item.taker = None
                            declined = (item, turns[reply].speaker, reply)
                continue
            commit = _COMMIT.search(sentence)
            if not commit:
                continue
            description, due = _task(commit.group("task"))
            if declined is not None and turn.speaker != declined[1] and _ACCEPT_ONLY.match(description):
                declined[0].named, declined[0].taker = None, turn.name  # "I'll take it", after a decline
                declined = None
                continue
            if not description or _ACCEPT_ONLY.match(description) or _RELAY.match(description):
                continue
            echoed = next((a for a in reversed(asks) if i - a.turn <= options.reply_turns
                           and fold(description).startswith(fold(a.description))), None)
            if echoed is not None:  # "Sure, I'll <the request, in full> by <day>": the same item, completed
                echoed.description, echoed.due = description, echoed.due or due
            elif i not in replies and len(description.split()) >= 2:
                found.append(_Found(description, due, None, turn.name, None, i))
                used.add((i, k))
    return found, used


def _decisions(turns: list[_Turn], options: ExtractiveOptions) -> tuple[list[Decision], set[tuple[int, int]]]:
    """The decisions, a later one on the same topic (or, with no topic found, one reversing the
    last: "scrap that, ...") replacing the earlier."""
    decisions: list[tuple[int, Decision]] = []
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
            own = _OWN_TOPIC.match(choice)  # "nightly runs for the batch schedule"
            if own:
                choice, topic = own.group("choice"), own.group("topic")
            for earlier in reversed(turns[max(0, i - options.topic_turns):i + 1] if topic is None else []):
                said = earlier.sentences[:k + 1] if earlier is turn else earlier.sentences
                asked = next((a for s in reversed(said) for a in [_TOPIC.search(s)] if a and _tidy(a.group("topic")
                              or a.group("lead"))), None)
                if asked:
                    topic = _tidy(asked.group("topic") or asked.group("lead"))
                    break
            decision = Decision(topic or _tidy(sentence) or choice, choice)
            if topic is not None:
                decisions = [(t, d) for t, d in decisions if fold(d.topic) != fold(topic)]
            elif decisions and _REVERSAL.search(sentence) and i - decisions[-1][0] <= options.topic_turns:
                decisions.pop()
            decisions.append((i, decision))
            used.add((i, k))
    return [d for _, d in decisions], used


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
        stated = any(c.isdigit() for c in text)  # a number stated is a fact notes keep
        scores.append(informative + 0.5 * named + (2.0 if key in marked else 0.0) + (3.0 if stated else 0.0))
    keep = max(1, min(options.max_summary_sentences, math.ceil(options.summary_share * n)))
    chosen: list[int] = []
    for j in sorted(range(n), key=lambda j: (-scores[j], j)):
        if len(chosen) == keep:
            break
        if all(len(words[j] & words[c]) < 0.7 * max(1, min(len(words[j]), len(words[c]))) for c in chosen):
            chosen.append(j)
    text = [sentences[j][1] for j in sorted(chosen)]
    return " ".join(roster.canonical(s) if roster.people else s for s in text)


def requested_items(transcript: Transcript, roster: Sequence[Person] | None = None,
                    options: ExtractiveOptions = ExtractiveOptions()) -> list[tuple[ActionItem, str | None]]:
    """The action items of ``transcript`` (as :func:`extract_notes` finds them), each with who asked
    for it (a name resolved as assignees are; None for an item nobody asked for)."""
    names = Roster(roster)
    found, _ = _found_items(_turns(transcript), names, options)
    return [(names.item(f.description, f.due, f.named, f.taker), names.name(f.asked_by)) for f in found]


def extract_notes(transcript: Transcript, roster: Sequence[Person] | None = None,
                  options: ExtractiveOptions = ExtractiveOptions()) -> Notes:
    """The notes of one meeting from its speaker-attributed transcript (see the module docstring)."""
    names = Roster(roster)
    turns = _turns(transcript)
    found, item_keys = _found_items(turns, names, options)
    items = [names.item(f.description, f.due, f.named, f.taker) for f in found]
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
