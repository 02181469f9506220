"""The context builder: what a cascade may know about a meeting at each context level.

- L1: nothing but the audio.
- L2: the system's own outputs for the earlier meetings of the workspace, where it was confident:
  rare words it recognised with high confidence in several segments (never in a window its loop
  control flagged, never common words) become hot words and correction vocabulary, and its
  confident stretches of text the LM text (:func:`confident_rare_words`, :func:`confident_text`);
  its speaker centroids and the labels it used keep a voice's label stable across meetings.
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

from speechkit.recipe import ContextBudget
from speechkit.stages.asr import Biasing
from speechkit.stages.diarize.embedders import l2_normalize
from speechkit.transcript import Transcript
from speechkit.workspace import Meeting, Person, Workspace

log = logging.getLogger(__name__)

# A token that looks like an identifier, a version, an amount or an acronym: "pacs.008", "P99",
# "v2.3.1", "$4.2M", "$45,000", "12%", "Q3", "SLA", "CamelCase"; and dates such as "May 8".
_TERM = re.compile(r"[$€£]?[A-Za-z0-9]+(?:[.,\-_/][A-Za-z0-9]+)*%?")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = re.compile(rf"\b(?:{_MONTHS}) \d{{1,2}}\b")
_WORD = re.compile(r"[a-z][a-z']+")
_SURFACE = re.compile(r"[A-Za-z][A-Za-z']+")  # a word as written, any case


@dataclass
class PriorMeeting:
    """What the system itself produced for an earlier meeting.

    ``flagged_spans``: the spans (s) of the ASR windows its loop control flagged; nothing in them
    is learnt from.
    """

    meeting_id: str
    transcript: Transcript
    speakers: dict[str, list[float]]  # name or stable label -> centroid
    flagged_spans: list[tuple[float, float]] = field(default_factory=list)

    def confident_words(self, min_confidence: float) -> list[list[str]]:
        """Per segment, its words as runs of consecutive confident words: a word counts when its
        ASR confidence is at least ``min_confidence`` and its midpoint is in no flagged span;
        any other word ends a run (so n-grams never span it)."""
        out = []
        for seg in self.transcript.segments:
            runs, run = [], []
            for w in seg.words:
                mid = None if w.start is None or w.end is None else (w.start + w.end) / 2
                ok = (w.confidence is not None and w.confidence >= min_confidence and mid is not None
                      and not any(s <= mid <= e for s, e in self.flagged_spans))
                if ok:
                    run.append(w.text)
                elif run:
                    runs.append(run)
                    run = []
            out.append([" ".join(r) for r in runs + ([run] if run else [])])
        return out


@dataclass
class MeetingContext:
    """Everything a cascade may use for one meeting.

    ``biasing``: prompt, hot words and LM text for ASR. ``enrollments``: person name -> voice
    clips, for identification. ``stable_labels``: name each voice as in earlier meetings
    (``prior_speakers``: name or label -> centroid) and give new voices labels that no earlier
    meeting used. ``terms``, ``names`` (canonical name -> nicknames) and ``lm_text``: the
    vocabulary for correction. ``log``: what was added, with its size and budget.
    :func:`build_context` fills these by context level; ``speechkit transcribe`` fills
    ``biasing`` and ``enrollments`` from its options.
    """

    biasing: Biasing = field(default_factory=Biasing)
    enrollments: dict[str, list[Path]] = field(default_factory=dict)
    stable_labels: bool = False
    prior_speakers: dict[str, np.ndarray] = field(default_factory=dict)
    terms: list[str] = field(default_factory=list)
    names: dict[str, list[str]] = field(default_factory=dict)  # canonical name -> nicknames
    lm_text: str = ""
    log: list[dict] = field(default_factory=list)

    def add(self, source: str, items: int, budget: int | None = None) -> None:
        entry = {"source": source, "items": items, "budget": budget}
        self.log.append(entry)
        log.info("context: %s: %d item(s)%s", source, items,
                 f" (budget {budget})" if budget is not None else "")


def _zipf(word: str) -> float:
    from wordfreq import zipf_frequency
    return zipf_frequency(word, "en")


def confident_rare_words(prior: list[PriorMeeting], budget: ContextBudget) -> tuple[list[str], int]:
    """The rare words (Zipf below ``budget.rare_zipf``, 3 letters or more) that the system
    recognised confidently (:meth:`PriorMeeting.confident_words` with
    ``budget.prior_min_confidence``) in at least ``budget.prior_min_segments`` segments of earlier
    meetings, most segments first, at most ``budget.prior_terms``; and how many rare words of
    those transcripts were left out (unconfident, too rare, or in a flagged window).
    """
    segments: dict[str, set[tuple[str, int]]] = {}
    forms: dict[str, Counter[str]] = {}
    for p in prior:
        for k, runs in enumerate(p.confident_words(budget.prior_min_confidence)):
            for form in _SURFACE.findall(" ".join(runs)):
                w = form.lower()
                if len(w) >= 3 and _WORD.fullmatch(w):
                    segments.setdefault(w, set()).add((p.meeting_id, k))
                    forms.setdefault(w, Counter())[form] += 1
    rare = [(len(where), w) for w, where in segments.items()
            if len(where) >= budget.prior_min_segments and _zipf(w) < budget.rare_zipf]
    kept = [w for _, w in sorted(rare, key=lambda nw: (-nw[0], nw[1]))][:budget.prior_terms]
    seen = {w for p in prior for w in _WORD.findall(p.transcript.text.lower()) if len(w) >= 3}
    left_out = sum(1 for w in seen if w not in kept and _zipf(w) < budget.rare_zipf)
    # each word in the spelling the system wrote it most often ("gRPC", not "grpc")
    return [forms[w].most_common(1)[0][0] for w in kept], left_out


def confident_text(prior: list[PriorMeeting], min_confidence: float) -> str:
    """The earlier meetings' confident stretches of text, one per line (the L2 LM text)."""
    return "\n".join(run for p in prior for runs in p.confident_words(min_confidence) for run in runs
                     if len(run.split()) >= 2)


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


