"""Text normalisation shared by every word metric: Whisper's ``EnglishTextNormalizer``.

One instance serves WER, term recall, cpWER and tcpWER, so reference, hypothesis and terms are
always normalised identically. It lower-cases, removes punctuation and fillers, expands
contractions, spells British forms the American way and rewrites spoken numbers as digits
("twelve percent" -> "12%", "four point two million dollars" -> "$4200000").
"""
from __future__ import annotations

from functools import lru_cache
from importlib.metadata import version

from whisper_normalizer.english import EnglishTextNormalizer

NORMALIZER_NAME = f"whisper_normalizer.english.EnglishTextNormalizer (whisper-normalizer {version('whisper-normalizer')})"

_NORMALIZER = EnglishTextNormalizer()


@lru_cache(maxsize=1 << 16)
def normalize(text: str) -> str:
    """``text`` normalised, with single spaces between words and none at the ends.

    Cached (the normaliser takes seconds per megabyte): scoring normalises each meeting's texts for
    WER and again for term recall, each segment for cpWER and tcpWER, and the terms of the term list
    for every meeting; a cached result is the same string.
    """
    return " ".join(_NORMALIZER(text).split())


def normalize_term(term: str) -> str:
    """A term normalised like running text."""
    return normalize(term)
