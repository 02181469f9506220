"""Loop and hallucination control of a recognizer that decodes audio window by window.

A recognizer hands its decoded windows (:class:`Window`) and a way to decode spans again to a
:class:`LoopControl`. Every window is checked (:meth:`LoopControl.flags`) for repeated words
and n-grams (:func:`repeated_run`), over-compressible text (:func:`compression_ratio`), words
outside the speech regions (:func:`outside_speech`) and a low mean token log-probability; a
flagged window is decoded again without biasing at the first temperature, then at each further
(sampling) temperature, and one still flagged after that is cleaned (:func:`cleaned`). With
hot-word verification (:meth:`LoopControl.verified`) the windows are decoded without biasing
first; a window whose decoding holds a hot word or something written like one
(:meth:`LoopControl.to_verify`) is decoded again with the hot words and keeps that decoding only
where it holds more of them. Last, speech the decoding skipped (:func:`missed_speech`: a stretch
of the speech regions with no decoded word) is decoded again on its own
(:meth:`LoopControl.fill_missed`). What the control did is counted in
its :class:`DecodeStats`, which the recognizer returns with its segments.

Nothing here knows the decoder: the thresholds come from the recognizer's options
(:class:`LoopOptions`: ``WhisperOptions`` documents them), the decoding from a callable.
"""
from __future__ import annotations

import logging
import zlib
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Protocol

from speechkit.transcript import Segment, Word

log = logging.getLogger(__name__)

Span = tuple[float, float]
#: Seconds a decoded word counts as covering on each side (its aligned times are approximate).
WORD_REACH_S = 0.1


