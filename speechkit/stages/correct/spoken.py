"""How a canonical term is said, and how close some recognised words sound to it.

:func:`spoken_forms` derives the ways a term is read out ("pacs.008" -> "pacs dot zero zero
eight", "P99" -> "p ninety nine", "v2.3.1" -> "version two point three point one") from the
canonical written form alone: numbers through num2words, acronyms letter by letter, separators
by name. :func:`score_matrix` compares recognised words to those forms phonetically (jellyfish
metaphone keys) and orthographically (rapidfuzz ratios); the lexicon corrector and the guards
share it.
"""
from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import jellyfish
import numpy as np
from num2words import num2words
from rapidfuzz import fuzz, process

#: Punctuation stripped from the edges of a recognised word before comparing it. Symbols that
#: are part of a term ("%", "$", "#", ...) are kept.
EDGE_PUNCTUATION = ",.;:!?\"'()[]{}<>«»“”‘’—–…"

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_PIECE = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+|[A-Za-z]+|\S")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_ORDINAL_SUFFIX = {"st", "nd", "rd", "th"}
#: Units written right after a number, and how they are said.
_UNITS = {
    "k": ["k", "thousand"], "m": ["million", "m"], "b": ["billion", "b"], "bn": ["billion"],
    "x": ["x", "times"], "ms": ["milliseconds", "m s"], "s": ["seconds", "s"],
    "h": ["hours", "h"], "kb": ["kilobytes", "k b"], "mb": ["megabytes", "m b"],
    "gb": ["gigabytes", "g b", "gigs"], "tb": ["terabytes", "t b"], "hz": ["hertz"],
    "khz": ["kilohertz"], "ghz": ["gigahertz"], "kg": ["kilograms", "k g"], "km": ["kilometers"],
}
_CURRENCY = {"$": ["dollars", "dollar"], "€": ["euros", "euro"], "£": ["pounds", "pound"]}
_SYMBOLS = {"_": ["underscore"], "/": ["slash", "over", ""], "%": ["percent"], "+": ["plus"],
            "&": ["and"], "#": ["number", "hash", ""], "@": ["at"], ":": [""], "'": [""],
            "=": ["equals"], "*": ["star", "times"], "~": ["tilde", "about"]}
#: How letters are named when an acronym is spelled out ("UI" -> "you eye").
_LETTER_NAMES = dict(zip("abcdefghijklmnopqrstuvwxyz", (
    "a", "bee", "see", "dee", "e", "ef", "gee", "aitch", "eye", "jay", "kay", "el", "em", "en", "oh",
    "pee", "cue", "are", "ess", "tee", "you", "vee", "double you", "ex", "why", "zee")))
_DIGITS_ZERO = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _words(text: str) -> str:
    """num2words output as plain lowercase words: no hyphens or commas."""
    return " ".join(text.replace("-", " ").replace(",", " ").lower().split())


def _cardinal(n: int) -> list[str]:
    said = _words(num2words(n))
    return list(dict.fromkeys([said.replace(" and ", " "), said]))


def _digit_by_digit(digits: str) -> list[str]:
    zero = " ".join(_DIGITS_ZERO[int(d)] for d in digits)
    return list(dict.fromkeys([zero, zero.replace("zero", "oh")]))


def _number(digits: str, after_month: bool = False) -> list[str]:
    """Ways of reading a run of digits (commas allowed as thousands separators)."""
    plain = digits.replace(",", "")
    n = int(plain)
    if "," in digits:
        return _cardinal(n)
    forms: list[str] = []
    if after_month and 1 <= n <= 31:
        forms += [_words(num2words(n, to="ordinal"))]
    if len(plain) > 1 and plain.startswith("0"):
        forms += _digit_by_digit(plain) + (_cardinal(n) if n else [])
    elif len(plain) == 4 and 1100 <= n <= 2099:
        forms += [_words(num2words(n, to="year"))] + _cardinal(n) + _digit_by_digit(plain)
    elif len(plain) == 4:
        forms += _digit_by_digit(plain) + _cardinal(n) + [" ".join(_words(num2words(int(p)))
                                                                  for p in (plain[:2], plain[2:]))]
    elif len(plain) == 3:
        forms += _cardinal(n) + _digit_by_digit(plain)
        if int(plain[1:]) >= 10:
            forms.append(f"{_DIGITS_ZERO[int(plain[0])]} {_words(num2words(int(plain[1:])))}")
    elif len(plain) > 4:
        forms += _cardinal(n) + _digit_by_digit(plain)
    else:
        forms += _cardinal(n)
    return list(dict.fromkeys(forms))


