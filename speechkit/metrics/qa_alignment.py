"""Embedding alignment of extracted units with gold units: precision, recall and F1 (M3FinMeeting).

The units are short texts: the questions of the question-answer pairs a system extracted from a
meeting against the gold pairs' questions (the paper aligns the questions; the answers are not
compared), or the sentences of a system's summary against the sentences of the gold summary.
A predicted unit and a gold unit *align* when the similarity of their texts is at least
:data:`THRESHOLD` (0.75, the paper's cosine threshold); alignment is many-to-many: one unit may
align with several on the other side, and each side is counted on its own:

- precision = predicted units aligned with at least one gold unit / predicted units
- recall = gold units aligned with at least one predicted unit / gold units
- F1 = their harmonic mean (0 when both are 0).

A figure whose denominator is 0 is None (n/a): with no predicted unit precision is None, with no
gold unit recall is None, and F1 is None when either is. The similarity is
:func:`speechkit.text_similarity.text_similarity`'s: the cosine of all-MiniLM-L6-v2 sentence
embeddings, or, where that model is not installed, the lexical overlap (whose scale differs;
:attr:`Alignment.similarity` records which one scored). Chinese and Japanese units (any text with
a CJK character) are compared with the character-bigram overlap at its own measured threshold
(:func:`for_texts`): all-MiniLM-L6-v2 is English-only and no multilingual embedder ships in a
package. Sentences end at ``.!?`` before a space and at ``。！？`` (:func:`sentences`, which is
:func:`speechkit.cjk.sentences`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from speechkit import cjk
from speechkit.cjk import sentences
from speechkit.text_similarity import CharacterSimilarity, TextSimilarity

#: A predicted and a gold unit align at a similarity of at least this (the paper's 0.75).
THRESHOLD = 0.75


@dataclass(frozen=True)
class Alignment:
    """The counts of one alignment and the figures they give (see the module docstring)."""

    predicted: int
    gold: int
    aligned_predicted: int
    aligned_gold: int
    threshold: float = THRESHOLD
    similarity: str = "given"

    @property
    def precision(self) -> float | None:
        return self.aligned_predicted / self.predicted if self.predicted else None

    @property
    def recall(self) -> float | None:
        return self.aligned_gold / self.gold if self.gold else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The counts, the figures (None: n/a), the threshold and the similarity, as JSON data."""
        return {"predicted": self.predicted, "gold": self.gold, "aligned_predicted": self.aligned_predicted,
                "aligned_gold": self.aligned_gold, "precision": self.precision, "recall": self.recall,
                "f1": self.f1, "threshold": self.threshold, "similarity": self.similarity}


def align_matrix(similarity: np.ndarray, threshold: float = THRESHOLD, name: str = "given") -> Alignment:
    """The alignment given the ``predicted x gold`` similarity matrix: a pair aligns at ``>= threshold``."""
    sim = np.asarray(similarity, dtype=np.float64)
    if sim.ndim != 2:
        raise ValueError(f"expected a predicted x gold matrix, got shape {sim.shape}")
    aligned = sim >= threshold
    return Alignment(predicted=sim.shape[0], gold=sim.shape[1], aligned_predicted=int(aligned.any(axis=1).sum()),
                     aligned_gold=int(aligned.any(axis=0).sum()), threshold=threshold, similarity=name)


def cosine_matrix(predicted: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Cosine similarities of the rows of ``predicted`` with the rows of ``gold`` (vectors of any length)."""
    a, b = np.asarray(predicted, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if a.size == 0 or b.size == 0:
        return np.zeros((len(a), len(b)))
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return a @ b.T


def for_texts(texts: Sequence[str], similarity: TextSimilarity, threshold: float) -> tuple[TextSimilarity, float]:
    """The similarity and threshold to align ``texts`` with: the given ones, or, where any text has
    a CJK character, :class:`~speechkit.text_similarity.CharacterSimilarity` at its threshold."""
    if any(cjk.has_cjk(t) for t in texts):
        chars = CharacterSimilarity()
        return chars, chars.threshold
    return similarity, threshold


def align_texts(predicted: Sequence[str], gold: Sequence[str], similarity: TextSimilarity,
                threshold: float = THRESHOLD) -> Alignment:
    """The alignment of ``predicted`` texts with ``gold`` texts under ``similarity`` (or the CJK
    character similarity, :func:`for_texts`)."""
    similarity, threshold = for_texts([*predicted, *gold], similarity, threshold)
    matrix = similarity.matrix(list(predicted), list(gold)) if predicted and gold else \
        np.zeros((len(predicted), len(gold)))
    return align_matrix(matrix, threshold, similarity.name)


def align_summaries(predicted: str, gold: str, similarity: TextSimilarity, threshold: float = THRESHOLD) -> Alignment:
    """The section-summary variant: the sentences of a predicted summary against the gold summary's."""
    return align_texts(sentences(predicted), sentences(gold), similarity, threshold)
