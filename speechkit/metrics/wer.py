"""Word error rate on normalised text, aligned by jiwer, with the aligned word pairs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jiwer

from speechkit.metrics.bootstrap import Ratio
from speechkit.metrics.normalize import normalize

Pair = tuple[str | None, str | None, str]


@dataclass(frozen=True)
class WerResult:
    """Alignment counts of one hypothesis against one reference (after normalisation).

    ``pairs`` lists ``(reference word, hypothesis word, op)`` in order, with ``op`` one of
    jiwer's ``equal``, ``substitute``, ``delete`` (hypothesis word None) and ``insert``
    (reference word None).
    """

    hits: int
    substitutions: int
    deletions: int
    insertions: int
    pairs: tuple[Pair, ...] = ()

    @property
    def reference_words(self) -> int:
        return self.hits + self.substitutions + self.deletions

    @property
    def hypothesis_words(self) -> int:
        return self.hits + self.substitutions + self.insertions

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def ratio(self) -> Ratio:
        """Errors over reference words (WER = ``ratio.value``; None for an empty reference)."""
        return Ratio(self.errors, self.reference_words)

    def details(self) -> dict[str, Any]:
        return {"hits": self.hits, "substitutions": self.substitutions, "deletions": self.deletions,
                "insertions": self.insertions, "errors": self.errors,
                "reference_words": self.reference_words, "hypothesis_words": self.hypothesis_words,
                "pairs": [list(p) for p in self.pairs]}


def word_error_rate(reference: str, hypothesis: str) -> WerResult:
    """Align ``hypothesis`` to ``reference``, both through the Whisper English normaliser.

    An empty reference gives a result whose ``ratio.value`` is None (its insertions still count
    when meetings are aggregated); neither side being empty ever divides by zero.
    """
    ref, hyp = normalize(reference), normalize(hypothesis)
    out = jiwer.process_words(ref, hyp)
    ref_words, hyp_words = out.references[0], out.hypotheses[0]
    pairs: list[Pair] = []
    for chunk in out.alignments[0]:
        r = ref_words[chunk.ref_start_idx:chunk.ref_end_idx]
        h = hyp_words[chunk.hyp_start_idx:chunk.hyp_end_idx]
        if chunk.type == "delete":
            pairs.extend((w, None, "delete") for w in r)
        elif chunk.type == "insert":
            pairs.extend((None, w, "insert") for w in h)
        else:
            pairs.extend((a, b, chunk.type) for a, b in zip(r, h))
    return WerResult(out.hits, out.substitutions, out.deletions, out.insertions, tuple(pairs))
