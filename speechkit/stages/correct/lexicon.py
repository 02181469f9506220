"""Constrained lexicon correction: replace misrecognised spans by vocabulary entries that sound
or look like them, only where the recogniser was unsure or the workspace LM clearly agrees.

For every span of 1..k words of a turn, each vocabulary entry is scored against the span
(:func:`~speechkit.stages.correct.spoken.score_matrix`: metaphone keys and rapidfuzz ratios over the
entry's derived spoken forms). A candidate must

1. match it: a *strong* match scores at least ``min_score`` (more for short entries and for spans
   of common English words only) and is not a lone common English word; a *weak* match scores
   at least ``min_weak_score`` ("pre a" -> "Priya", "cooper net is" -> "Kubernetes") or is a lone
   common word ("same" -> "Sam"). A span that already is a vocabulary entry ("Devon") is never
   replaced by another ("Devon Cross");
2. be minimal: trimming a word off either end must lower its score (so "the packs" never
   replaces "the");
3. win its region: candidates are taken greedily by score, without overlaps;
4. pass a gate: the span is the entry split by the recognizer ("camt .054" -> "camt.054": same
   letters and digits over two or more words); or it is exactly a spoken form of the entry
   ("p ninety nine" -> "P99"); or the
   match is strong and the ASR was unsure (mean or minimum word confidence under a threshold); or
   an n-gram LM of the workspace text clearly prefers the corrected turn and the match is strong
   or the ASR was unsure. A weak match thus needs both the LM and low confidence. An LM that
   clearly prefers the original vetoes any candidate.

Measured on ~40,000 words of plain English (the three OSynth-related papers in shared/papers,
30-word turns) with every word at confidence 0.3 and a vocabulary of 70 terms and 10 people:
accepting weak matches on low confidence alone made over 400 false edits ("from the" ->
"Prometheus"); these rules with no LM made 9 edits, 6 of them real recoveries of terms the text
quotes as misrecognised ("SN714" -> "SN7142", "P NINETY NINE" -> "P99") and 3 false ("2024a" ->
"2024"). With an LM of two papers plus the term list, on the third paper (9,500 words) 16 edits,
about half false, mostly on tokens ASR does not emit ("L1–L3" -> "MT103", "person p8" ->
"pacs.008") and one on ordinary words ("meeting calendar around the" -> "MT103").

The rewritten turn then passes :func:`~speechkit.stages.correct.guards.check_rewrite` or is rejected.
"""
from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from speechkit.core.options import StageOptions, bounded
from speechkit.stages.correct import (
    CorrectionResult,
    CorrectionStats,
    Edit,
    Rejection,
    Vocabulary,
    rebuild,
    replace_span,
    segment_words,
)
from speechkit.stages.correct.guards import GuardOptions, check_rewrite
from speechkit.stages.correct.spoken import EDGE_PUNCTUATION, Entry, compact, normalize_word, possessive, score_matrix
from speechkit.transcript import Segment, Transcript, Word

log = logging.getLogger(__name__)
_INNER_PUNCTUATION = re.compile(r"[0-9A-Za-z][^0-9A-Za-z\s]+[0-9A-Za-z]")


class LanguageModel(Protocol):
    """An n-gram scorer with KenLM's interface (``kenlm.Model`` is one)."""

    order: int

    def full_scores(self, sentence: str, bos: bool = True,
                    eos: bool = True) -> Iterable[tuple[float, int, bool]]:
        """Per word (and the sentence end): log10 probability, n-gram length used, out of vocabulary."""
        ...


def lm_gain(lm: LanguageModel, words: list[str], start: int, end: int, new: str) -> float | None:
    """How much more likely (mean log10 per word) ``lm`` finds ``words`` with ``start:end``
    replaced by ``new``, over the words whose probability the replacement changes.

    Words are compared as :func:`speechkit.lm.normalize_text` says them (the form the workspace LM
    is built in). The mean per word keeps a replacement of several words by one from winning
    merely by being shorter. None if either side says nothing.
    """
    from speechkit.lm import normalize_text

    def said(part: list[str] | str) -> list[str]:
        return normalize_text(part if isinstance(part, str) else " ".join(part)).split()

    prefix, suffix = said(words[:start]), said(words[end:])
    old, replacement = said(words[start:end]), said(new)
    if not old or not replacement:
        return None

    def mean(middle: list[str]) -> float:
        scores = [s for s, _, _ in lm.full_scores(" ".join(prefix + middle + suffix), bos=True, eos=True)]
        part = scores[len(prefix):len(prefix) + len(middle) + min(len(suffix) + 1, lm.order - 1)]
        return sum(part) / len(part)

    return mean(replacement) - mean(old)