def _digit(piece: str) -> bool:
    return piece[:1] in "0123456789" and piece != ""


def _letters(word: str) -> str:
    return " ".join(word.lower())


def _alpha(run: str, before_digits: bool) -> list[str]:
    """Ways of saying a run of letters: acronyms letter by letter (as letters and as letter names),
    camelCase split."""
    parts = _CAMEL.findall(run) or [run]
    options: list[list[str]] = []
    for part in parts:
        low = part.lower()
        if len(part) == 1:
            opts = list(dict.fromkeys([low, _LETTER_NAMES.get(low, low)]))
            opts += ["version"] if low == "v" and before_digits else []
        elif part.isupper():
            opts = [_letters(part), " ".join(_LETTER_NAMES.get(c, c) for c in low), low]
        elif not re.search(r"[aeiouy]", low) and len(low) <= 5:
            opts = [_letters(part), " ".join(_LETTER_NAMES.get(c, c) for c in low), low]
        else:
            opts = [low]
        options.append(opts)
    forms = [" ".join(c) for c in itertools.product(*options)]
    if len(parts) > 1:
        forms.append(run.lower())
    return list(dict.fromkeys(forms))


def _iso_date(match: re.Match[str]) -> list[str]:
    year, month, day = (int(g) for g in match.groups())
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        return []
    name = _MONTHS[month - 1]
    nth = _words(num2words(day, to="ordinal"))
    said_year = _words(num2words(year, to="year"))
    return [f"{name} {nth} {said_year}", f"{name} {nth}", f"the {nth} of {name}",
            f"{name} {_words(num2words(day))}"]


def _piece_options(term: str) -> list[list[str]]:
    """The term cut into pieces, each with its spoken alternatives (most likely first)."""
    term = term.strip()
    currency: list[str] | None = None
    if term[:1] in _CURRENCY:
        currency, term = _CURRENCY[term[0]], term[1:]
    plain = unicodedata.normalize("NFKD", term.replace("'", "").replace("’", ""))
    pieces = _PIECE.findall("".join(c for c in plain if not unicodedata.combining(c)))
    out: list[list[str]] = []
    for i, piece in enumerate(pieces):
        prev = pieces[i - 1] if i else ""
        nxt = pieces[i + 1] if i + 1 < len(pieces) else ""
        if _digit(piece):
            out.append(_number(piece, after_month=prev.lower() in _MONTHS))
        elif piece.isalpha():
            low = piece.lower()
            if _digit(prev) and low in _ORDINAL_SUFFIX and out:
                out[-1] = [_words(num2words(int(prev.replace(",", "")), to="ordinal"))]
            elif _digit(prev) and low in _UNITS:
                out.append(_UNITS[low])
            else:
                out.append(_alpha(piece, before_digits=_digit(nxt)))
        elif piece == ".":
            out.append(["point", "dot"] if _digit(prev) and _digit(nxt) else ["dot", "point"])
        elif piece == "-":
            out.append(["", "dash", "hyphen"] if prev.isalpha() and nxt.isalpha()
                       else ["dash", "minus", ""])
        elif piece in _CURRENCY:
            out.append(_CURRENCY[piece])
        else:
            out.append(_SYMBOLS.get(piece, [""]))
    if currency:
        out.append(currency)
    return out


@lru_cache(maxsize=4096)
def spoken_forms(term: str, max_forms: int = 24) -> tuple[str, ...]:
    """The ways ``term`` is said, as lowercase space-separated words, most likely first.

    Derived from the canonical written form only. The first form is the most common reading
    ("2024" -> "twenty twenty four"); at most ``max_forms`` forms are returned.
    """
    date = _ISO_DATE.match(term.strip())
    if date and (forms := _iso_date(date)):
        return tuple(forms[:max_forms])
    options = _piece_options(term)
    if not options:
        return ()
    while _product_size(options) > 20000:
        options = [o[:max(1, len(o) - 1)] for o in options]
    combos = sorted(itertools.product(*(range(len(o)) for o in options)), key=sum)
    forms = (" ".join(" ".join(options[p][i] for p, i in enumerate(combo)).split()) for combo in combos)
    return tuple(itertools.islice((f for f in dict.fromkeys(forms) if f), max_forms))


def _product_size(options: list[list[str]]) -> int:
    size = 1
    for o in options:
        size *= len(o)
    return size


