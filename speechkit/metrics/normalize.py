"""Text normalisation shared by every word metric: Whisper's ``EnglishTextNormalizer``.

One instance serves WER, term recall, cpWER and tcpWER, so reference, hypothesis and terms are
always normalised identically. It lower-cases, removes punctuation and fillers, expands
contractions, spells British forms the American way and rewrites spoken numbers as digits
("twelve percent" -> "12%", "four point two million dollars" -> "$4200000").

A meeting is normalised segment by segment (:func:`segment_words`): every word metric reads its
words from there, so a number, a bracket or a contraction never joins two segments, and WER, term
recall, cpWER, tcpWER and the per-speaker split all see the same tokens.
"""
from __future__ import annotations

from functools import lru_cache
from importlib.metadata import version
from itertools import chain

from whisper_normalizer.english import EnglishTextNormalizer

from speechkit.transcript import Segment, Transcript

NORMALIZER_NAME = (f"whisper_normalizer.english.EnglishTextNormalizer "
                   f"(whisper-normalizer {version('whisper-normalizer')})")

_NORMALIZER = EnglishTextNormalizer()
_KEPT_SYMBOLS = ".%$¢€£"  # what the normaliser keeps of punctuation (numbers, currencies)


@lru_cache(maxsize=1 << 16)
def normalize(text: str) -> str:
    """``text`` normalised, with single spaces between words and none at the ends.

    Cached (the normaliser takes a fraction of a millisecond per call plus seconds per megabyte):
    meetings repeat short turns, and the terms of the term list are normalised for every meeting;
    a cached result is the same string. A token of symbols alone is dropped: the normaliser keeps
    ``.``, ``%`` and currency signs for numbers, and leaves a lone ``.`` where text ends in "...".
    """
    return " ".join(w for w in _NORMALIZER(text).split() if w.strip(_KEPT_SYMBOLS))


def normalize_term(term: str) -> str:
    """A term normalised like running text."""
    return normalize(term)


def segment_words(transcript: Transcript) -> tuple[tuple[str, ...], ...]:
    """The normalised words of each segment of ``transcript``, in the order of ``transcript.segments``.

    Cached for the last few transcripts (keyed by their segments' texts): scoring reads each meeting
    for WER, term recall, cpWER, tcpWER and the per-speaker split, and normalises each text once.
    """
    return _segment_words(tuple(s.text for s in transcript.segments))


@lru_cache(maxsize=4)
def _segment_words(texts: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    words: dict[str, tuple[str, ...]] = {}
    for text in texts:
        if text not in words:
            words[text] = tuple(normalize(text).split())
    return tuple(words[text] for text in texts)


def words_in_time_order(transcript: Transcript) -> tuple[list[Segment], list[tuple[str, ...]]]:
    """``transcript``'s segments in start-time order (stable, as meeteval sorts) and their normalised
    words (:func:`segment_words`), the order in which cpWER and the per-speaker split concatenate them."""
    segments, words = transcript.segments, segment_words(transcript)
    order = sorted(range(len(segments)), key=lambda k: segments[k].start)
    return [segments[k] for k in order], [words[k] for k in order]


def normalized_text(transcript: Transcript) -> str:
    """The meeting's normalised words, segment by segment in the transcript's (time) order, single spaces."""
    return " ".join(chain.from_iterable(segment_words(transcript)))
