"""Number recall and technical-term recall: spoken workspace terms found in the hypothesis.

A term is found in a text when its normalised form occurs in the normalised text as a whole-word
substring (both padded with spaces), the same rule for the reference scan and the hypothesis. A
meeting's text is normalised segment by segment (``normalized_text``), so a term is not found where
two segments' words only make it up once normalised together ("four point" | "two million").
Recall counts term types, not occurrences: a term spoken three times is found if it appears once.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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


def occurs(term: str, padded_text: str) -> bool:
    """True if ``term``'s normalised form is a whole-word substring of ``padded_text``
    (normalised text with one space added at each end)."""
    key = normalize_term(term)
    return bool(key) and f" {key} " in padded_text


def term_recall(spoken: Sequence[str], hypothesis: str, source: str = MANIFEST) -> TermRecall:
    """Recall of the ``spoken`` terms in ``hypothesis`` (raw text; normalised here)."""
    return _recall(spoken, _padded(normalize(hypothesis)), source)


def spoken_terms(candidates: Sequence[str], reference: str) -> tuple[str, ...]:
    """The ``candidates`` that occur in the ``reference`` text (raw text; the reference scan)."""
    return _occurring(candidates, _padded(normalize(reference)))


def term_recalls(reference: str, hypothesis: str, workspace_terms: TermSet,
                 meeting_terms: TermSet | None = None) -> tuple[TermRecall, TermRecall]:
    """``(number recall, technical-term recall)`` of one meeting, from its normalised ``reference`` and
    ``hypothesis`` texts (:func:`speechkit.metrics.normalize.normalized_text`).

    The spoken terms are ``meeting_terms`` when the manifest lists them, otherwise the
    ``workspace_terms`` that occur in the ``reference``.
    """
    hyp = _padded(hypothesis)
    if meeting_terms is not None:
        return (_recall(meeting_terms.numbers, hyp, MANIFEST), _recall(meeting_terms.jargon, hyp, MANIFEST))
    ref = _padded(reference)
    return (_recall(_occurring(workspace_terms.numbers, ref), hyp, REFERENCE_SCAN),
            _recall(_occurring(workspace_terms.jargon, ref), hyp, REFERENCE_SCAN))


def _padded(normalized: str) -> str:
    return f" {normalized} "


def _recall(spoken: Sequence[str], padded_hypothesis: str, source: str) -> TermRecall:
    """Recall of the ``spoken`` terms in a padded normalised text."""
    terms = list(dict.fromkeys(spoken))
    ignored = tuple(t for t in terms if not normalize_term(t))
    scored = [t for t in terms if normalize_term(t)]
    hits = {t for t in scored if occurs(t, padded_hypothesis)}
    return TermRecall(tuple(scored), tuple(t for t in scored if t in hits),
                      tuple(t for t in scored if t not in hits), source, ignored)


def _occurring(candidates: Sequence[str], padded_reference: str) -> tuple[str, ...]:
    """The ``candidates`` that occur in a padded normalised text."""
    return tuple(t for t in dict.fromkeys(candidates) if occurs(t, padded_reference))