@dataclass
class DecodeStats:
    """What a recognizer's loop and hallucination control did (see ``WhisperOptions``).

    ``windows``: decoding windows checked. ``flagged``: windows flagged, by reason (``repeat``,
    ``compression``, ``outside_speech``, ``log_prob``; a window may have several).
    ``flagged_windows``: windows flagged at all. ``redecoded_unbiased``: windows decoded again
    at the first temperature without the prompt and hot words (a window with words outside speech:
    on its speech regions only). ``redecoded_fallback``: windows decoded again at a sampling
    temperature (one per window and temperature tried). ``cleaned``: windows still flagged after
    every re-decode, kept with repeats collapsed and words outside speech dropped.
    With :attr:`Biasing.verify_hotwords`: ``redecoded_verify``: windows whose unbiased decoding
    holds a hot word or something written like one, decoded again with the hot words (the others
    keep their unbiased decoding); of those, ``biased_kept`` / ``biased_dropped``: the biased
    decoding kept (it holds more hot words) / dropped for the unbiased one. ``flagged_spans``: the
    spans (s) of the flagged windows' clips, which the L2 context never learns words from.
    ``missed_spans``: stretches of speech the decoding skipped, decoded again on their own
    (:meth:`LoopControl.fill_missed`); ``missed_words``: the words found there.
    """

    windows: int = 0
    flagged: dict[str, int] = field(default_factory=dict)
    flagged_windows: int = 0
    redecoded_unbiased: int = 0
    redecoded_fallback: int = 0
    cleaned: int = 0
    redecoded_verify: int = 0
    biased_kept: int = 0
    biased_dropped: int = 0
    missed_spans: int = 0
    missed_words: int = 0
    flagged_spans: list[tuple[float, float]] = field(default_factory=list)

    COUNTS = ("windows", "flagged_windows", "redecoded_unbiased", "redecoded_fallback", "cleaned",
              "redecoded_verify", "biased_kept", "biased_dropped", "missed_spans", "missed_words")

    def flag(self, reasons: list[str], spans: list[tuple[float, float]]) -> None:
        """Count one flagged window with its ``reasons`` and clip ``spans``."""
        self.flagged_windows += 1
        for reason in reasons:
            self.flagged[reason] = self.flagged.get(reason, 0) + 1
        self.flagged_spans += spans

    def add(self, other: DecodeStats, offset: float = 0.0) -> None:
        """Add ``other``'s counts, its spans moved by ``offset`` seconds."""
        for name in self.COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, n in other.flagged.items():
            self.flagged[reason] = self.flagged.get(reason, 0) + n
        self.flagged_spans += [(s + offset, e + offset) for s, e in other.flagged_spans]

    @property
    def redecodes(self) -> int:
        """Re-decodes of any kind."""
        return self.redecoded_unbiased + self.redecoded_fallback

    def as_dict(self) -> dict[str, Any]:
        return {**{name: getattr(self, name) for name in self.COUNTS}, "flagged": dict(sorted(self.flagged.items())),
                "flagged_spans": [[round(s, 3), round(e, 3)] for s, e in self.flagged_spans]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DecodeStats:
        return cls(**{name: int(data.get(name, 0)) for name in cls.COUNTS}, flagged=dict(data.get("flagged", {})),
                   flagged_spans=[(float(s), float(e)) for s, e in data.get("flagged_spans", [])])


class LoopOptions(Protocol):
    """The thresholds the loop control reads from a recognizer's options (``WhisperOptions``)."""

    temperatures: tuple[float, ...]
    compression_ratio_threshold: float
    loop_repeats: int
    loop_max_ngram: int
    loop_min_words: int
    outside_speech_words: int
    speech_pad_s: float
    log_prob_threshold: float | None
    missed_speech_s: float


@dataclass
class Window:
    """One decoding window: the recording spans (s) of its clips, its segments (recording times)
    and the mean token log-probabilities the decoder gave its segments."""

    clips: list[Span]
    segments: list[Segment] = field(default_factory=list)
    log_probs: list[float] = field(default_factory=list)


#: Decodes spans (recording seconds, in time order) without biasing at a temperature: one window each.
Redecode = Callable[[list[Span], float], list[Window]]


class LoopControl:
    """The loop and hallucination control of one ``transcribe`` call; :attr:`stats` counts what it did."""

    def __init__(self, options: LoopOptions) -> None:
        self.options = options
        self.stats = DecodeStats()

    def flags(self, window: Window, speech: list[Span]) -> list[str]:
        """Why a decoded window looks like a loop or a hallucination (empty: it does not)."""
        o = self.options
        words = [w for s in window.segments for w in s.words]
        reasons = []
        if repeated_run(word_tokens(words), o.loop_max_ngram, o.loop_repeats, o.loop_min_words):
            reasons.append("repeat")
        if compression_ratio(" ".join(s.text for s in window.segments)) > o.compression_ratio_threshold:
            reasons.append("compression")
        if o.outside_speech_words and sum(outside_speech(words, speech, o.speech_pad_s)) >= o.outside_speech_words:
            reasons.append("outside_speech")
        if o.log_prob_threshold is not None and window.log_probs and \
                sum(window.log_probs) / len(window.log_probs) < o.log_prob_threshold:
            reasons.append("log_prob")
        return reasons

    def to_verify(self, plain: list[Window], hotwords: list[str], similarity: float) -> list[int]:
        """Indices of the windows whose unbiased decoding holds a hot word, or a run of words written
        like one (letters at least ``similarity`` alike, :func:`written_like`): the only windows
        where decoding with the hot words may add one, so the only ones decoded with them."""
        terms = _terms(hotwords)
        return [i for i, window in enumerate(plain)
                if any(written_like(_tokens(window), term, similarity) for term in terms)]

    def verified(self, plain: list[Window], biased: dict[int, Window], hotwords: list[str],
                 speech: list[Span]) -> list[bool]:
        """Hot-word verification (:attr:`Biasing.verify_hotwords`) of ``plain`` in place: a window
        with a biased decoding in ``biased`` (by index: those of :meth:`to_verify`) takes it where
        it holds more occurrences of some hot word and is not flagged, else keeps its unbiased one.
        Returns, per window, whether it now holds a biased decoding."""
        terms = _terms(hotwords)
        now_biased = [False] * len(plain)
        self.stats.redecoded_verify += len(biased)
        for i, b in biased.items():
            bt, pt = _tokens(b), _tokens(plain[i])
            if any(_count(bt, term) > _count(pt, term) for term in terms) and not self.flags(b, speech):
                self.stats.biased_kept += 1
                plain[i], now_biased[i] = b, True
            else:
                self.stats.biased_dropped += 1
        return now_biased

    def guard(self, windows: list[Window], speech: list[Span], biased: list[bool],
              redecode: Redecode) -> list[Segment]:
        """The segments of ``windows``, flagged ones decoded again by ``redecode`` (unbiased, then at
        each sampling temperature) and cleaned when every re-decode stays flagged; ``biased``: per
        window, whether it was decoded with a prompt or hot words."""
        self.stats.windows += len(windows)
        return self._guarded(windows, speech, biased, redecode)

    def _guarded(self, windows: list[Window], speech: list[Span], biased: list[bool],
                 redecode: Redecode) -> list[Segment]:
        """:meth:`guard` without counting ``windows`` as decoding windows."""
        stats = self.stats
        bad = {}
        for i, window in enumerate(windows):
            reasons = self.flags(window, speech)
            if reasons:
                bad[i] = reasons
                stats.flag(reasons, window.clips)
        kept = dict.fromkeys(bad)  # what a window that stays flagged keeps: its unbiased first-temperature decoding
        # A window with words outside speech is decoded again on its speech regions only; one
        # decoded without biasing and not for that starts again at the first sampling temperature.
        spans = {i: speech_only(windows[i].clips, speech) if "outside_speech" in reasons else windows[i].clips
                 for i, reasons in bad.items()}
        first = {i: 0 if biased[i] or "outside_speech" in reasons else 1 for i, reasons in bad.items()}
        for attempt, temperature in enumerate(self.options.temperatures):
            todo = [i for i in bad if first[i] <= attempt]
            if not bad:
                break
            if not todo:
                continue
            log.info("decoding %d flagged window(s) again without prompt and hot words at temperature %.1f (%s)",
                     len(todo), temperature, ", ".join(sorted({r for i in todo for r in bad[i]})))
            owner = sorted((span, i) for i in todo for span in spans[i])
            again = redecode([span for span, _ in owner], temperature)
            redone = {i: Window(list(windows[i].clips)) for i in todo}
            for (_, i), part in zip(owner, again):
                redone[i].segments += part.segments
                redone[i].log_probs += part.log_probs
            if attempt == 0:
                stats.redecoded_unbiased += len(todo)
                kept.update(redone)
            else:
                stats.redecoded_fallback += len(todo)
            for i, window in redone.items():
                bad[i] = self.flags(window, speech)
                if not bad[i]:
                    windows[i] = window
                    del bad[i]
                elif "outside_speech" in bad[i]:
                    spans[i] = speech_only(windows[i].clips, speech)
        for i in bad:
            stats.cleaned += 1
            windows[i] = cleaned(kept[i] or windows[i], speech, self.options)
        segments = [seg for window in windows for seg in window.segments]
        return sorted(segments, key=lambda seg: (seg.start, seg.end))

    def fill_missed(self, segments: list[Segment], speech: list[Span], redecode: Redecode) -> list[Segment]:
        """``segments`` with the speech they skipped: every stretch of at least ``missed_speech_s``
        of the speech regions that no decoded word covers (:func:`missed_speech`) is decoded again
        on its own, without biasing, through the same control (as in :meth:`guard`, a decoding that
        loops is decoded again at the sampling temperatures, then cleaned), and its words inside
        the stretch are added, unless they repeat the words around the stretch into a loop
        (a word the first decoding timed wrongly, heard twice). Whisper skips quiet or overlapped
        speech in a long window, or the start of a window cut inside a sentence; on its own it
        hears it. Windows :meth:`guard` flagged were decoded again already: their speech is left
        as it is."""
        if not self.options.missed_speech_s:
            return segments
        heard = sorted((w for seg in segments for w in seg.words), key=lambda w: w.start)
        flagged = list(self.stats.flagged_spans)
        gaps = [(s, e) for s, e in missed_speech(heard, speech, self.options.missed_speech_s, WORD_REACH_S)
                if not any(a < e and s < b for a, b in flagged)]
        if not gaps:
            return segments
        log.info("decoding %d stretch(es) of speech without words again (%.1f s)", len(gaps),
                 sum(e - s for s, e in gaps))
        self.stats.missed_spans += len(gaps)
        again = self._guarded(redecode(gaps, self.options.temperatures[0]), speech, [False] * len(gaps), redecode)
        starts = [s for s, _ in gaps]
        per_gap: dict[int, list[Word]] = {}
        for w in (w for seg in again for w in seg.words):
            k = bisect_right(starts, (w.start + w.end) / 2) - 1
            if k >= 0 and (w.start + w.end) / 2 <= gaps[k][1]:
                per_gap.setdefault(k, []).append(w)
        o = self.options

        def loops(run: list[Word]) -> bool:
            return repeated_run(word_tokens(run), o.loop_max_ngram, o.loop_repeats, o.loop_min_words) is not None
        reach = o.loop_max_ngram * o.loop_repeats
        found = []
        for k, words in sorted(per_gap.items()):
            before = [w for w in heard if w.end <= gaps[k][0] + WORD_REACH_S][-reach:]
            after = [w for w in heard if w.start >= gaps[k][1] - WORD_REACH_S][:reach]
            if loops(before + words + after) and not loops(before + after):
                continue
            found.append(Segment.from_words(words, speaker=""))
            self.stats.missed_words += len(words)
        return sorted(segments + found, key=lambda seg: (seg.start, seg.end))


def _terms(hotwords: list[str]) -> list[list[str]]:
    """Each hot word as the tokens :func:`word_tokens` compares."""
    return [t for t in (word_tokens([Word(w) for w in h.split()]) for h in hotwords) if t]


def _tokens(window: Window) -> list[str]:
    """The :func:`word_tokens` of a window's words."""
    return word_tokens([w for s in window.segments for w in s.words])


def written_like(tokens: list[str], term: list[str], similarity: float) -> bool:
    """Whether some run of ``tokens`` (as many as ``term`` has, one fewer or one more), its letters
    joined, is at least ``similarity`` alike to ``term``'s (difflib's ratio: "comfy eye" and
    "ComfyUI" 0.67, "dvt" and "dbt" 0.67); 0 makes every window count."""
    if similarity <= 0:
        return True
    target = "".join(term)
    for n in sorted({max(1, len(term) - 1), len(term), len(term) + 1}):
        for k in range(len(tokens) - n + 1):
            matcher = SequenceMatcher(None, "".join(tokens[k:k + n]), target, autojunk=False)
            if matcher.real_quick_ratio() >= similarity and matcher.quick_ratio() >= similarity \
                    and matcher.ratio() >= similarity:
                return True
    return False


def _count(tokens: list[str], term: list[str]) -> int:
    """Occurrences of the token sequence ``term`` in ``tokens``."""
    n = len(term)
    return sum(tokens[i:i + n] == term for i in range(len(tokens) - n + 1))


def word_tokens(words: list[Word]) -> list[str]:
    """Words compared for repeats: lower case, letters, digits and apostrophes only."""
    return ["".join(ch for ch in w.text.lower() if ch.isalnum() or ch == "'") for w in words]


def repeated_run(tokens: list[str], max_ngram: int = 6, repeats: int = 3,
                 min_words: int = 4) -> tuple[int, int, int] | None:
    """The first run of an n-gram (``n <= max_ngram``) that follows itself at least ``repeats``
    times covering at least ``min_words`` tokens: ``(start, n, copies)``, or None.

    ``"renata renata renata renata"`` is such a run (n=1, 4 copies); so is ``"go with it go with
    it go with it"`` (n=3, 3 copies); ``"no no"`` is not.
    """
    for n in range(1, max_ngram + 1):
        for start in range(len(tokens) - n * repeats + 1):
            gram = tokens[start:start + n]
            copies, at = 1, start + n
            while tokens[at:at + n] == gram:
                copies, at = copies + 1, at + n
            if copies >= repeats and copies * n >= min_words:
                return start, n, copies
    return None


def compression_ratio(text: str) -> float:
    """Whisper's repetition measure: UTF-8 length over zlib-compressed length."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def outside_speech(words: list[Word], speech: list[Span], pad_s: float) -> list[bool]:
    """For each word, whether it lies wholly outside every speech region widened by ``pad_s``."""
    starts = [s - pad_s for s, _ in speech]
    out = []
    for w in words:
        k = bisect_right(starts, w.end) - 1  # the last region starting before the word ends
        out.append(k < 0 or speech[k][1] + pad_s < w.start)
    return out


def missed_speech(words: list[Word], speech: list[Span], min_s: float, pad_s: float) -> list[Span]:
    """The stretches, at least ``min_s`` long, of the ``speech`` regions that no word (widened by
    ``pad_s`` on each side) overlaps, in time order."""
    covered = sorted((w.start - pad_s, w.end + pad_s) for w in words)
    gaps = []
    k = 0
    for start, end in sorted(speech):
        t = start
        while k < len(covered) and covered[k][1] <= t:
            k += 1
        j = k
        while j < len(covered) and covered[j][0] < end:
            if covered[j][0] - t >= min_s:
                gaps.append((t, covered[j][0]))
            t = max(t, covered[j][1])
            j += 1
        if end - t >= min_s:
            gaps.append((t, end))
    return gaps


def speech_only(clips: list[Span], speech: list[Span]) -> list[Span]:
    """The speech regions inside ``clips`` (each clipped to its clip), in time order."""
    return sorted((max(s, a), min(e, b)) for a, b in clips for s, e in speech if min(e, b) > max(s, a))


def cleaned(window: Window, speech: list[Span], options: LoopOptions) -> Window:
    """``window`` without the words outside speech and with every repeated run collapsed to
    its first copy (the last resort for a window every re-decode left flagged)."""
    tagged = [(k, w) for k, seg in enumerate(window.segments)
              for w, outside in zip(seg.words, outside_speech(list(seg.words), speech, options.speech_pad_s))
              if not (options.outside_speech_words and outside)]
    while True:
        run = repeated_run(word_tokens([w for _, w in tagged]), options.loop_max_ngram, options.loop_repeats,
                           options.loop_min_words)
        if run is None:
            break
        start, n, copies = run
        del tagged[start + n:start + n * copies]
    segments = [Segment.from_words([w for k, w in tagged if k == i], speaker="")
                for i in range(len(window.segments)) if any(k == i for k, _ in tagged)]
    return Window(window.clips, segments, window.log_probs)
