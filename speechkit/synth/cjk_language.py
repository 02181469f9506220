"""What Chinese and Japanese workspaces share: text without spaces, read aloud word by word.

A CJK text becomes pieces run by run: a run of CJK characters is cut into the language's reading
units (:meth:`CJKLanguage.readings`: each character with its pinyin in Chinese, each word with its
kana in Japanese), one piece per unit, said by the language's voice; a run of Latin letters or
digits is one English word; punctuation goes with the piece before it (its canonical form, and
its TTS text as ``,`` ``.`` ``?`` ``!`` so the engine pauses). Templates are written without
spaces: ``{slot}`` and ``[filler]`` are found wherever they are. A ``mixed`` workspace
(``mixed=True``) takes the language's English-jargon projects and says its numbers, all but
dates, in English (:meth:`speechkit.synth.language.Language.number_term`).
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace

from speechkit import cjk
from speechkit.synth import pools
from speechkit.synth.language import Language, Pools
from speechkit.synth.spoken import Piece
from speechkit.synth.state import Persona, Term, number_term

_PART = re.compile(r"(\{\w+\}|\[[^\]\s]+\])")
_RUN = re.compile(rf"(?P<cjk>[{cjk._CJK_RANGES}]+)|(?P<latin>[A-Za-z0-9][\w.'\-]*)|(?P<punct>[^\s\w])")
#: What a punctuation mark becomes in the TTS text (the engine's pause or intonation).
_SAY_PUNCT = {"，": ",", "、": ",", "；": ",", "：": ",", "。": ".", "？": "?", "！": "!", ",": ",", ".": ".",
              "?": "?", "!": "!", ":": ",", ";": ","}


class CJKLanguage(Language):
    """Chinese or Japanese: the pools, families and number words of a subclass, the text rules
    here. ``mixed``: the workspace's jargon, tickers and (non-date) numbers are English."""

    #: The pools' projects for a mixed workspace (English jargon inside the language's phrases).
    mixed_projects: tuple[dict, ...] = ()
    base_pools: Pools

    def __init__(self, mixed: bool = False) -> None:
        self.mixed = mixed
        self.code = "mixed" if mixed else self.base
        self.languages = (self.base, "en") if mixed else (self.base,)
        self.pools = replace(self.base_pools, projects=self.mixed_projects) if mixed else self.base_pools

    def readings(self, run: str) -> list[tuple[str, str]]:
        """A run of CJK characters as ``(written unit, what the TTS says for it)`` pairs."""
        raise NotImplementedError

    @property
    def families(self) -> dict:
        from speechkit.synth.families import LANGUAGE_FAMILIES

        return LANGUAGE_FAMILIES[self.base]

    @property
    def voices(self) -> tuple:
        from speechkit.synth.voices import LANGUAGE_VOICES

        return LANGUAGE_VOICES[self.base]

    def listing(self, names: list[str]) -> str:
        return "、".join(names)

    # --- text -----------------------------------------------------------------------------------

    def _append(self, out: list[Piece], text: str) -> list[Piece]:
        """``out`` with the pieces of ``text`` added (punctuation joins the piece before it)."""
        for m in _RUN.finditer(text):
            if m.group("cjk"):
                out += [Piece(canonical=unit, words=(unit,), say=(say,)) for unit, say in self.readings(m.group("cjk"))]
            elif m.group("latin"):
                word = m.group("latin")
                out.append(Piece(canonical=word, words=(word,), say=(word,)))
            elif out:
                mark = m.group("punct")
                last = out[-1]
                said = last.say[:-1] + (last.say[-1] + _SAY_PUNCT.get(mark, ""),)
                out[-1] = replace(last, canonical=None if last.canonical is None else last.canonical + mark, say=said)
        return out

    def plain(self, text: str) -> list[Piece]:
        return self._append([], text)

    def filler(self, word: str) -> Piece:
        pieces = self.plain(word)
        says = [s for p in pieces for s in p.say]
        return Piece(canonical=None, words=tuple(w for p in pieces for w in p.words),
                     say=(*says[:-1], says[-1].rstrip(",.?!") + ","))

    def echo(self, piece: Piece) -> list[Piece]:
        return [Piece(canonical=None, words=piece.words, say=tuple(s.rstrip(",.?!") for s in piece.say))]

    def marker(self, text: str) -> list[Piece]:
        return [self.filler(text)]

    def render(self, template: str, slots: dict[str, object]) -> list[Piece]:
        out: list[Piece] = []
        for part in _PART.split(template):
            if not part:
                continue
            if part.startswith("[") and part.endswith("]"):
                out.append(self.filler(part[1:-1]))
            elif part.startswith("{") and part.endswith("}"):
                value = slots[part[1:-1]]
                if isinstance(value, Term):
                    out.append(self.term_piece(value, ""))
                elif isinstance(value, Persona):
                    self._append(out, value.first_name)
                else:
                    out += self.render(str(value), slots)
            else:
                self._append(out, part)
        return out

    def capital(self, text: str) -> str:
        return text

    def gerund(self, task: str) -> str:
        return task

    # --- numbers ----------------------------------------------------------------------------------

    def number_term(self, measure: str, value: int | dt.date, topic: str, unit: str) -> Term:
        if self.mixed and measure != "date":
            return number_term(measure, value, topic, unit)
        return self.native_number(measure, value, topic, unit)

    def native_number(self, measure: str, value: int | dt.date, topic: str, unit: str) -> Term:
        """A number term said in the language (:meth:`number_term` without the English of mixed)."""
        raise NotImplementedError

    def value_of(self, term: Term) -> int | dt.date:
        if term.measure == "date":
            month, day = re.fullmatch(r"(\d+)月(\d+)日", term.canonical).groups()
            return dt.date(2026, int(month), int(day))
        return super().value_of(term)

    # --- gold notes -------------------------------------------------------------------------------

    def without_article(self, text: str) -> str:
        return text if not self.mixed else super().without_article(text)

    def contains(self, text: str, term: str) -> bool:
        return cjk.contains(text, term)


def project(term, name: str, topic: str, jargon: tuple[str, ...], numbers: tuple, tasks: tuple, statuses: tuple,
            decisions: tuple) -> dict:
    """A project template (:data:`speechkit.synth.pools.PROJECTS`) whose name and jargon are written
    in the language; ``term`` makes a jargon entry ``(canonical, verbatim, tts)`` of a written form."""
    return {"name": term(name), "topic": topic, "jargon": tuple(term(j) for j in jargon), "numbers": numbers,
            "tasks": tasks, "statuses": statuses, "decisions": decisions}


def mixed_projects(topics: tuple, numbers: tuple, tasks: tuple, statuses: tuple, decisions: tuple) -> tuple[dict, ...]:
    """The projects of a mixed workspace: the English names and jargon of
    :data:`speechkit.synth.pools.MIXED_PROJECTS` with the language's topics, numbers and phrases."""
    return tuple({"name": p["name"], "topic": t, "jargon": p["jargon"], "numbers": n, "tasks": k, "statuses": s,
                  "decisions": d}
                 for p, t, n, k, s, d in zip(pools.MIXED_PROJECTS, topics, numbers, tasks, statuses, decisions))


def term_of(units: list[tuple[str, str]], canonical: str, measure: str, topic: str, unit: str) -> Term:
    """A number term from its spoken units ``(written, said)`` (one verbatim word each)."""
    return Term(canonical, " ".join(w for w, _ in units), " ".join(s for _, s in units), "number", topic, unit,
                measure)
