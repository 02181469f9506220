"""Number recall and technical-term recall: spoken workspace terms found in the hypothesis.

A term is found in a text when its normalised form occurs in the normalised text as a whole-word
substring (both padded with spaces), the same rule for the reference scan and the hypothesis.
Recall counts term types, not occurrences: a term spoken three times is found if it appears once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from speechkit.metrics.bootstrap import Ratio
from speechkit.metrics.normalize import normalize, normalize_term
from speechkit.workspace import TermSet

MANIFEST = "manifest"  # the meeting's spoken terms listed in the workspace manifest
REFERENCE_SCAN = "reference scan"  # workspace terms found in the normalised reference text


@dataclass(frozen=True)
class TermRecall:
    """Which spoken terms of one category the hypothesis contains.

    ``ignored`` holds terms whose normalised form is empty (nothing to look for).
    """

    spoken: tuple[str, ...]
    found: tuple[str, ...]
    missed: tuple[str, ...]
    source: str
    ignored: tuple[str, ...] = ()

    @property
    def ratio(self) -> Ratio:
        return Ratio(len(self.found), len(self.spoken))

    def details(self) -> dict[str, Any]:
        return {"source": self.source, "spoken": list(self.spoken), "found": list(self.found),
                "missed": list(self.missed), "ignored": list(self.ignored)}


def _padded(text: str) -> str:
    return f" {normalize(text)} "


def occurs(term: str, padded_text: str) -> bool:
    """True if ``term``'s normalised form is a whole-word substring of ``padded_text``
    (normalised text with one space added at each end)."""
    key = normalize_term(term)
    return bool(key) and f" {key} " in padded_text


def term_recall(spoken: Sequence[str], hypothesis: str, source: str = MANIFEST) -> TermRecall:
    """Recall of the ``spoken`` terms in ``hypothesis`` (raw text; normalised here)."""
    terms = list(dict.fromkeys(spoken))
    ignored = tuple(t for t in terms if not normalize_term(t))
    scored = [t for t in terms if normalize_term(t)]
    hyp = _padded(hypothesis)
    hits = {t for t in scored if occurs(t, hyp)}
    return TermRecall(tuple(scored), tuple(t for t in scored if t in hits),
                      tuple(t for t in scored if t not in hits), source, ignored)


def spoken_terms(candidates: Sequence[str], reference: str) -> tuple[str, ...]:
    """The ``candidates`` that occur in the ``reference`` text (the reference scan)."""
    ref = _padded(reference)
    return tuple(t for t in dict.fromkeys(candidates) if occurs(t, ref))


def term_recalls(reference: str, hypothesis: str, workspace_terms: TermSet,
                 meeting_terms: TermSet | None = None) -> tuple[TermRecall, TermRecall]:
    """``(number recall, technical-term recall)`` of one meeting.

    The spoken terms are ``meeting_terms`` when the manifest lists them, otherwise the
    ``workspace_terms`` that occur in the normalised ``reference``.
    """
    if meeting_terms is not None:
        return (term_recall(meeting_terms.numbers, hypothesis, MANIFEST),
                term_recall(meeting_terms.jargon, hypothesis, MANIFEST))
    return (term_recall(spoken_terms(workspace_terms.numbers, reference), hypothesis, REFERENCE_SCAN),
            term_recall(spoken_terms(workspace_terms.jargon, reference), hypothesis, REFERENCE_SCAN))
