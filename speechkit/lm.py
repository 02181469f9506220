"""N-gram language models from text: ARPA files built by kaldingram, loaded with KenLM.

The CTC recogniser shallow-fuses such a model, built from workspace text, into its beam search
(``speechkit.stages.asr.ctc``). Text is first normalised to what a character CTC model emits: lower
case, only the characters of its alphabet, numbers spelled out ("pacs.008" -> "pacs dot zero
zero eight") when the alphabet has no digits.

The model is Kneser-Ney smoothed (kaldingram, a port of Kaldi's SRILM-compatible ``make_kn_lm``).
Two guards make it usable on the small texts a workspace has:

- ``<unk>`` is given the mass of a word seen once, so a word outside the text is unlikely but
  not impossible (without it KenLM gives unknown words log10 probability -100).
- The absolute discount of each order is capped at ``max_discount``: with no n-gram of that
  order seen twice, Kaldi's estimate is exactly 1 and every n-gram seen once would get
  probability zero.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import re
import unicodedata
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

from speechkit.errors import FormatError
from speechkit.io.atomic import atomic_open

if TYPE_CHECKING:
    import kenlm

#: The characters of an English character CTC vocabulary (wav2vec2 style), space excluded.
DEFAULT_ALPHABET = "abcdefghijklmnopqrstuvwxyz'"
#: ARPA's sentence markers and unknown word; never part of a model's vocabulary list.
MARKERS = ("<s>", "</s>", "<unk>")

_SENTENCE_END = re.compile(r"[\r\n]+|(?<=[.!?;:])\s+")
_SYMBOLS = {"%": " percent ", "&": " and ", "+": " plus ", "@": " at "}


#: Words of the general English n-gram (:func:`general_lm_text`).
GENERAL_WORDS = 20_000


@functools.lru_cache(maxsize=1)
def general_lm_text(words: int = GENERAL_WORDS) -> str:
    """A general English text for an n-gram that knows no workspace: wordfreq's ``words`` most
    frequent English words, one a line, each repeated by its Zipf frequency (``the`` 5 times, a word
    of Zipf 3 once). The OSynth paper's SpeechBrain stack decodes with one KenLM at every level; no
    package ships such a model, so ``context.rules: paper`` builds this one (:mod:`speechkit.level_rules`)."""
    from wordfreq import top_n_list, zipf_frequency

    return "\n".join(w for w in top_n_list("en", words)
                     for _ in range(max(1, int(zipf_frequency(w, "en")) - 2)))


def default_cache_dir() -> Path:
    """Where built LMs are kept: ``$SPEECHKIT_CACHE/lm`` (default ``~/.cache/speechkit/lm``)."""
    return Path(os.environ.get("SPEECHKIT_CACHE", "~/.cache/speechkit")).expanduser() / "lm"


def _spell_number(digits: str) -> str:
    """Digits as a speaker reads them: IDs digit by digit, years as years, else cardinal."""
    from num2words import num2words

    value = int(digits)
    if (len(digits) > 1 and digits[0] == "0") or len(digits) > 6:
        words = " ".join(num2words(int(d)) for d in digits)
    elif len(digits) == 4 and 1100 <= value < 2100 and value % 1000 >= 10:
        words = num2words(value, to="year")
    else:
        words = num2words(value)
    return " " + re.sub(r"[-,]", " ", words) + " "


def normalize_text(text: str, alphabet: str = DEFAULT_ALPHABET) -> str:
    """``text`` as the words a CTC model with ``alphabet`` would emit, space separated.

    Lower-cases, strips accents, reads ``.`` inside a token as "point" (between digits) or "dot",
    spells numbers out unless the alphabet has digits, and turns every other character outside
    the alphabet into a word break. Apostrophes survive only inside words.
    """
    text = unicodedata.normalize("NFKD", text.lower().replace("\u2019", "'"))
    text = "".join(c for c in text if not unicodedata.combining(c))
    for symbol, word in _SYMBOLS.items():
        text = text.replace(symbol, word)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"(?<=\d)\.(?=\d)", " point ", text)
    text = re.sub(r"(?<=\w)\.(?=\w)", " dot ", text)
    if not any(c.isdigit() for c in alphabet):
        text = re.sub(r"\d+", lambda m: _spell_number(m.group()), text)
    allowed = set(alphabet)
    text = "".join(c if c in allowed else " " for c in text)
    words = (w.strip("'") for w in text.split())
    return " ".join(w for w in words if w)


def corpus_lines(texts: Iterable[str], alphabet: str = DEFAULT_ALPHABET) -> list[str]:
    """The sentences of ``texts`` (split at line breaks and sentence punctuation), normalised."""
    lines = (normalize_text(s, alphabet) for text in texts for s in _SENTENCE_END.split(text))
    return [line for line in lines if line]


def _write_arpa(lines: list[str], path: Path, order: int, max_discount: float) -> None:
    from kaldingram.train import NgramCounts

    counts = NgramCounts(order)
    # kaldingram draws nested tqdm bars for each step of a build that takes a fraction of a second.
    with contextlib.redirect_stderr(io.StringIO()):
        for line in [*lines, "<unk>"]:
            counts.add_raw_counts_from_line(line)
        counts.cal_discounting_constants()
        counts.d = [min(d, max_discount) for d in counts.d]
        counts.cal_f()
        counts.cal_bow()
        with atomic_open(path) as handle:
            counts.print_as_arpa(handle)


def _check_options(order: int, max_discount: float) -> None:
    if not 2 <= order <= 5:  # KenLM loads bigrams and up; kaldingram builds up to 5-grams
        raise ValueError(f"n-gram order must be 2 to 5, got {order}")
    if not 0 < max_discount < 1:
        raise ValueError(f"max_discount must be in (0, 1), got {max_discount}")


def build_arpa(texts: Iterable[str], path: str | Path, order: int = 3, *,
               alphabet: str = DEFAULT_ALPHABET, max_discount: float = 0.9) -> Path:
    """Build a Kneser-Ney ``order``-gram LM of ``texts`` (normalised for ``alphabet``) into ``path``.

    The file is written atomically. Raises ``ValueError`` if the texts hold no words.
    """
    _check_options(order, max_discount)
    lines = corpus_lines(texts, alphabet)
    if not lines:
        raise ValueError("the LM text has no words after normalisation")
    path = Path(path)
    _write_arpa(lines, path, order, max_discount)
    return path


def cached_arpa(texts: Iterable[str], order: int = 3, *, alphabet: str = DEFAULT_ALPHABET,
                max_discount: float = 0.9, cache_dir: str | Path | None = None) -> Path:
    """Like :func:`build_arpa`, into ``cache_dir`` under a hash of the normalised text and options.

    The same text is built once; concurrent builders each write a temporary file and rename it.
    """
    _check_options(order, max_discount)
    lines = corpus_lines(texts, alphabet)
    if not lines:
        raise ValueError("the LM text has no words after normalisation")
    key = hashlib.sha256("\n".join(
        [f"kaldingram {version('kaldingram')} order={order} max_discount={max_discount}", *lines]
    ).encode()).hexdigest()[:24]
    path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = path / f"{key}.{order}gram.arpa"
    if not path.is_file():
        _write_arpa(lines, path, order, max_discount)
    return path


def load_lm(path: str | Path) -> kenlm.Model:
    """Load an ARPA (or KenLM binary) n-gram model with KenLM."""
    import kenlm

    path = Path(path)
    if not path.is_file():
        raise FormatError(path, "no such language model file")
    config = kenlm.Config()
    config.show_progress = False
    config.arpa_complain = kenlm.ARPALoadComplain.NONE
    try:
        return kenlm.Model(str(path), config)
    except (OSError, RuntimeError) as e:
        raise FormatError(path, f"not an ARPA or KenLM binary language model ({e})") from e


def arpa_unigrams(path: str | Path) -> list[str]:
    """The words of an ARPA file's 1-gram section, sentence markers and ``<unk>`` excluded."""
    words, in_unigrams = [], False
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if line == "\\1-grams:":
                in_unigrams = True
            elif in_unigrams and line.startswith("\\"):
                break
            elif in_unigrams and line:
                fields = line.split("\t")
                if len(fields) < 2:
                    raise FormatError(path, f"1-gram line without a tab: {line!r}")
                if fields[1] not in MARKERS:
                    words.append(fields[1])
    if not in_unigrams:
        raise FormatError(path, "no \\1-grams: section (not an ARPA file)")
    return words
