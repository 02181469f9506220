"""Text in Chinese and Japanese beside other scripts: which characters are CJK, how text splits into
tokens (each CJK character one token, a run of other characters one word), how tokens join back
(no space next to a CJK character), whether a term occurs in a text, and where sentences end.

This is the tokenisation a mixed error rate uses for code-switched speech (CJK characters as
tokens, other scripts as words); synthetic references are written in it (each CJK character a
timed token) and the alignment of questions and summaries splits CJK sentences with it.
"""
from __future__ import annotations

import re

#: Unicode ranges counted as CJK: kana, CJK ideographs (with extension A and compatibility
#: ideographs), the iteration mark and the prolonged sound mark, half-width katakana.
_CJK_RANGES = ("\u3005\u3006\u3007\u303b\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
               "\uf900-\ufaff\uff66-\uff9f")
_CJK = re.compile(f"[{_CJK_RANGES}]")
#: Punctuation of CJK text (ideographic comma and full stop, full-width forms, corner brackets...).
CJK_PUNCTUATION = "，。、？！；：「」『』（）【】《》〈〉・…～"
_STRIP = ",.?!;:" + CJK_PUNCTUATION + "\"'()"
_TOKEN = re.compile(f"[{_CJK_RANGES}]|[^\\s{_CJK_RANGES}]+")
_FULL_STOPS = "。！？．"
_STOPS = ".!?"
_CLOSERS = "」』）)]\"”’'"


def is_cjk(char: str) -> bool:
    """Whether the single character ``char`` is a CJK ideograph or kana."""
    return bool(_CJK.fullmatch(char))


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds any CJK character."""
    return bool(_CJK.search(text))


def split_token(token: str) -> list[str]:
    """A whitespace-free token as MER tokens: each CJK character on its own, runs of other
    characters kept whole (``"P99延迟"`` -> ``["P99", "延", "迟"]``; an English word is itself)."""
    return _TOKEN.findall(token)


def tokens(text: str) -> list[str]:
    """The MER tokens of ``text``: CJK characters one by one, other scripts by whitespace words;
    punctuation at the ends of a word and CJK punctuation dropped."""
    out = []
    for word in text.split():
        for token in split_token(word):
            token = token.strip(_STRIP)
            if token:
                out.append(token)
    return out


def join(parts: list[str]) -> str:
    """Join text pieces with one space, except where either side of the join is CJK (a character
    or its punctuation): ``["请", "check", "一下"]`` -> ``"请check一下"``, English words as before."""
    out = ""
    for part in parts:
        if not part:
            continue
        if out and not (_cjkish(out[-1]) or _cjkish(part[0])):
            out += " "
        out += part
    return out


def _cjkish(char: str) -> bool:
    return is_cjk(char) or char in CJK_PUNCTUATION


def contains(text: str, term: str) -> bool:
    """Whether ``term`` occurs in ``text``: as a substring where the term has CJK characters (CJK
    text has no spaces to bound words), else as whole words (bounded by spaces or CJK text)."""
    if has_cjk(term):
        return term in text
    return re.search(rf"(?<![^\s{_CJK_RANGES}]){re.escape(term)}(?![^\s{_CJK_RANGES},.?!;:])", text) is not None


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: cut after the CJK full stops ``。！？`` (and full-width ``．``),
    after ``.``, ``!`` or ``?`` followed by a space or the end, and at line breaks; closing quotes
    and brackets stay with their sentence, and a period inside a token (``pacs.008``, ``1.5``)
    does not cut."""
    text = text or ""
    out, start, i = [], 0, 0
    while i < len(text):
        char = text[i]
        i += 1
        if char == "\n":
            out.append(text[start:i])
            start = i
        elif char in _FULL_STOPS or char in _STOPS:
            while i < len(text) and (text[i] in _FULL_STOPS or text[i] in _STOPS or text[i] in _CLOSERS):
                i += 1
            if char in _FULL_STOPS or i == len(text) or text[i].isspace():
                out.append(text[start:i])
                start = i
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]
