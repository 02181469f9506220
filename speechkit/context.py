"""The context builder: what a cascade may know about a meeting at each context level.

- L1: nothing but the audio.
- L2: the system's own outputs for the earlier meetings of the workspace, where it was confident:
  rare words it recognised with high confidence in several segments (never in a window its loop
  control flagged, never common words) become hot words and correction vocabulary, and its
  confident stretches of text the LM text (:func:`confident_rare_words`, :func:`confident_text`);
  its speaker centroids and the labels it used keep a voice's label stable across meetings.
- L3: L2 plus the workspace artifacts: roster (names, nicknames), voice enrollments (of the
  meeting's invitees when the manifest lists attendees, as a calendar invite would), the number
  of invitees as the diarizer's speaker count (``context.invite_speaker_count``), the jargon
  list, the meeting's agenda, and the emails and slides dated up to the meeting.

The L3 ablation (``context.ablate``, :class:`speechkit.recipe.ContextBudget`) leaves one L3 stream
out: ``enrollments`` the voice enrollments only; ``text`` the workspace text (roster names, jargon,
the documents' terms, the prompt, the L3 part of the LM text and of the hot words, and the notes
context's roster, emails and agenda), keeping the L2 streams, the enrollments and the invite's
speaker count (:func:`has_workspace_text`).

The notes context (:func:`notes_context`, what the ``summarize`` stage may know) follows the same
levels: L1 nothing; L2 the system's own notes of the earlier meetings; L3 also the roster, a
digest of the emails dated before the meeting and its title, kind and agenda, each under a byte
budget.

A run also gives each meeting, at every level, what its gold questions ask (never their answers;
:func:`run_context`): what a whole system answers along with its transcript (the ``system`` stage).

Nothing here reads a reference transcript, an answer, a term set of the scorer or a synthesizer's TTS form.
Every addition is logged with its size against its budget (:class:`speechkit.recipe.ContextBudget`).
The context's data types (:class:`~speechkit.meeting_context.MeetingContext`, ``Biasing``) are in
:mod:`speechkit.meeting_context`.
"""
from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from speechkit.core.record import FLAGGED_SPANS, NOTES, TRANSCRIPT, VOICES
from speechkit.io.questions import gold_questions_of
from speechkit.level_rules import level_rules
from speechkit.lm import general_lm_text
from speechkit.meeting_context import EarlierMeeting, MeetingContext, NotesContext, roster_line
from speechkit.notes import Notes
from speechkit.transcript import Transcript
from speechkit.workspace import Person

if TYPE_CHECKING:
    from speechkit.recipe import ContextBudget
    from speechkit.workspace import Artifact, Meeting, Workspace

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
    notes: Notes | None = None  # the system's notes of it (None: the recipe takes none)

    @classmethod
    def of(cls, meeting_id: str, outputs: Mapping[str, Any]) -> PriorMeeting:
        """What later meetings learn from a meeting's outputs (:mod:`speechkit.core.record`)."""
        return cls(meeting_id, outputs[TRANSCRIPT], outputs.get(VOICES, {}), list(outputs.get(FLAGGED_SPANS, [])),
                   outputs.get(NOTES))

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
    from speechkit.core.vectors import l2_normalize
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


def fields_from_earlier_meetings(level: int) -> frozenset[str]:
    """The fields of the :class:`MeetingContext` that :func:`build_context` fills from the system's
    outputs for earlier meetings at ``level`` (none at L1)."""
    if level < 2:
        return frozenset()
    return frozenset({"prior_speakers", "terms", "lm_text", "biasing", "notes", "earlier"})


def run_context(ws: Workspace, meeting: Meeting, level: int, prior: list[PriorMeeting],
                budget: ContextBudget) -> MeetingContext:
    """What a run gives ``meeting``: its context at ``level`` (:func:`build_context`) and what the
    meeting's gold questions ask (never their answers), which a whole system answers."""
    ctx = build_context(ws, meeting, level, prior, budget)
    gold = gold_questions_of(ws, meeting.id)
    ctx.questions = tuple(q.ask for q in gold.questions) if gold else ()
    return ctx


def has_workspace_text(level: int, budget: ContextBudget) -> bool:
    """Whether a context at ``level`` holds the workspace text (L3, unless ``context.ablate: text``)."""
    return level >= 3 and budget.ablate != "text"


