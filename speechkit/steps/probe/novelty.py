"""The novelty filter: a question too like an earlier one is not asked.

A candidate is dropped when its similarity to any question admitted before it (in earlier
iterations or earlier in its own batch) is above ``threshold`` (0.85, the paper's, on the cosine
of sentence embeddings; :func:`speechkit.text_similarity.text_similarity` gives the measure).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from speechkit.text_similarity import TextSimilarity

THRESHOLD = 0.85


@dataclass
class NoveltyFilter:
    """The questions admitted so far and the measure that compares new ones with them."""

    similarity: TextSimilarity
    threshold: float = THRESHOLD
    admitted: list[str] = field(default_factory=list)

    def closest(self, question: str) -> float:
        """The highest similarity of ``question`` to an admitted question (0 when none is)."""
        if not self.admitted:
            return 0.0
        return float(self.similarity.matrix([question], self.admitted).max())

    def admit(self, question: str) -> bool:
        """Admit ``question`` unless it is above the threshold to an admitted one; whether it was."""
        if self.closest(question) > self.threshold:
            return False
        self.admitted.append(question)
        return True
