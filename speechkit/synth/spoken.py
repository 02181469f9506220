"""Spoken renderings: numbers and dates in words, and the word pieces a turn is built from.

A turn is a list of :class:`Piece` objects. Each piece knows its canonical written form
(``pacs.008``), the verbatim words a transcriber writes for it (``pacs dot zero zero eight``)
and, word for word, what the TTS engine is told to say (``packs dot zero zero eight``). The
verbatim and TTS word lists always have the same length, so each verbatim word has exactly
one synthesised stretch of audio.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from speechkit import cjk

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
         "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_ORDINAL = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
            "nine": "ninth", "twelve": "twelfth"}
MONTHS = ("January February March April May June July August September October November "
           "December").split()


def number_words(n: int) -> str:
    """Cardinal number in words, 0 <= n < 10**9 ("one hundred twenty")."""
    if not 0 <= n < 10**9:
        raise ValueError(f"number out of range: {n}")
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + number_words(rest))
    for size, name in ((10**6, "million"), (1000, "thousand")):
        if n >= size:
            rest = n % size
            return number_words(n // size) + f" {name}" + ("" if rest == 0 else " " + number_words(rest))
    raise AssertionError("unreachable")


def ordinal_words(n: int) -> str:
    """Ordinal number in words ("thirty first")."""
    words = number_words(n).split()
    last = words[-1]
    if last in _ORDINAL:
        words[-1] = _ORDINAL[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return " ".join(words)


def paired_words(n: int) -> str:
    """A number said in digit pairs the way people say years or ticket numbers ("forty one twenty seven")."""
    if n < 100 or n >= 10000:
        return number_words(n)
    high, low = divmod(n, 100)
    if low == 0:
        return number_words(high) + " hundred"
    return number_words(high) + " " + (f"oh {_ONES[low]}" if low < 10 else number_words(low))


def date_canonical(day: dt.date) -> str:
    """A date as documents write it ("July 31")."""
    return f"{MONTHS[day.month - 1]} {day.day}"


def date_spoken(day: dt.date) -> str:
    """A date as people say it ("July thirty first")."""
    return f"{MONTHS[day.month - 1]} {ordinal_words(day.day)}"


@dataclass(frozen=True)
class Piece:
    """One unit of a turn.

    ``canonical`` is the written form (None for disfluencies, which the canonical transcript
    drops); ``words`` the verbatim words; ``say`` what the TTS says for each verbatim word;
    ``term`` the canonical form of the workspace term this piece speaks, if any.
    """

    canonical: str | None
    words: tuple[str, ...]
    say: tuple[str, ...]
    term: str | None = None

    def __post_init__(self) -> None:
        if len(self.words) != len(self.say) or not self.words:
            raise ValueError(f"piece needs one TTS rendering per verbatim word: {self.words} / {self.say}")


def plain(text: str) -> list[Piece]:
    """Pieces for ordinary text: one piece per word; punctuation stays in the canonical and TTS forms."""
    out = []
    for token in text.split():
        word = token.strip(",.?!;:")
        if not word:
            continue
        out.append(Piece(canonical=token, words=(word,), say=(token,)))
    return out


def filler(word: str) -> Piece:
    """A disfluency (um, uh, a repeated word): spoken and transcribed verbatim, absent from the canonical form."""
    return Piece(canonical=None, words=(word,), say=(word + ",",) if word in ("um", "uh") else (word,))


def canonical_text(pieces: list[Piece]) -> str:
    """The canonical written form of a list of pieces: joined with spaces, none next to a CJK
    character (:func:`speechkit.cjk.join`)."""
    return cjk.join([p.canonical for p in pieces if p.canonical])


def verbatim_words(pieces: list[Piece]) -> list[str]:
    """The verbatim words of a list of pieces."""
    return [w for p in pieces for w in p.words]


def tts_words(pieces: list[Piece]) -> list[str]:
    """What the TTS says, one entry per verbatim word."""
    return [s for p in pieces for s in p.say]