@dataclass(frozen=True)
class LexiconOptions(StageOptions):
    """Options of the lexicon corrector.

    Matching (scores in [0, 1], see :func:`~speechkit.stages.correct.spoken.score_matrix`):
    ``min_score``: a strong match; ``min_common_score``: a strong match by a span of common
    English words only (wordfreq Zipf frequency at least ``common_zipf``): "to perform" (0.84) is
    not "Terraform", "cafe ka" (0.86) is "Kafka"; a lone common word is only ever a weak match,
    unless it is a spoken form of the
    entry; ``min_short_score``: the least score for entries of at most four letters/digits ("CI",
    "Dev"), which have no weak matches; ``min_weak_score``: a weak match.
    ``max_span_words``: longest span considered (also at most the longest form + 2 words).

    Gates: ``accept_spoken_forms`` accepts a span that is exactly a spoken form of the entry
    (except a lone common word: "one" is not rewritten "1" on that ground alone). The
    ASR was unsure when the span's mean word confidence is below ``max_mean_confidence`` or its
    minimum below ``max_min_confidence`` (a word without confidence counts as
    ``missing_confidence``). The LM supports a candidate when the workspace LM (:func:`lm_gain`,
    mean log10 probability per affected word) prefers the corrected turn by at least
    ``lm_margin``, and vetoes it when it prefers the original by ``lm_veto`` or more. A strong
    match needs an unsure ASR or LM support; a weak match needs both. ``lm_order``: order of
    the n-gram LM built from ``Vocabulary.lm_text``.
    ``guards``: the turn guards (:class:`GuardOptions`; a mapping of its fields in a recipe).
    """

    min_score: float = bounded(0.82, ge=0.0, le=1.0)
    min_common_score: float = bounded(0.86, ge=0.0, le=1.0)
    min_short_score: float = bounded(0.9, ge=0.0, le=1.0)
    min_weak_score: float = bounded(0.65, ge=0.0, le=1.0)
    common_zipf: float = bounded(3.0, ge=0.0, le=8.0)
    max_span_words: int = bounded(8, ge=1, le=50)
    accept_spoken_forms: bool = True
    max_mean_confidence: float = bounded(0.75, ge=0.0, le=1.0)
    max_min_confidence: float = bounded(0.5, ge=0.0, le=1.0)
    missing_confidence: float = bounded(1.0, ge=0.0, le=1.0)
    lm_margin: float = bounded(1.0, ge=-100.0, le=100.0)
    lm_veto: float = bounded(1.0, ge=0.0, le=100.0)
    lm_order: int = bounded(3, ge=2, le=5)
    guards: GuardOptions = field(default_factory=GuardOptions)


@dataclass(frozen=True)
class _Candidate:
    start: int
    end: int
    entry: Entry
    score: float
    strong: bool


@dataclass(frozen=True)
class Proposal:
    """A candidate replacement of words ``start:end`` of a turn by ``texts`` (the entry's
    canonical words, keeping the original's leading and trailing punctuation and possessive),
    with its match ``score`` and the lexicon gate's verdict: ``gate`` is the gate that lets it
    through (``Edit.gate``) or ``reject:<reason>``; ``note`` says more."""

    start: int
    end: int
    entry: str
    texts: tuple[str, ...]
    score: float
    gate: str
    note: str

    @property
    def accepted(self) -> bool:
        """True if the lexicon's own gates let the replacement through."""
        return not self.gate.startswith("reject:")


def _is_common(word: str, zipf: float) -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en") >= zipf