def _add_workspace_text(ws: Workspace, meeting: Meeting, budget: ContextBudget, ctx: MeetingContext,
                        hotwords: list[str]) -> list[str]:
    """Add the workspace text to ``ctx`` (roster names, jargon, the terms of the documents dated
    up to the meeting, the prompt, their LM text); the hot words with theirs first."""
    for person in ws.people:
        if person.spoken_names:
            ctx.names[person.name] = list(person.nicknames)
    ctx.add("roster names", len(ctx.names))
    ctx.add("roster names left out (only the person's id)", len(ws.people) - len(ctx.names))
    jargon = list(ws.terms.jargon)
    ctx.add("jargon list", len(jargon))
    documents = ws.artifacts_before(meeting)
    texts = [a.read_text() for a in documents]
    doc_terms = [t for text in texts for t in artifact_terms(text, budget.rare_zipf)]
    ctx.add("artifact documents", len(documents))
    ctx.terms = list(dict.fromkeys(jargon + doc_terms + ctx.terms))
    names = [n for person in ws.people for n in person.spoken_names]
    agenda = [a.read_text() for a in ws.artifacts_for(meeting.id) if a.kind == "agenda"]
    attendees = [n for pid in meeting.attendees for n in ws.person(pid).spoken_names[:1]]
    prompt = _budget_words([meeting.title or "", "Attendees: " + ", ".join(attendees) + "." if attendees else "",
        "Terms: " + ", ".join(jargon) + "." if jargon else "", *agenda], budget.prompt_tokens)
    ctx.biasing.prompt = prompt
    ctx.add("prompt words", len(prompt.split()), int(budget.prompt_tokens / 1.3))
    ctx.lm_text = "\n".join([*texts, " ".join(jargon), " ".join(names), ctx.lm_text])
    return list(dict.fromkeys(jargon + names + doc_terms + hotwords))


def build_context(ws: Workspace, meeting: Meeting, level: int, prior: list[PriorMeeting],
                  budget: ContextBudget) -> MeetingContext:
    """The context of ``meeting`` at ``level`` given the system's outputs for earlier meetings."""
    rules = level_rules(budget.rules)
    ctx = MeetingContext(level=level, turn_guards=rules.turn_guards)
    ctx.identify_unenrolled = rules.identify_every_level and level < 3
    if level < 2:
        return _with_general_lm(ctx, rules.lm_every_level)
    ctx.stable_labels = rules.voice_memory
    hotwords: list[str] = []
    if prior:
        ctx.earlier = [EarlierMeeting(p.meeting_id, p.transcript, p.notes) for p in prior]
        ctx.add("earlier meetings' own outputs (whole, for a system that takes them back)", len(ctx.earlier))
        if rules.voice_memory:
            ctx.prior_speakers = _prior_speakers(prior)
            ctx.add("prior speaker centroids", len(ctx.prior_speakers))
        own, left_out = confident_rare_words(prior, budget)
        ctx.add("prior rare words", len(own), budget.prior_terms)
        ctx.add("prior rare words left out (unconfident, once only or in a flagged window)", left_out)
        hotwords += own
        ctx.terms += own
        ctx.lm_text = confident_text(prior, budget.prior_min_confidence)
    if level >= 3:
        if budget.ablate == "enrollments":
            ctx.add("voice enrollments left out (context.ablate: enrollments)", 0)
        else:
            invited = set(meeting.attendees) or {p.id for p in ws.people}  # the invite, when there is one
            for person in ws.people:
                if person.enrollments and (rules.enrollments == "enrolled" or person.id in invited):
                    ctx.enrollments[person.name] = list(person.enrollments)
            ctx.add(f"voice enrollments of the {rules.enrollments}", len(ctx.enrollments))
        if meeting.attendees and budget.invite_speaker_count and rules.invite_speaker_count:
            ctx.expected_speakers = len(meeting.attendees)
            ctx.add("speaker count (the invite's size)", ctx.expected_speakers)
        if budget.ablate == "text":
            ctx.add("workspace text left out (context.ablate: text)", 0)
        else:
            hotwords = _add_workspace_text(ws, meeting, budget, ctx, hotwords)
    ctx.biasing.hotwords = hotwords[: budget.hotwords]
    # the system's own words only where they are used (L2, and L3 without the workspace text); else all
    ctx.biasing.verify_hotwords = not has_workspace_text(level, budget)
    ctx.add("hot words", len(ctx.biasing.hotwords), budget.hotwords)
    ctx.biasing.lm_text = ctx.lm_text or None
    ctx.notes = notes_context(ws, meeting, level, prior, budget, ctx)
    return _with_general_lm(ctx, rules.lm_every_level)


