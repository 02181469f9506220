"""The checks every rewrite of a turn must pass before a corrector may keep it.

A rewrite is compared with the original turn word by word (difflib alignment of normalised
words). It is rejected when

- it drops more than ``max_drop_fraction`` of the turn's words (``drops-words``), counting a
  vocabulary edit as the words it replaced ("p ninety nine" -> "P99" drops nothing);
- any changed region is not a replacement of recognised words by vocabulary entries that sound
  or look like them (``changes-outside-vocabulary``): insertions, deletions and rewordings of
  ordinary words all fail.

This is what keeps a corrector from the silent summarisation the OSynth paper (Appendix V)
observed, where an LLM rewrite deleted about a quarter of the words of noisy ASR turns.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from speechkit.core.options import StageOptions, bounded
from speechkit.stages.correct.spoken import Entry, normalize_word, possessive, score_matrix


@dataclass(frozen=True)
class GuardOptions(StageOptions):
    """Thresholds of the guards.

    ``max_drop_fraction``: largest share of a turn's words a rewrite may drop (after counting
    vocabulary edits as the words they replaced).
    ``min_similarity``: how close (:func:`~speechkit.stages.correct.spoken.score_matrix`) the replaced
    words must be to the vocabulary entries that replace them.
    ``max_extra_words``: how many more words than the entries' longest spoken forms a replaced
    region may span.
    """

    max_drop_fraction: float = bounded(0.10, ge=0.0, le=1.0)
    min_similarity: float = bounded(0.6, ge=0.0, le=1.0)
    max_extra_words: int = bounded(2, ge=0, le=100)


@dataclass(frozen=True)
class Region:
    """One changed region of an aligned rewrite: old words ``i1:i2`` became new words ``j1:j2``."""

    i1: int
    i2: int
    j1: int
    j2: int
    entries: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """The guards' answer for one rewrite.

    ``ok``: the rewrite may be kept. ``reason``/``detail``: why not. ``regions``: the changed
    regions (vocabulary edits when ``ok``), used to carry word times over.
    """

    ok: bool
    reason: str = ""
    detail: str = ""
    regions: tuple[Region, ...] = field(default_factory=tuple)


def _as_entries(tokens: list[str], lookup: dict[tuple[str, ...], Entry]) -> list[Entry] | None:
    """Split ``tokens`` into a sequence of whole vocabulary entries, or None if impossible."""
    longest = max((len(k) for k in lookup), default=0)
    best: list[list[Entry] | None] = [None] * (len(tokens) + 1)
    best[0] = []
    for end in range(1, len(tokens) + 1):
        for size in range(1, min(longest, end) + 1):
            entry = lookup.get(tuple(tokens[end - size:end]))
            if entry is not None and best[end - size] is not None:
                best[end] = [*best[end - size], entry]
                break
    return best[-1]


def unguarded(old: list[str], new: list[str]) -> Verdict:
    """Every rewrite passes: each changed region of ``new`` against ``old`` kept (the paper's
    correction, whose only guard is on a batch answer's length)."""
    matcher = difflib.SequenceMatcher(a=[normalize_word(w) for w in old], b=[normalize_word(w) for w in new],
                                      autojunk=False)
    return Verdict(True, regions=tuple(Region(i1, i2, j1, j2) for op, i1, i2, j1, j2 in matcher.get_opcodes()
                                       if op != "equal"))


def check_rewrite(old: list[str], new: list[str], entries: tuple[Entry, ...],
                  options: GuardOptions = GuardOptions()) -> Verdict:
    """Check that ``new`` (a turn's rewritten words) differs from ``old`` only by vocabulary edits."""
    a = [normalize_word(w) for w in old]
    b = [normalize_word(w) for w in new]
    lookup = {e.tokens: e for e in entries if e.tokens}
    regions: list[Region] = []
    problems: list[str] = []
    kept = 0
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            kept += i2 - i1
            continue
        stems = [possessive(t)[0] for t in b[j1:j2]]
        same_ending = i2 > i1 and j2 > j1 and possessive(a[i2 - 1])[1] == possessive(b[j2 - 1])[1]
        used = _as_entries(stems, lookup) if same_ending else None
        span = tuple(possessive(t)[0] for t in a[i1:i2] if t)
        if used and span and len(span) <= sum(e.max_words for e in used) + options.max_extra_words:
            joined = Entry.of(" ".join(e.canonical for e in used), "term") if len(used) > 1 else used[0]
            if score_matrix([span], [joined])[0, 0] >= options.min_similarity:
                kept += i2 - i1
                regions.append(Region(i1, i2, j1, j2, tuple(e.canonical for e in used)))
                continue
        kept += min(i2 - i1, j2 - j1)
        problems.append(f"{' '.join(old[i1:i2]) or '∅'!r} -> {' '.join(new[j1:j2]) or '∅'!r}")
    if a and (len(a) - kept) / len(a) > options.max_drop_fraction:
        return Verdict(False, "drops-words",
                       f"keeps {kept} of {len(a)} words ({1 - kept / len(a):.0%} dropped)")
    if problems:
        return Verdict(False, "changes-outside-vocabulary", "; ".join(problems))
    return Verdict(True, regions=tuple(regions))