class LexiconCorrector:
    """The constrained lexicon corrector (backend ``lexicon``).

    ``lm``: an n-gram model to use instead of the one built from ``Vocabulary.lm_text``;
    ``options`` or keyword overrides: :class:`LexiconOptions`. ``device`` is unused (the
    corrector runs on the CPU).
    """

    Options = LexiconOptions

    def __init__(self, options: LexiconOptions | None = None, lm: LanguageModel | None = None,
                 device: str = "auto", **overrides: Any) -> None:
        self.options = (options or LexiconOptions()).with_overrides(**overrides)
        self._lm = lm
        self._built: dict[str, LanguageModel] = {}

    def language_model(self, vocabulary: Vocabulary) -> LanguageModel | None:
        """The LM given at construction, else one built (once) from ``vocabulary.lm_text``."""
        if self._lm is not None or not vocabulary.lm_text:
            return self._lm
        key = hashlib.sha256(vocabulary.lm_text.encode()).hexdigest()
        if key not in self._built:
            from speechkit.lm import cached_arpa, load_lm

            try:
                self._built[key] = load_lm(cached_arpa([vocabulary.lm_text], self.options.lm_order))
            except ValueError as e:
                log.warning("no workspace LM for correction: %s", e)
                return None
        return self._built[key]

    def correct(self, transcript: Transcript, vocabulary: Vocabulary) -> CorrectionResult:
        """Replace vocabulary spans of ``transcript``; see the module docstring for the rules."""
        stats = CorrectionStats(backend="lexicon", turns=len(transcript.segments))
        entries = vocabulary.entries
        lm = self.language_model(vocabulary) if entries else None
        segments = [self._correct_segment(i, seg, entries, lm, stats) if entries else seg
                    for i, seg in enumerate(transcript.segments)]
        out = Transcript(transcript.session_id, segments, has_words=transcript.has_words,
                         has_speakers=transcript.has_speakers)
        return CorrectionResult(out, stats)

    def _tier(self, span: tuple[str, ...], entry: Entry, score: float) -> bool | None:
        """True for a strong match, False for a weak one, None for no match."""
        o = self.options
        if score < (o.min_short_score if entry.short else o.min_weak_score):
            return None
        if entry.says(span):
            return True
        common = all(_is_common(w, o.common_zipf) for w in span)
        if common and len(span) == 1:
            return False
        return score >= (max(o.min_score, o.min_common_score) if common else o.min_score)

    def _candidates(self, stems: list[str], entries: tuple[Entry, ...]) -> list[_Candidate]:
        """Minimal spans that match an entry, the best entry per span."""
        o = self.options
        floor = min(o.min_score, o.min_weak_score, o.min_short_score)
        longest = min(o.max_span_words, max(e.max_words for e in entries) + 2)
        spans = [(i, j) for i in range(len(stems)) for j in range(i + 1, min(len(stems), i + longest) + 1)
                 if all(stems[i:j])]
        if not spans:
            return []
        scores = score_matrix([tuple(stems[i:j]) for i, j in spans], entries)
        index = {span: row for row, span in enumerate(spans)}
        known = {e.tokens for e in entries}
        best: dict[tuple[int, int], _Candidate] = {}
        # An entry written with inner punctuation ("camt.054", "$45,000") that the recognizer split
        # at it ("camt .054", "$45 ,000"): the same letters and digits over several words.
        split = {compact(e.canonical): e for e in entries if _INNER_PUNCTUATION.search(e.canonical.strip("$€£%"))}
        for i, j in spans:
            entry = split.get(compact("".join(stems[i:j]))) if j - i > 1 else None
            if entry is not None:
                best[(i, j)] = _Candidate(i, j, entry, 1.0, True)
        for row, col in zip(*(scores >= floor).nonzero()):
            (i, j), entry, score = spans[row], entries[col], float(scores[row, col])
            span = tuple(stems[i:j])
            if j - i > entry.max_words + 2 or span in known:
                continue
            strong = self._tier(span, entry, score)
            trims = [index.get((i + 1, j)), index.get((i, j - 1))] if j - i > 1 else []
            if strong is None or any(t is not None and scores[t, col] >= score for t in trims):
                continue
            if (i, j) not in best or score > best[(i, j)].score:
                best[(i, j)] = _Candidate(i, j, entry, score, strong)
        return list(best.values())

    def _gate(self, words: tuple[Word, ...], stems: list[str], c: _Candidate,
              lm: LanguageModel | None) -> tuple[str, str]:
        """The gate that lets the candidate through, or ``reject:<reason>``; and a note."""
        o = self.options
        confs = [w.confidence if w.confidence is not None else o.missing_confidence
                 for w in words[c.start:c.end]]
        mean, low = sum(confs) / len(confs), min(confs)
        note = f"{'strong' if c.strong else 'weak'} match, confidence mean {mean:.2f} min {low:.2f}"
        span = tuple(stems[c.start:c.end])
        if c.score == 1.0 and len(span) > 1 and compact("".join(span)) == compact(c.entry.canonical):
            return "respelling", note  # the term itself, split by the recognizer ("camt .054")
        gain = lm_gain(lm, stems, c.start, c.end, c.entry.canonical) if lm is not None else None
        if gain is not None:
            note += f", LM gain {gain:+.2f}/word"
            if gain <= -o.lm_veto:
                return "reject:lm-prefers-original", note
        if o.accept_spoken_forms and c.entry.says(span) and not (
                len(span) == 1 and _is_common(span[0], o.common_zipf)):
            return "spoken-form", note
        unsure = mean < o.max_mean_confidence or low < o.max_min_confidence
        supported = gain is not None and gain >= o.lm_margin
        if c.strong and unsure:
            return "confidence", note
        if supported and (c.strong or unsure):
            return "lm", note
        return ("reject:confident" if c.strong else "reject:weak-match"), note

    def proposals(self, words: tuple[Word, ...] | list[Word], entries: tuple[Entry, ...],
                  lm: LanguageModel | None, *, overlapping: bool = False) -> list[Proposal]:
        """The candidate replacements of a turn's ``words``, best first, each with the gate's
        verdict; without ``overlapping`` only those that win their region (what :meth:`correct`
        applies), with it every minimal span's best entry (alternatives for a chooser)."""
        stems, endings = zip(*(possessive(normalize_word(w.text)) for w in words)) if words else ((), ())
        stems = list(stems)
        taken = [False] * len(words)
        out = []
        for c in sorted(self._candidates(stems, entries), key=lambda c: (-c.score, c.start - c.end)):
            if not overlapping and any(taken[c.start:c.end]):
                continue
            taken[c.start:c.end] = [True] * (c.end - c.start)
            gate, note = self._gate(words, stems, c, lm)
            texts = self._surface(words[c.start].text, words[c.end - 1].text, endings[c.end - 1], c.entry.canonical)
            out.append(Proposal(c.start, c.end, c.entry.canonical, tuple(texts), c.score, gate, note))
        return out

    def _correct_segment(self, index: int, segment: Segment, entries: tuple[Entry, ...],
                         lm: LanguageModel | None, stats: CorrectionStats) -> Segment:
        words = segment_words(segment)
        edits: list[Proposal] = []
        for p in self.proposals(words, entries, lm):
            if not p.accepted:
                old = " ".join(w.text for w in words[p.start:p.end])
                stats.rejected_candidates.append(Rejection(index, old, p.entry, p.gate[7:],
                                                           f"score {p.score:.2f}, {p.note}"))
                continue
            edits.append(p)
        if not edits:
            return segment
        new_words = list(words)
        for p in sorted(edits, key=lambda e: -e.start):
            new_words[p.start:p.end] = replace_span(words[p.start:p.end], list(p.texts))
        verdict = check_rewrite([w.text for w in words], [w.text for w in new_words], entries,
                                self.options.guards)
        if not verdict.ok:
            stats.rejected_turns.append(Rejection(index, segment.text, " ".join(w.text for w in new_words),
                                                  verdict.reason, verdict.detail))
            return segment
        for p in sorted(edits, key=lambda e: e.start):
            stats.edits.append(Edit(index, p.start, p.end, " ".join(w.text for w in words[p.start:p.end]),
                                    " ".join(p.texts), p.gate, round(p.score, 3)))
        return rebuild(segment, new_words)

    @staticmethod
    def _surface(first: str, last: str, ending: str, canonical: str) -> list[str]:
        """The canonical words, keeping what led the first / trailed the last old word
        (punctuation, a possessive "'s")."""
        lead = first[:len(first) - len(first.lstrip(EDGE_PUNCTUATION))]
        trail = last[len(last.rstrip(EDGE_PUNCTUATION)):]
        texts = canonical.split()
        texts[0] = lead + texts[0]
        texts[-1] = texts[-1] + ending + trail
        return texts