def _with_general_lm(ctx: MeetingContext, every_level: bool) -> MeetingContext:
    """``ctx`` whose recognizer n-gram is the general English one at every level (the paper's
    SpeechBrain stack: one KenLM at every level), when ``every_level``."""
    if every_level:
        ctx.biasing.lm_text = general_lm_text()
        ctx.add("general English n-gram text (words, the same at every level)", len(ctx.biasing.lm_text.split()))
    return ctx


def cut_utf8(text: str, budget: int) -> str:
    """The longest prefix of ``text`` of at most ``budget`` UTF-8 bytes, never cut inside a character."""
    return text.encode("utf-8")[:budget].decode("utf-8", "ignore")


def notes_digest(prior: PriorMeeting) -> str:
    """An earlier meeting's notes as the notes context gives them: its summary and action items."""
    notes = prior.notes or Notes()
    lines = [f"{prior.meeting_id}: {notes.summary}".rstrip()]
    for item in notes.action_items:
        due = f" (due {item.due})" if item.due else ""
        lines.append(f"- action item: {item.assignee or 'unassigned'}: {item.description}{due}")
    return "\n".join(lines)


def email_digest(text: str, title: str | None) -> str:
    """One email on one line: its date, sender and subject (the artifact's title), then its body."""
    headers, body = {}, []
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if not body and key in ("From", "To", "Date", "Subject") and value:
            headers[key] = value.strip()
        elif line.strip():
            body.append(line.strip())
    head = ", ".join(h for h in (headers.get("Date"), headers.get("From")) if h)
    subject = title or headers.get("Subject", "")
    return " ".join(p for p in (f"[{head}]" if head else "", f"{subject}:" if subject else "", *body) if p)


def emails_before(ws: Workspace, meeting: Meeting) -> list[Artifact]:
    """The emails dated before the meeting's day, and the meeting's own dated up to its day (an
    email of the meeting's day about another meeting may have been written after it)."""
    day = meeting.date.date() if isinstance(meeting.date, dt.datetime) else meeting.date
    return [a for a in ws.artifacts if a.kind == "email" and a.date is not None
            and (a.date < day or (a.meeting == meeting.id and a.date <= day))]


def notes_context(ws: Workspace, meeting: Meeting, level: int, prior: list[PriorMeeting],
                  budget: ContextBudget, ctx: MeetingContext) -> NotesContext:
    """What the notes backend may know of ``meeting`` at ``level``, each addition cut to its byte
    budget and logged in ``ctx``: L1 nothing; L2 the system's own notes of the earlier meetings
    (newest first); L3 also the roster (whole people), a digest of the emails dated before the
    meeting (:func:`emails_before`, newest first) and the meeting's title, kind and agenda (not
    with ``context.ablate: text``)."""
    if level < 2:
        return NotesContext()
    earlier = cut_utf8("\n".join(notes_digest(p) for p in reversed(prior) if p.notes is not None),
                       budget.notes_prior_bytes)
    ctx.add("notes: earlier meetings' notes (bytes)", len(earlier.encode()), budget.notes_prior_bytes)
    if not has_workspace_text(level, budget):
        return NotesContext(earlier_notes=earlier)
    roster, used = [], 0
    for person in ws.people:
        size = len(roster_line(person).encode()) + (1 if roster else 0)  # lines joined by newlines
        if used + size > budget.notes_roster_bytes:
            break
        roster.append(Person(person.id, person.name, person.nicknames, person.role))
        used += size
    ctx.add("notes: roster people", len(roster))
    ctx.add("notes: roster (bytes)", used, budget.notes_roster_bytes)
    emails = sorted(emails_before(ws, meeting), key=lambda a: (str(a.date), a.id), reverse=True)
    digest = cut_utf8("\n".join(email_digest(a.read_text(), a.title) for a in emails), budget.notes_emails_bytes)
    ctx.add("notes: emails", len(emails))
    ctx.add("notes: email digest (bytes)", len(digest.encode()), budget.notes_emails_bytes)
    kind = f" ({meeting.kind})" if meeting.kind else ""
    agendas = [line.strip() for a in ws.artifacts_for(meeting.id) if a.kind == "agenda"
               for line in a.read_text().splitlines() if line.strip()]
    agenda = cut_utf8("\n".join([f"{meeting.title or meeting.id}{kind}", *agendas]), budget.notes_agenda_bytes)
    ctx.add("notes: title, kind and agenda (bytes)", len(agenda.encode()), budget.notes_agenda_bytes)
    return NotesContext(earlier_notes=earlier, roster=tuple(roster), emails=digest, agenda=agenda)
