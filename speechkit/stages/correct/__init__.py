"""Vocabulary post-correction: fix jargon, names and numbers in a recognised transcript.

A corrector takes a transcript and the :class:`Vocabulary` a deployed system has (canonical
terms and numbers, people's names and nicknames, optionally workspace text for an n-gram LM)
and returns a :class:`CorrectionResult`: the corrected transcript and what it did and refused.
Every rewrite of a turn passes :mod:`speechkit.stages.correct.guards` or is rejected, so a corrector
changes nothing but vocabulary spans.

Backends (``BACKENDS``; ``make_backend("correct", NAME, **options)`` builds one from keyword
options): ``lexicon`` (constrained phonetic/orthographic
replacement gated by ASR confidence or an LM, :mod:`~speechkit.stages.correct.lexicon`) and ``llm``
(an OpenAI-compatible chat endpoint, :mod:`~speechkit.stages.correct.llm`).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any, Protocol

from speechkit.core.record import TRANSCRIPT, MeetingRecord
from speechkit.core.section import Section
from speechkit.core.stage import BackendStage, Spec, Stage
from speechkit.io.seglst import segments_from_rows, segments_to_rows
from speechkit.stages.correct.report import corrections
from speechkit.stages.correct.spoken import Entry
from speechkit.transcript import Segment, Transcript, Word
from speechkit.workspace import Person, TermSet

BACKENDS = {
    "lexicon": "speechkit.stages.correct.lexicon:LexiconCorrector",
    "llm": "speechkit.stages.correct.llm:LLMCorrector",
}
DEFAULT_BACKEND = "lexicon"
SECTIONS = (Section(90, corrections),)


@dataclass(frozen=True)
class Vocabulary:
    """What the corrector may put into a transcript, all in canonical written form.

    ``terms``: jargon, product names, identifiers, numbers and dates ("pacs.008", "P99", "2024").
    ``names``: people's canonical names ("Priya Sharma"); their first names count too.
    ``nicknames``: canonical name -> nicknames ("Priya Sharma" -> ("Pri",)).
    ``lm_text``: workspace text (documents, emails, earlier transcripts) for an n-gram LM.
    ``turn_guards``: each rewritten turn must pass the guards (:mod:`speechkit.stages.correct.guards`);
    False under the paper's level rules (:mod:`speechkit.level_rules`), where only a batch answer
    of the wrong length is rejected.
    """

    terms: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    nicknames: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    lm_text: str | None = None
    turn_guards: bool = True

    @classmethod
    def build(cls, terms: TermSet | Iterable[str] = (), people: Iterable[Person] = (),
              lm_text: str | None = None) -> Vocabulary:
        """A vocabulary from a term set (numbers and jargon) and a roster."""
        words = [*terms.numbers, *terms.jargon] if isinstance(terms, TermSet) else list(terms)
        people = list(people)
        return cls(terms=tuple(words), names=tuple(p.name for p in people),
                   nicknames={p.name: tuple(p.nicknames) for p in people}, lm_text=lm_text)

    @cached_property
    def entries(self) -> tuple[Entry, ...]:
        """Every distinct canonical form with its spoken forms (names: full, first, nicknames)."""
        wanted: dict[str, str] = {}
        for term in self.terms:
            wanted.setdefault(term.strip(), "term")
        for name in self.names:
            for form in (name, name.split()[0] if name.split() else "", *self.nicknames.get(name, ())):
                wanted.setdefault(form.strip(), "name")
        seen: set[str] = set()
        out = []
        for canonical, kind in wanted.items():
            if canonical and canonical.lower() not in seen:
                seen.add(canonical.lower())
                out.append(Entry.of(canonical, kind))
        return tuple(out)

    def __bool__(self) -> bool:
        return bool(self.terms or self.names)


@dataclass(frozen=True)
class Edit:
    """One accepted replacement: words ``start:end`` of segment ``segment`` became ``new``.

    ``gate`` says why it was allowed: ``respelling`` (the entry split over several words),
    ``spoken-form`` (the words were exactly a spoken form of the entry), ``confidence``
    (the ASR was unsure), ``lm`` (the workspace LM prefers it) or
    ``llm`` (an LLM proposed it and the guards passed it).
    """

    segment: int
    start: int
    end: int
    old: str
    new: str
    gate: str
    score: float | None = None


@dataclass(frozen=True)
class Rejection:
    """Something refused: a candidate replacement or a turn rewrite, with the reason.

    ``reason`` is a short category (counted in the stats); ``detail`` says more.
    """

    segment: int
    old: str
    new: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class BatchIssue:
    """A batch of turns ``first:first+count`` kept as it was: a bad response or a failed request."""

    first: int
    count: int
    reason: str
    detail: str = ""


@dataclass
class CorrectionStats:
    """What a corrector did to one transcript."""

    backend: str
    turns: int = 0
    edits: list[Edit] = field(default_factory=list)
    rejected_candidates: list[Rejection] = field(default_factory=list)
    rejected_turns: list[Rejection] = field(default_factory=list)
    rejected_batches: list[BatchIssue] = field(default_factory=list)
    failures: list[BatchIssue] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Counts: edits, turns changed, and rejections and failures by reason."""
        return {
            "backend": self.backend,
            "turns": self.turns,
            "edits": len(self.edits),
            "turns_changed": len({e.segment for e in self.edits}),
            "rejected_candidates": dict(Counter(r.reason for r in self.rejected_candidates)),
            "rejected_turns": dict(Counter(r.reason for r in self.rejected_turns)),
            "rejected_batches": dict(Counter(b.reason for b in self.rejected_batches)),
            "failures": dict(Counter(b.reason for b in self.failures)),
        }

    def to_dict(self) -> dict[str, Any]:
        """The summary plus every edit, rejection and failure (JSON-serialisable)."""
        return {**self.summary(), "details": {
            "edits": [asdict(e) for e in self.edits],
            "rejected_candidates": [asdict(r) for r in self.rejected_candidates],
            "rejected_turns": [asdict(r) for r in self.rejected_turns],
            "rejected_batches": [asdict(b) for b in self.rejected_batches],
            "failures": [asdict(b) for b in self.failures],
        }}