def normalize_word(word: str) -> str:
    """A recognised word as compared: lowercase, edge punctuation stripped."""
    return word.strip(EDGE_PUNCTUATION + " ").lower()


def possessive(token: str) -> tuple[str, str]:
    """A normalised word split into stem and possessive ending ("devon's" -> "devon", "'s")."""
    for ending in ("'s", "’s"):
        if token.endswith(ending) and len(token) > len(ending):
            return token[:-len(ending)], ending
    return token, ""


def compact(text: str) -> str:
    """Letters and digits only, lowercase: the written skeleton of a word or phrase."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def say(words: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Recognised words with digits and symbols read out ("p99" -> "p", "ninety", "nine")."""
    out: list[str] = []
    for word in words:
        if word.isalpha() or not word:
            out.extend([word] if word else [])
        else:
            forms = spoken_forms(word, 1)
            out.extend(forms[0].split() if forms else [])
    return tuple(out)


def phonetic_key(words: list[str] | tuple[str, ...]) -> str:
    """Concatenated metaphone keys of spoken words (word by word, so "p ninety" keeps its P)."""
    return "".join(jellyfish.metaphone(w) for w in words if w)


@dataclass(frozen=True)
class Form:
    """One spoken form of a vocabulary entry, with its precomputed comparison keys."""

    words: tuple[str, ...]
    compact: str
    key: str

    @classmethod
    def of(cls, spoken: str) -> Form:
        words = tuple(spoken.split())
        return cls(words=words, compact="".join(words), key=phonetic_key(words))


def score_matrix(spans: list[tuple[str, ...]], entries: list[Entry] | tuple[Entry, ...]) -> np.ndarray:
    """Closeness in [0, 1] of each span of normalised recognised words to each entry.

    Per spoken form, the mean of an orthographic ratio (rapidfuzz Indel ratio on the letters
    without spaces) and a phonetic ratio (on metaphone keys); an entry scores its best form. A
    span with digits or symbols is also compared as written with the canonical form ("pacs 008"
    vs "pacs.008"). Returns an array of shape (len(spans), len(entries)).
    """
    out = np.zeros((len(spans), len(entries)), dtype=np.float32)
    forms = [f for e in entries for f in e.forms]
    if not spans or not forms:
        return out
    spoken = [say(s) for s in spans]
    s_keys = [phonetic_key(s) for s in spoken]
    ortho = process.cdist(["".join(s) for s in spoken], [f.compact for f in forms], scorer=fuzz.ratio)
    phon = process.cdist(s_keys, [f.key for f in forms], scorer=fuzz.ratio)
    no_key = np.array([not k for k in s_keys])[:, None] & np.array([not f.key for f in forms])[None, :]
    phon = np.where(no_key, ortho, phon)
    per_form = (ortho + phon) / 200
    starts = np.cumsum([0] + [len(e.forms) for e in entries])[:-1]
    has_forms = np.array([bool(e.forms) for e in entries])
    out[:, has_forms] = np.maximum.reduceat(per_form, starts[has_forms], axis=1)
    written = [compact("".join(s)) for s in spans]
    targets = [compact(e.canonical) for e in entries]
    ratio = process.cdist(written, targets, scorer=fuzz.ratio) / 100
    usable = (np.array([bool(w) and not w.isalpha() for w in written])[:, None]
              & np.array([len(t) >= 3 for t in targets])[None, :])
    return np.maximum(out, np.where(usable, ratio, 0.0)).astype(np.float32)


@dataclass(frozen=True)
class Entry:
    """A vocabulary entry: its canonical written form, kind ("term" or "name") and spoken forms."""

    canonical: str
    kind: str
    forms: tuple[Form, ...]

    @classmethod
    def of(cls, canonical: str, kind: str) -> Entry:
        return cls(canonical, kind, tuple(Form.of(f) for f in spoken_forms(canonical)))

    @property
    def tokens(self) -> tuple[str, ...]:
        """The canonical form as normalised words ("Priya Sharma" -> ("priya", "sharma"))."""
        return tuple(normalize_word(w) for w in self.canonical.split())

    @property
    def short(self) -> bool:
        """True for entries of at most four letters/digits, which need a closer match."""
        return len(compact(self.canonical)) <= 4

    @property
    def max_words(self) -> int:
        """Word count of the longest spoken form."""
        return max((len(f.words) for f in self.forms), default=len(self.tokens))

    def says(self, span: tuple[str, ...]) -> bool:
        """True if ``span`` (normalised words) is exactly one of the spoken forms."""
        return any(f.words == tuple(say(span)) for f in self.forms)
