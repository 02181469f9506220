"""The context builder: what a cascade may know about a meeting at each context level.

- L1: nothing but the audio.
- L2: the system's own outputs for the earlier meetings of the workspace: frequent rare words of
  its transcripts become hot words and correction vocabulary; its speaker centroids and the labels
  it used keep a voice's label stable across meetings.
- L3: L2 plus the workspace artifacts: roster (names, nicknames), voice enrollments (of the
  meeting's invitees when the manifest lists attendees, as a calendar invite would), the jargon
  list, the meeting's agenda, and the emails and slides dated up to the meeting.

Nothing here reads a reference transcript, a term set of the scorer or a synthesizer's TTS form.
Every addition is logged with its size against its budget (:class:`speechkit.recipe.ContextBudget`).
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from speechkit.asr import Biasing
from speechkit.embeddings import l2_normalize
from speechkit.recipe import ContextBudget
from speechkit.transcript import Transcript
from speechkit.workspace import Meeting, Workspace

log = logging.getLogger(__name__)

# A token that looks like an identifier, a version, an amount or an acronym: "pacs.008", "P99",
# "v2.3.1", "$4.2M", "$45,000", "12%", "Q3", "SLA", "CamelCase"; and dates such as "May 8".
_TERM = re.compile(r"[$€£]?[A-Za-z0-9]+(?:[.,\-_/][A-Za-z0-9]+)*%?")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = re.compile(rf"\b(?:{_MONTHS}) \d{{1,2}}\b")
_WORD = re.compile(r"[a-z][a-z']+")


@dataclass
class PriorMeeting:
    """What the system itself produced for an earlier meeting."""

    meeting_id: str
    transcript: Transcript
    speakers: dict[str, list[float]]  # name or stable label -> centroid


@dataclass
class MeetingContext:
    """Everything a cascade may use for one meeting, by level."""

    level: int
    biasing: Biasing = field(default_factory=Biasing)
    enrollments: dict[str, list[Path]] = field(default_factory=dict)
    prior_speakers: dict[str, np.ndarray] = field(default_factory=dict)
    terms: list[str] = field(default_factory=list)
    names: dict[str, list[str]] = field(default_factory=dict)  # canonical name -> nicknames
    lm_text: str = ""
    log: list[dict] = field(default_factory=list)

    def add(self, source: str, items: int, budget: int | None = None) -> None:
        entry = {"source": source, "items": items, "budget": budget}
        self.log.append(entry)
        log.info("context L%d: %s: %d item(s)%s", self.level, source, items,
                 f" (budget {budget})" if budget is not None else "")


def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency
    return zipf_frequency(word, "en")


def rare_words(texts: list[str], limit: int, rare_zipf: float, min_count: int = 2) -> list[str]:
    """The most frequent words of ``texts`` that are rare in English (Zipf below ``rare_zipf``)."""
    counts = Counter(w for t in texts for w in _WORD.findall(t.lower()) if len(w) >= 3)
    rare = [(n, w) for w, n in counts.items() if n >= min_count and _zipf(w) < rare_zipf]
    return [w for _, w in sorted(rare, key=lambda nw: (-nw[0], nw[1]))][:limit]


def artifact_terms(text: str, rare_zipf: float) -> list[str]:
    """Identifier-like tokens of a document in their written form, in order of first appearance."""
    out: dict[str, None] = dict.fromkeys(_DATE.findall(text))
    for token in _TERM.findall(text):
        token = token.strip(".-_/")
        has_digit = any(c.isdigit() for c in token)
        has_inner_upper = any(c.isupper() for c in token[1:])
        if (has_digit and any(c.isalpha() for c in token)) or has_inner_upper or \
                (has_digit and len(token) >= 2) or _zipf(token.lower()) < rare_zipf and token[:1].isupper():
            out.setdefault(token, None)
    return list(out)


def _prior_speakers(prior: list[PriorMeeting]) -> dict[str, np.ndarray]:
    """Mean centroid per name or stable label over earlier meetings."""
    sums: dict[str, list[np.ndarray]] = {}
    for p in prior:
        for name, vec in p.speakers.items():
            sums.setdefault(name, []).append(np.asarray(vec, dtype=np.float32))
    out = {}
    for name, vecs in sums.items():
        mean = np.mean(vecs, axis=0)
        out[name] = l2_normalize(mean)
    return out


def _budget_words(parts: list[str], tokens: int) -> str:
    """Join ``parts`` and keep the first words that fit ``tokens`` (about 1.3 tokens per word)."""
    words = " ".join(p for p in parts if p).split()
    return " ".join(words[: int(tokens / 1.3)])


def build_context(ws: Workspace, meeting: Meeting, level: int, prior: list[PriorMeeting],
                  budget: ContextBudget) -> MeetingContext:
    """The context of ``meeting`` at ``level`` given the system's outputs for earlier meetings."""
    ctx = MeetingContext(level=level)
    if level < 2:
        return ctx
    hotwords: list[str] = []
    if prior:
        ctx.prior_speakers = _prior_speakers(prior)
        ctx.add("prior speaker centroids", len(ctx.prior_speakers))
        own = rare_words([p.transcript.text for p in prior], budget.prior_terms, budget.rare_zipf)
        ctx.add("prior rare words", len(own), budget.prior_terms)
        hotwords += own
        ctx.terms += own
        ctx.lm_text = "\n".join(p.transcript.text for p in prior)
    if level >= 3:
        invited = set(meeting.attendees) or {p.id for p in ws.people}  # the invite, when there is one
        for person in ws.people:
            ctx.names[person.name] = list(person.nicknames)
            if person.enrollments and person.id in invited:
                ctx.enrollments[person.name] = list(person.enrollments)
        ctx.add("roster names", len(ctx.names))
        ctx.add("voice enrollments of the invited", len(ctx.enrollments))
        jargon = list(ws.terms.jargon)
        ctx.add("jargon list", len(jargon))
        documents = ws.artifacts_before(meeting)
        texts = [a.read_text() for a in documents]
        doc_terms = [t for text in texts for t in artifact_terms(text, budget.rare_zipf)]
        ctx.add("artifact documents", len(documents))
        ctx.terms = list(dict.fromkeys(jargon + doc_terms + ctx.terms))
        names = [n for person in ws.people for n in (person.name, *person.nicknames)]
        hotwords = list(dict.fromkeys(jargon + names + doc_terms + hotwords))
        agenda = [a.read_text() for a in ws.artifacts_for(meeting.id) if a.kind == "agenda"]
        prompt = _budget_words([meeting.title or "", "Attendees: " + ", ".join(
            ws.person(pid).name for pid in meeting.attendees) + "." if meeting.attendees else "",
            "Terms: " + ", ".join(jargon) + "." if jargon else "", *agenda], budget.prompt_tokens)
        ctx.biasing.prompt = prompt
        ctx.add("prompt words", len(prompt.split()), int(budget.prompt_tokens / 1.3))
        ctx.lm_text = "\n".join([*texts, " ".join(jargon), " ".join(names), ctx.lm_text])
    ctx.biasing.hotwords = hotwords[: budget.hotwords]
    ctx.add("hot words", len(ctx.biasing.hotwords), budget.hotwords)
    ctx.biasing.lm_text = ctx.lm_text or None
    return ctx
