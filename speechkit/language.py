"""Spoken languages: what a workspace, a meeting, a reference and a hypothesis are in.

A language is a BCP-47 tag (``en``, ``en-GB``, ``zh``, ``zh-Hans-CN``, ``ja``) or ``mixed``, a
code-switched meeting, with the languages spoken listed (``mixed`` of ``zh`` and ``en``). The
tag decides how text is cut into tokens for scoring (characters for Chinese and Japanese, words
elsewhere: :mod:`speechkit.cjk`), which normaliser applies and which Whisper models may decode
it (docs/multilingual.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import langcodes

MIXED = "mixed"
#: Primary subtags of languages written without spaces between words: scored per character.
CHARACTER_LANGUAGES = frozenset({"zh", "ja", "yue", "cmn", "wuu", "hak", "nan"})
_TAG = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*")


def _checked_tag(tag: object) -> str:
    if not isinstance(tag, str) or not _TAG.fullmatch(tag) or not langcodes.tag_is_valid(tag):
        raise ValueError(f"unknown language {tag!r}: expected a BCP-47 tag such as en, zh, ja or zh-Hans, "
                         f"or {MIXED!r} with the languages listed")
    return tag


@dataclass(frozen=True)
class SpokenLanguage:
    """``code`` as the manifest writes it; ``languages`` the tags spoken (one, or two or more for mixed)."""

    code: str
    languages: tuple[str, ...]

    @property
    def primaries(self) -> tuple[str, ...]:
        """The primary subtags spoken (``zh`` for ``zh-Hans-CN``), in order."""
        return tuple(dict.fromkeys(tag.split("-")[0].lower() for tag in self.languages))

    @property
    def is_english(self) -> bool:
        return self.primaries == ("en",)

    @property
    def is_mixed(self) -> bool:
        return self.code == MIXED

    @property
    def by_characters(self) -> bool:
        """True when some of it is written without spaces (Chinese, Japanese): score characters."""
        return any(p in CHARACTER_LANGUAGES for p in self.primaries)

    @property
    def whisper_code(self) -> str | None:
        """The language code Whisper is told: the one spoken, or for a mixed meeting the language the
        turns are in (the first that is not English); None when Whisper should detect it."""
        others = [p for p in self.primaries if p != "en"]
        if not self.is_mixed:
            return self.primaries[0]
        return others[0] if len(others) == 1 else None

    def admits(self, other: SpokenLanguage) -> bool:
        """True if a meeting in ``other`` may belong to a workspace in this language."""
        return set(other.primaries) <= set(self.primaries)

    def __str__(self) -> str:
        return f"{MIXED} ({', '.join(self.languages)})" if self.is_mixed else self.code


ENGLISH = SpokenLanguage("en", ("en",))


def parse_language(code: object, languages: object = ()) -> SpokenLanguage:
    """The language ``code`` names, with ``languages`` for ``mixed``; ValueError with the reason."""
    if languages is None:
        languages = ()
    if not isinstance(languages, (list, tuple)):
        raise ValueError(f"languages must be a list of language tags, got {languages!r}")
    if code == MIXED:
        tags = tuple(_checked_tag(tag) for tag in languages)
        if len({t.split("-")[0].lower() for t in tags}) < 2:
            raise ValueError(f"{MIXED!r} needs two or more different languages listed (e.g. zh, en), "
                             f"got {', '.join(tags) or 'none'}")
        return SpokenLanguage(MIXED, tags)
    tag = _checked_tag(code)
    if languages and tuple(languages) != (tag,):
        raise ValueError(f"languages {', '.join(map(str, languages))} given with language {tag}; "
                         f"a list of languages goes with {MIXED!r}")
    return ENGLISH if tag == "en" else SpokenLanguage(tag, (tag,))