def spoken_names(person: Person) -> list[str]:
    """What people call ``person`` (name, then nicknames), without a name that is only the
    person's id: importers copy the id where a corpus has no names (AMI's ``MEE089``), and an id
    is no word for the recognizer to expect."""
    return [n for n in (person.name, *person.nicknames) if n != person.id]


def build_context(ws: Workspace, meeting: Meeting, level: int, prior: list[PriorMeeting],
                  budget: ContextBudget) -> MeetingContext:
    """The context of ``meeting`` at ``level`` given the system's outputs for earlier meetings."""
    ctx = MeetingContext()
    if level < 2:
        return ctx
    ctx.stable_labels = True
    hotwords: list[str] = []
    if prior:
        ctx.prior_speakers = _prior_speakers(prior)
        ctx.add("prior speaker centroids", len(ctx.prior_speakers))
        own, left_out = confident_rare_words(prior, budget)
        ctx.add("prior rare words", len(own), budget.prior_terms)
        ctx.add("prior rare words left out (unconfident, once only or in a flagged window)", left_out)
        hotwords += own
        ctx.terms += own
        ctx.lm_text = confident_text(prior, budget.prior_min_confidence)
    if level >= 3:
        invited = set(meeting.attendees) or {p.id for p in ws.people}  # the invite, when there is one
        for person in ws.people:
            if spoken_names(person):
                ctx.names[person.name] = list(person.nicknames)
            if person.enrollments and person.id in invited:
                ctx.enrollments[person.name] = list(person.enrollments)
        ctx.add("roster names", len(ctx.names))
        ctx.add("roster names left out (only the person's id)", len(ws.people) - len(ctx.names))
        ctx.add("voice enrollments of the invited", len(ctx.enrollments))
        jargon = list(ws.terms.jargon)
        ctx.add("jargon list", len(jargon))
        documents = ws.artifacts_before(meeting)
        texts = [a.read_text() for a in documents]
        doc_terms = [t for text in texts for t in artifact_terms(text, budget.rare_zipf)]
        ctx.add("artifact documents", len(documents))
        ctx.terms = list(dict.fromkeys(jargon + doc_terms + ctx.terms))
        names = [n for person in ws.people for n in spoken_names(person)]
        hotwords = list(dict.fromkeys(jargon + names + doc_terms + hotwords))
        agenda = [a.read_text() for a in ws.artifacts_for(meeting.id) if a.kind == "agenda"]
        attendees = [n for pid in meeting.attendees for n in spoken_names(ws.person(pid))[:1]]
        prompt = _budget_words([meeting.title or "", "Attendees: " + ", ".join(attendees) + "." if attendees else "",
            "Terms: " + ", ".join(jargon) + "." if jargon else "", *agenda], budget.prompt_tokens)
        ctx.biasing.prompt = prompt
        ctx.add("prompt words", len(prompt.split()), int(budget.prompt_tokens / 1.3))
        ctx.lm_text = "\n".join([*texts, " ".join(jargon), " ".join(names), ctx.lm_text])
    ctx.biasing.hotwords = hotwords[: budget.hotwords]
    ctx.biasing.verify_hotwords = level == 2  # the system's own words only where they are used (L3: all)
    ctx.add("hot words", len(ctx.biasing.hotwords), budget.hotwords)
    ctx.biasing.lm_text = ctx.lm_text or None
    return ctx
