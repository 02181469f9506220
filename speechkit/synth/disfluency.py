"""Spoken disfluencies added to a turn: fillers (um, uh), repeated words, and restarts and
repairs ("the mapping is, the mapping is mostly done", "we should, I mean, we should").

Every inserted word is a disfluency piece (:meth:`speechkit.synth.language.Language.filler`):
said and in the verbatim reference, absent from the canonical form. Workspace terms are never
repeated. The fillers and repair markers are the language's (嗯 / 那个, 我是说 in Chinese).
"""
from __future__ import annotations

import numpy as np

from speechkit.synth.spoken import Piece
from speechkit.synth.state import Persona


def _restart(pieces: list[Piece], rng: np.random.Generator, language) -> list[Piece]:
    """Repeat a stretch of one to three plain one-word pieces once (never a term or a misspoken
    number), sometimes after a repair marker."""
    starts = [i for i in range(1, len(pieces) - 2)
              if all(p.term is None and p.canonical and len(p.words) == 1 for p in pieces[i:i + 3])]
    if not starts:
        return pieces
    i = starts[int(rng.integers(len(starts)))]
    n = int(rng.integers(1, 4))
    again = [e for p in pieces[i:i + n] for e in language.echo(p)]
    markers = language.repair_markers
    marker = language.marker(markers[int(rng.integers(len(markers)))]) if rng.random() < 0.3 else []
    return pieces[:i + n] + marker + again + pieces[i + n:]


def disfluent(pieces: list[Piece], person: Persona, rng: np.random.Generator, language) -> list[Piece]:
    """``pieces`` with ``language``'s fillers and word repetitions at the person's rates, and a
    restart in a share of the turns (``restart_rate``) of six words or more."""
    if len(pieces) < 4:
        return pieces
    out: list[Piece] = []
    for i, piece in enumerate(pieces):
        if i > 0 and piece.term is None and language.pause_before(out[-1]) and rng.random() < person.filler_rate:
            out.append(language.filler(language.fillers[0] if rng.random() < 0.5 else language.fillers[1]))
        if piece.term is None and len(piece.words) == 1 and rng.random() < person.repeat_rate:
            out.extend(language.echo(piece))
        out.append(piece)
    if len(pieces) >= 6 and rng.random() < person.restart_rate:
        out = _restart(out, rng, language)
    return out
