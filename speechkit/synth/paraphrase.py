"""Optional LLM realisation of synthetic turns (``speechkit synth --paraphrase``, docs/synth.md).

Each turn the dialogue writer made (but backchannels) is sent, in its canonical written form,
to the configured LLM (:mod:`speechkit.llm`: the endpoint from the environment, else the local
server), which rewrites it in its own words. A rewrite is kept only if it says every entity of
the turn exactly as written and no other: the multiset of entity mentions (people's first
names, nicknames, surnames and full names; workspace terms and numbers; weekdays; the options
of every decision) is the same in the rewrite as in the template turn, and outside them the
rewrite has no digit, no number word ("two", "hundred"; "one" is allowed), no new capitalised
word after a sentence's first word and no word with a digit, dot or inner capital that the
turn does not have. A small model also drifts off the turn while keeping its entities (it echoes
the prompt, "KEEP: Renata; Brindlewood", or talks about the task or about something else), so a
rewrite must also not talk about the task ("rewritten", "sentence", "keep"...), be at most twice
as long as the turn (and five words), and share one of the turn's words of four letters or more
(where it has two). Otherwise the template turn stays (``dropped`` when a mention of the turn is
missing, ``invented`` when one is added, ``drifted`` for the rest). A request that fails keeps the template turn too
(``failed``); with ``failures: fail`` it stops the generation instead (an unreachable endpoint is
found before the first meeting by :meth:`Paraphraser.check`).

A kept rewrite becomes pieces again: each term or number it writes is the turn's own piece
(spoken and TTS forms kept, trailing punctuation as the rewrite has it; a number said first and
corrected, "2,500, sorry, 2,600", counts as an entity of its turn too), the rest plain words, then
the speaker's disfluencies as :func:`~speechkit.synth.disfluency.disfluent` adds them, from
a generator of the meeting's own. The latent state is not touched, so gold notes and
questions stay exact (``acts[].lines`` keep the template lines; the references have what was
said); the counts per meeting go to ``truth/state.json`` (``paraphrase``).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from speechkit.core.options import bounded
from speechkit.llm.client import ClientOptions, LLMClient, LLMUnavailable, RequestFailed
from speechkit.llm.run import checked_endpoint
from speechkit.synth import pools
from speechkit.synth.dialogue import Turn, render
from speechkit.synth.disfluency import disfluent
from speechkit.synth.language import ENGLISH
from speechkit.synth.spoken import Piece, canonical_text, number_words, plain
from speechkit.synth.state import LatentState, MeetingPlan, Persona

#: Number words a rewrite may not bring in ("one" is too common a pronoun to count).
NUMBER_WORDS = (frozenset(w for n in range(100) for w in number_words(n).split())
                | {"hundred", "thousand", "million", "billion", "dozen", "half", "percent"}) - {"one"}
#: Capitalised words that are not names.
ORDINARY_CAPITALS = frozenset("I I'll I'm I've I'd OK Okay".split())
_EDGE = "A-Za-z0-9"
_ODD = re.compile(r"\d|\w\.\w|[a-z][A-Z]")  # a word that looks like a term or a number
_TRAILING = ",.?!;:"
#: Words of a reply that talks about the task rather than saying the turn.
_META = re.compile(r"keep|turn|rewrit\w*|paraphras\w*|original|sentence|version", re.I)

SYSTEM = ("You rewrite one turn of a spoken work meeting so that it sounds like a different person said the "
          "same thing naturally. Keep the meaning, the speaker's intent and who is addressed. Copy every item "
          "of the KEEP list exactly as written (same spelling, same capitals), each as many times as the turn "
          "has it. Do not add any other name, number, day, product or technical term. Answer with the "
          "rewritten turn only, on one line.")


@dataclass(frozen=True)
class ParaphraseOptions(ClientOptions):
    """Options of the paraphraser: the client's (:class:`~speechkit.llm.client.ClientOptions`:
    endpoint, model, local server, deadline, retries, failure policy) and ``max_tokens``
    [1, 1000000]: 160 by default (a turn is one to three sentences)."""

    max_tokens: int | None = bounded(160, ge=1, le=1_000_000)


def entity_lexicon(state: LatentState) -> tuple[str, ...]:
    """Every entity string of the workspace, longest first: names, terms, weekdays, decision options."""
    found: set[str] = set(pools.WEEKDAYS)
    for p in state.people:
        found.update([p.name, *p.name.split()] + ([p.nickname] if p.nickname else []))
    for project in state.projects:
        found.update(t.canonical for t in (project.name, *project.jargon, *project.numbers))
        for _, options in project.decisions:
            for option in options:
                slots = project.jargon if "{j}" in option else project.jargon[:1]
                found.update(canonical_text(render(option, {"j": j})) for j in slots)
    return tuple(sorted(found, key=lambda s: (-len(s), s)))


class _Mentions:
    """Finds entity mentions in text: whole words, case as written, longest first."""

    def __init__(self, lexicon: tuple[str, ...]) -> None:
        alternation = "|".join(re.escape(e) for e in sorted(set(lexicon), key=lambda s: (-len(s), s)))
        self.pattern = re.compile(rf"(?<![{_EDGE}])(?:{alternation})(?![{_EDGE}])")

    def spans(self, text: str) -> list[re.Match]:
        return list(self.pattern.finditer(text))

    def count(self, text: str) -> Counter:
        return Counter(m.group() for m in self.spans(text))


def verdict(original: str, rewrite: str, mentions: _Mentions) -> str:
    """``kept``, ``unchanged``, ``dropped`` (an entity of ``original`` is missing from ``rewrite``,
    or no word is left), ``invented`` (``rewrite`` names an entity, number, name or term
    ``original`` does not) or ``drifted`` (:func:`_drifted`: it says something else)."""
    if " ".join(rewrite.split()) == " ".join(original.split()):
        return "unchanged"
    if not plain(rewrite):
        return "dropped"
    before, after = mentions.count(original), mentions.count(rewrite)
    if before - after:
        return "dropped"
    if after - before:
        return "invented"
    known = {w.strip(_TRAILING + "\"'") for w in original.split()}
    rest = mentions.pattern.sub(" ", rewrite)
    for sentence in re.split(r"(?<=[.?!])\s+", rest.strip()):
        for k, raw in enumerate(sentence.split()):
            word = raw.strip(_TRAILING + "\"'()")
            if not word:
                continue
            if word.lower() in NUMBER_WORDS and word not in known:
                return "invented"
            if word in known or word in ORDINARY_CAPITALS:
                continue
            if _ODD.search(word) or (k > 0 and word[:1].isupper()):
                return "invented"
    return "drifted" if _drifted(original, rewrite) else "kept"


def _drifted(original: str, rewrite: str) -> bool:
    """Whether ``rewrite`` talks about the task instead of saying the turn ("KEEP: ...", "Here's a
    rewritten version"), is more than twice as long (and five words), or shares none of the
    turn's words of four letters or more (where it has two)."""
    said = {w.lower() for w in re.findall(r"[\w'-]+", original)}
    new = {w.lower() for w in re.findall(r"[\w'-]+", rewrite)}
    if {w for w in new - said if _META.fullmatch(w)}:
        return True
    if len(rewrite.split()) > 2 * len(original.split()) + 5:
        return True
    long_words = {w for w in said if len(w) >= 4}
    return len(long_words) >= 2 and not long_words & new


def said_as(piece: Piece) -> str | None:
    """The written form of a piece said in words of its own (a term, a number, a corrected slip),
    without trailing punctuation; None for a plain word or a disfluency."""
    if piece.term:
        return piece.term
    if piece.canonical is None:
        return None
    written = piece.canonical.rstrip(_TRAILING)
    return written if tuple(written.split()) != piece.words else None


def _with_ending(piece: Piece, written: str, ending: str) -> Piece:
    """A piece said in words of its own, its trailing punctuation replaced by ``ending``."""
    own = (piece.canonical or "")[len(written):]
    say = piece.say[-1][:len(piece.say[-1]) - len(own)] if own and piece.say[-1].endswith(own) else piece.say[-1]
    return replace(piece, canonical=written + ending, say=(*piece.say[:-1], say + ending))


def rebuild(rewrite: str, template: list[Piece]) -> list[Piece]:
    """The pieces of a kept ``rewrite``: the template's pieces said in words of their own (terms,
    numbers) where it writes them, plain words elsewhere."""
    own = {w: p for p in template if (w := said_as(p))}
    out: list[Piece] = []
    at = 0
    if own:
        for m in _Mentions(tuple(own)).spans(rewrite):
            ending = re.match(rf"[{re.escape(_TRAILING)}]*", rewrite[m.end():]).group()
            out += plain(rewrite[at:m.start()])
            out.append(_with_ending(own[m.group()], m.group(), ending))
            at = m.end() + len(ending)
    return out + plain(rewrite[at:])


def _reply_text(text: str) -> str:
    """The rewrite in a reply: its first non-empty line, without quotes, a label, dashes or
    characters a transcript does not write."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = re.sub(r"^(?:rewritten turn|rewrite|turn)\s*:\s*", "", line, flags=re.I).replace("\u2019", "'")
    line = re.sub(r"\s*(?:\u2014|\u2013|--)\s*", ", ", line)
    line = re.sub(r"[^\w\s,.?!;:'$%&/+-]", "", line)
    return " ".join(line.strip("'").split())


class Paraphraser:
    """Rewrites the turns of each meeting through an LLM and counts what it kept (module docstring)."""

    def __init__(self, options: ParaphraseOptions, state: LatentState, client: LLMClient | None = None) -> None:
        self.options = options
        self.state = state
        self.client = client or LLMClient(options)
        self.lexicon = entity_lexicon(state)
        self.counts: dict[str, Counter] = {}

    def check(self) -> str:
        """Probe the endpoint before any meeting (:class:`LLMUnavailable` under ``failures: fail``)."""
        return checked_endpoint(self.client, self.options.failures, "synth --paraphrase")

    def _ask(self, text: str, mentions: _Mentions) -> str | None:
        keep = list(dict.fromkeys(m.group() for m in mentions.spans(text)))
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": f"KEEP: {'; '.join(keep) or '(nothing)'}\nTURN: {text}"}]
        try:
            return _reply_text(self.client.complete_text(messages))
        except RequestFailed as e:
            if self.options.failures == "fail":
                raise LLMUnavailable(f"{self.client.base_url}: model {self.client.model}: {e.detail}") from None
            return None

    def rewrite(self, turns: dict[str, list[Turn]]) -> None:
        """Probe the endpoint (:meth:`check`), then rewrite every meeting's turns (meeting id ->
        turns) in place."""
        self.check()
        for plan in self.state.meetings:
            turns[plan.id] = self.meeting(plan, turns[plan.id])

    def meeting(self, plan: MeetingPlan, turns: list[Turn]) -> list[Turn]:
        """``turns`` of ``plan`` with each kept rewrite in place of its template turn."""
        rng = np.random.default_rng(np.random.SeedSequence([plan.seed, 0x9A2A]))
        counts = self.counts.setdefault(plan.id, Counter())
        out = []
        for turn in turns:
            if turn.backchannel:
                out.append(turn)
                continue
            counts["turns"] += 1
            text = canonical_text(turn.pieces)
            mentions = _Mentions(self.lexicon + tuple(w for p in turn.pieces if (w := said_as(p))))
            rewrite = self._ask(text, mentions)
            outcome = "failed" if rewrite is None else verdict(text, rewrite, mentions)
            counts[outcome] += 1
            if outcome == "kept":
                speaker: Persona = self.state.person(turn.speaker)
                turn = replace(turn, pieces=disfluent(rebuild(rewrite, turn.pieces), speaker, rng, ENGLISH))
            out.append(turn)
        return out

    def summary(self) -> dict[str, Any]:
        """``truth/state.json``'s ``paraphrase``: the endpoint, and per meeting and in all the turns
        sent and how many were kept, unchanged, dropped (an entity missing), invented, drifted or
        failed."""
        keys = ("turns", "kept", "unchanged", "dropped", "invented", "drifted", "failed")
        total = sum(self.counts.values(), Counter())
        return {"base_url": self.client.base_url, "model": self.client.model,
                "meetings": {mid: {k: c[k] for k in keys} for mid, c in self.counts.items()},
                "total": {k: total[k] for k in keys}}