@dataclass
class CorrectionResult:
    """The corrected transcript and the statistics of the pass."""

    transcript: Transcript
    stats: CorrectionStats

    def stats_dict(self) -> dict[str, Any]:
        return self.stats.to_dict()


class Corrector(Protocol):
    """What every correction backend provides."""

    def correct(self, transcript: Transcript, vocabulary: Vocabulary) -> CorrectionResult:
        """Correct vocabulary spans of ``transcript``; never fails on a bad turn or endpoint."""
        ...


@dataclass
class Correction:
    """The correction stage's result: the corrected transcript and what the corrector did."""

    transcript: Transcript
    stats: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.transcript.session_id, "segments": segments_to_rows(self.transcript.segments),
                "stats": self.stats}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Correction:
        return cls(Transcript(data["session_id"], segments_from_rows(data["segments"])), data["stats"])

    def summary(self) -> dict[str, Any]:
        """What run.json records of it: what the corrector did (empty when nothing was corrected)."""
        return self.stats


def build(spec: Spec, device: str = "auto", reads: Mapping[str, Stage] | None = None) -> CorrectStage:
    """The correction stage for a recipe's ``stages.correct``."""
    return CorrectStage(spec, device, reads)


class CorrectStage(BackendStage[Correction]):
    """Vocabulary post-correction of the named transcript with the meeting's vocabulary.

    With no terms and no names in the context (L1) there is nothing to correct towards: the
    transcript passes unchanged and no corrector is loaded.
    """

    name = "correct"
    backends = BACKENDS
    reads = ("attribute", "identify")
    context_fields = ("terms", "names", "lm_text", "turn_guards")

    def extra_inputs(self, record: MeetingRecord) -> dict[str, Any]:
        """The meeting's vocabulary: terms, names with nicknames, LM text, whether turns are guarded."""
        context = record.context
        return {"terms": context.terms, "names": context.names, "lm_text": context.lm_text,
                "turn_guards": context.turn_guards}

    def run(self, record: MeetingRecord) -> Correction:
        transcript = record.transcript()  # named, not yet corrected
        context = record.context
        if not (context.terms or context.names):
            return Correction(transcript, {})
        vocabulary = Vocabulary(terms=tuple(context.terms), names=tuple(context.names),
                                nicknames={k: tuple(v) for k, v in context.names.items()},
                                lm_text=context.lm_text or None, turn_guards=context.turn_guards)
        result = self.backend.correct(transcript, vocabulary)
        return Correction(result.transcript, result.stats_dict())

    def outputs(self, record: MeetingRecord, so_far: Mapping[str, Any]) -> dict[str, Any]:
        """The corrected transcript."""
        return {TRANSCRIPT: record.result(self.name).transcript}


def segment_words(segment: Segment) -> tuple[Word, ...]:
    """A segment's words; a segment with text but no word records gets untimed words."""
    return segment.words or tuple(Word(t) for t in segment.text.split())


def replace_span(words: tuple[Word, ...] | list[Word], new_texts: list[str]) -> list[Word]:
    """Words ``new_texts`` standing in for ``words``: they share the span's time, split by length,
    and take the span's mean confidence."""
    starts = [w.start for w in words if w.start is not None]
    ends = [w.end for w in words if w.end is not None]
    confs = [w.confidence for w in words if w.confidence is not None]
    conf = sum(confs) / len(confs) if confs else None
    if not starts or not ends:
        return [Word(t, confidence=conf) for t in new_texts]
    start, end = min(starts), max(ends)
    total = sum(len(t) for t in new_texts) or 1
    out, at = [], start
    for text in new_texts:
        step = (end - start) * len(text) / total
        out.append(Word(text, round(at, 3), round(min(end, at + step), 3), conf))
        at += step
    return out


def rebuild(segment: Segment, words: list[Word]) -> Segment:
    """``segment`` with new words (and text); its times and speaker stay."""
    text = " ".join(w.text for w in words)
    return Segment(start=segment.start, end=segment.end, speaker=segment.speaker, text=text,
                   words=tuple(words) if segment.words else (), speaker_name=segment.speaker_name)
