"""Word error rate on normalised text, aligned by jiwer, with the aligned word pairs."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
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
                "pairs": list(map(list, self.pairs))}


def word_error_rate(reference: str, hypothesis: str) -> WerResult:
    """Align ``hypothesis`` to ``reference``, both through the Whisper English normaliser.

    An empty reference gives a result whose ``ratio.value`` is None (its insertions still count
    when meetings are aggregated); neither side being empty ever divides by zero.
    """
    return align_words(normalize(reference), normalize(hypothesis))


def align_words(reference: str, hypothesis: str) -> WerResult:
    """Align ``hypothesis`` to ``reference``, both already normalised (``normalize``, or a meeting's
    ``normalized_text``); as :func:`word_error_rate` otherwise."""
    out = jiwer.process_words(reference, hypothesis)
    ref_words, hyp_words = out.references[0], out.hypotheses[0]
    pairs: list[Pair] = []
    for chunk in out.alignments[0]:
        r = ref_words[chunk.ref_start_idx:chunk.ref_end_idx]
        h = hyp_words[chunk.hyp_start_idx:chunk.hyp_end_idx]
        if chunk.type == "delete":
            pairs.extend(zip(r, repeat(None), repeat("delete")))
        elif chunk.type == "insert":
            pairs.extend(zip(repeat(None), h, repeat("insert")))
        else:
            pairs.extend(zip(r, h, repeat(chunk.type)))
    return WerResult(out.hits, out.substitutions, out.deletions, out.insertions, tuple(pairs))
