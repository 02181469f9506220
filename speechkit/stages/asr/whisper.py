"""faster-whisper (CTranslate2 Whisper) recognition with prompt and hot-word biasing.

Models are resolved through :mod:`speechkit.registry` (``tiny.en``, ``base``, ``whisper-small``
... or a folder of CTranslate2 files) and loaded once per process. With ``batch_size > 1`` the
speech regions are cut into clips of at most 30 s (:func:`plan_clips`), the clips are packed
end to end into windows of at most 30 s (:func:`pack_clips`: the encoder runs once per window,
not once per clip) and the windows are decoded in batches by ``BatchedInferencePipeline``; with
``batch_size == 1`` ``WhisperModel.transcribe`` decodes the clips one after another (and may
condition on its previous text).

Loop and hallucination control runs on both paths, with and without biasing: every decoding
window is checked for repeated words and n-grams, over-compressible text and words outside the
speech regions, and a flagged window is decoded again without the prompt and hot words, then
with temperature fallback (seeded); see :class:`WhisperOptions`. What it did is counted in
``WhisperRecognizer.last_stats`` (a :class:`~speechkit.stages.asr.DecodeStats`), which the ASR
stage keeps with its result (run.json ``asr``, the report). With ``Biasing.verify_hotwords`` (L2)
each window is decoded with and without the hot words and keeps the biased decoding only where it
holds more of them.

Biasing: ``Biasing.hotwords`` go to faster-whisper's ``hotwords`` and ``Biasing.prompt`` to
``initial_prompt``. Both end up in the decoder prompt after ``<|startofprev|>``, which Whisper
limits to 223 tokens, so they are budgeted together with the model's tokenizer: hot words are
kept in their given (priority) order while they fit, the prompt keeps its last words in the rest,
and what is dropped is logged. In faster-whisper 1.2.1 both decoding paths pass the hot words and
the prompt to ``get_prompt``; the batched path encodes ``initial_prompt`` without the leading
space the sequential path adds, so the prompt is passed with that space to make both paths see
the same tokens.
"""
from __future__ import annotations

import logging
import zlib
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from speechkit import registry
from speechkit.devices import default_compute_type, resolve_device
from speechkit.stages.asr import DecodeStats
from speechkit.stages.asr.biasing import AsrOptions, Biasing
from speechkit.transcript import Segment, Word

log = logging.getLogger(__name__)

from speechkit.stages.audio import SAMPLE_RATE

#: Whisper's limit on the tokens after <|startofprev|> (n_text_ctx // 2 - 1).
MAX_PROMPT_TOKENS = 223


@lru_cache(maxsize=None)
def load_model(path: str, device: str = "cpu", compute_type: str = "int8", cpu_threads: int = 0) -> Any:
    """A faster_whisper.WhisperModel for a resolved model folder, cached for the process."""
    from faster_whisper import WhisperModel
    kind, _, index = device.partition(":")
    log.info("loading Whisper model %s on %s (%s)", path, device, compute_type)
    return WhisperModel(path, device=kind, device_index=int(index or 0), compute_type=compute_type,
                        cpu_threads=cpu_threads)


@dataclass(frozen=True)
class WhisperOptions(AsrOptions):
    """Options of the faster-whisper backend.

    ``model``: registry name (``tiny.en``, ``base``, ``whisper-large-v3`` ...) or a folder of
    CTranslate2 files. ``compute_type``: CTranslate2 type (None: float16 on a GPU, int8 on a
    CPU). ``batch_size``: windows decoded at once (1 = sequential decoding). ``beam_size``.
    ``language`` (None detects it). ``condition_on_previous_text``: sequential path only; off
    by default because it copies earlier text on repetitive speech (when on, faster-whisper adds
    up to 223 tokens of earlier text after the hot words). ``prompt_token_budget``: tokens for
    hot words + prompt, at most 223. ``max_clip_s``: longest clip decoded at once, at most 30.
    ``cpu_threads``: 0 = CTranslate2's default. ``progress``: a tqdm bar on stderr.
    ``block_s``: see :class:`~speechkit.stages.asr.biasing.AsrOptions`; keep it at least 30 s
    times ``batch_size`` so that batches fill.

    Reproducibility: ``seed`` seeds CTranslate2's sampling (``ctranslate2.set_random_seed``).
    CTranslate2 seeds a decoding thread's generator once, when that thread first samples, so a
    seed set later does not reset it: every decoding at a temperature above 0 therefore runs on
    a copy of the model loaded for that :meth:`WhisperRecognizer.transcribe` call, seeded before
    its first draw. The same audio, options and machine thus give the same words whatever was
    decoded before in the process (a rerun that takes some meetings from the cache included).

    Loop and hallucination control (every path; see :meth:`WhisperRecognizer.transcribe`): a
    decoding window is flagged when an n-gram of 1 to ``loop_max_ngram`` words follows itself
    at least ``loop_repeats`` times in a row covering at least ``loop_min_words`` words, when
    its text compresses more than ``compression_ratio_threshold`` (zlib, Whisper's measure),
    when at least ``outside_speech_words`` of its words (0: never) lie wholly outside the speech
    regions widened by ``speech_pad_s`` seconds, or (``log_prob_threshold`` not None) when its
    mean token log-probability is below that. A flagged window is decoded again without the
    prompt and hot words at ``temperatures[0]`` (when it had them, or when it has words outside
    speech: that window is then decoded on its speech regions only, gaps left out), then at each
    further temperature of ``temperatures`` in turn (sampling, seeded); one still flagged after
    that keeps its unbiased decoding at ``temperatures[0]`` (its first decoding when there is
    none) with the repeats collapsed and the words outside speech dropped. Both paths decode
    first at ``temperatures[0]``; this schedule replaces faster-whisper's own fallback in the
    sequential path.
    """

    model: str = "tiny.en"
    compute_type: str | None = None
    batch_size: int = 8
    beam_size: int = 5
    language: str | None = "en"
    condition_on_previous_text: bool = False
    prompt_token_budget: int = MAX_PROMPT_TOKENS
    max_clip_s: float = 30.0
    cpu_threads: int = 0
    progress: bool = False
    seed: int = 0
    temperatures: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    compression_ratio_threshold: float = 2.4
    loop_repeats: int = 3
    loop_max_ngram: int = 6
    loop_min_words: int = 4
    outside_speech_words: int = 3
    speech_pad_s: float = 0.3
    log_prob_threshold: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.prompt_token_budget <= MAX_PROMPT_TOKENS:
            raise ValueError(f"prompt_token_budget must be in 1..{MAX_PROMPT_TOKENS}")
        if not 0 < self.max_clip_s <= 30.0:
            raise ValueError("max_clip_s must be in (0, 30]")
        if self.batch_size < 1 or self.beam_size < 1:
            raise ValueError("batch_size and beam_size must be at least 1")
        if not 0 <= self.seed < 2**63:
            raise ValueError("seed must be in 0..2^63-1")
        if not self.temperatures or any(not 0.0 <= t <= 2.0 for t in self.temperatures) \
                or list(self.temperatures) != sorted(self.temperatures):
            raise ValueError("temperatures must be a non-empty increasing list of values in [0, 2]")
        if self.loop_repeats < 2 or self.loop_max_ngram < 1 or self.loop_min_words < 1:
            raise ValueError("loop_repeats must be at least 2, loop_max_ngram and loop_min_words at least 1")
        if self.outside_speech_words < 0 or self.speech_pad_s < 0:
            raise ValueError("outside_speech_words and speech_pad_s must be at least 0")


class WhisperRecognizer:
    """faster-whisper recognizer; see the module docstring for batching and biasing.

    Built from :class:`WhisperOptions` (or keyword overrides of its defaults) and a ``device``
    (``auto``/``cpu``/``cuda[:N]``).
    """

    Options = WhisperOptions

    def __init__(self, options: WhisperOptions | None = None, device: str = "auto", **overrides: Any) -> None:
        self.options = (options or WhisperOptions()).with_overrides(**overrides)
        self.device = resolve_device(device)
        self.compute_type = self.options.compute_type or default_compute_type(self.device)
        self.model = load_model(str(registry.resolve(self.options.model)), self.device, self.compute_type,
                                self.options.cpu_threads)
        #: what the loop control did in the last :meth:`transcribe` call
        self.last_stats = DecodeStats()
        self._sampler: Any = None  # the sampling copy of the model, for one transcribe call

    def transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                   biasing: Biasing | None = None) -> list[Segment]:
        """Words with times and confidences for 16 kHz mono ``audio``; ``speaker`` is ``""``.

        ``speech`` limits decoding to those regions (seconds); ``None`` lets faster-whisper's
        Silero VAD find them; an empty list means there is nothing to decode. The regions are
        cut into clips of at most ``max_clip_s`` (:func:`plan_clips`); the batched path packs
        them into windows (:func:`pack_clips`), the sequential path decodes clip after clip.
        Every window (a clip, on the sequential path) then goes through the loop and
        hallucination control described in :class:`WhisperOptions`; what it did is in
        :attr:`last_stats`.
        """
        audio = np.asarray(audio, dtype=np.float32)
        if audio.ndim != 1:
            raise ValueError(f"expected mono audio (1-D), got shape {audio.shape}")
        self.last_stats = DecodeStats()
        try:
            return self._transcribe(audio, speech, biasing)
        finally:
            self._sampler = None

    def _transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None,
                    biasing: Biasing | None) -> list[Segment]:
        if not len(audio) or speech == []:
            return []
        if speech is None:
            speech = detect_speech(audio)
        speech = sorted(speech)
        clips = plan_clips(audio, speech, self.options.max_clip_s)
        if not clips:
            return []
        prompt, hotwords = self.fit_biasing(biasing)
        biased = {"initial_prompt": " " + prompt if prompt else None, "hotwords": hotwords}
        windows = self._first_pass(audio, clips, biased)
        if biasing is not None and biasing.verify_hotwords and hotwords:
            plain = self._first_pass(audio, clips, _UNBIASED)
            windows = self._verified(windows, plain, hotwords.split(", "), speech)
            biased = _UNBIASED  # every window now holds a decoding that needs no biasing re-decode
        return self._guard(audio, windows, speech, biased)

    def _first_pass(self, audio: np.ndarray, clips: list[tuple[float, float]],
                    biased: dict[str, str | None]) -> list[_Window]:
        """The clips decoded at ``temperatures[0]``: sequentially, or packed into batched windows."""
        if self.options.batch_size == 1:
            return self._decode_clips(audio, clips, self.options.temperatures[0], biased,
                                      self.options.condition_on_previous_text)
        return self._decode_batched(audio, clips, biased)

    def _verified(self, biased: list[_Window], plain: list[_Window], hotwords: list[str],
                  speech: list[tuple[float, float]]) -> list[_Window]:
        """Per window, the biased decoding where it holds more occurrences of some hot word than
        the unbiased one and is not flagged, else the unbiased one (:attr:`Biasing.verify_hotwords`)."""
        terms = [t for t in (_tokens([Word(w) for w in h.split()]) for h in hotwords) if t]
        out = []
        for b, p in zip(biased, plain):
            bt, pt = (_tokens([w for s in x.segments for w in s.words]) for x in (b, p))
            gains = any(_count(bt, term) > _count(pt, term) for term in terms)
            keep = gains and not self.flags(b, speech)
            out.append(b if keep else p)
            if keep:
                self.last_stats.biased_kept += 1
            else:
                self.last_stats.biased_dropped += 1
        return out

    def _common(self, biased: dict[str, str | None]) -> dict[str, Any]:
        """faster-whisper arguments every decoding call shares (``biased``: prompt and hot words)."""
        return dict(language=self.options.language, beam_size=self.options.beam_size, word_timestamps=True,
                    vad_filter=False, log_progress=self.options.progress,
                    compression_ratio_threshold=self.options.compression_ratio_threshold, **biased)

    def _model(self, temperature: float | tuple[float, ...]) -> Any:
        """The model to decode at ``temperature``: the shared one for temperature 0 (beam search,
        no random draw), else this call's sampling copy (see "Reproducibility" in
        :class:`WhisperOptions`), loaded and seeded on first use."""
        if max(temperature if isinstance(temperature, tuple) else (temperature,)) <= 0:
            return self.model
        if self._sampler is None:
            import ctranslate2
            from faster_whisper import WhisperModel
            ctranslate2.set_random_seed(self.options.seed)
            kind, _, index = self.device.partition(":")
            self._sampler = WhisperModel(str(registry.resolve(self.options.model)), device=kind,
                                         device_index=int(index or 0), compute_type=self.compute_type,
                                         cpu_threads=self.options.cpu_threads)
        return self._sampler

    def _decode_batched(self, audio: np.ndarray, clips: list[tuple[float, float]],
                        biased: dict[str, str | None]) -> list[_Window]:
        """The clips packed into windows and decoded in batches by ``BatchedInferencePipeline``."""
        from faster_whisper import BatchedInferencePipeline
        packing = pack_clips(clips, self.options.max_clip_s)
        joined, spans, pieces = _joined(audio, clips, packing)
        decoded, _ = BatchedInferencePipeline(self._model(self.options.temperatures[0])).transcribe(
            joined, batch_size=self.options.batch_size, clip_timestamps=spans, temperature=self.options.temperatures[0],
            **self._common(biased))
        windows = [_Window([clips[i] for i in window]) for window in packing]
        starts = [w["start"] for w in spans]
        for s in decoded:
            window = windows[max(0, bisect_right(starts, (s.start + s.end) / 2) - 1)]
            window.segments += _segments(s, pieces)
            window.log_probs.append(float(s.avg_logprob))
        return windows

    def _decode_clips(self, audio: np.ndarray, clips: list[tuple[float, float]], temperature: float | tuple[float, ...],
                      biased: dict[str, str | None], condition: bool = False) -> list[_Window]:
        """``clips`` (in time order) decoded one after another by ``WhisperModel.transcribe``; one
        window per clip."""
        decoded, _ = self._model(temperature).transcribe(audio, clip_timestamps=[t for clip in clips for t in clip],
                                           temperature=temperature, condition_on_previous_text=condition,
                                           **self._common(biased))
        windows = [_Window([clip]) for clip in clips]
        starts = [clip[0] for clip in clips]
        for s in decoded:
            window = windows[max(0, bisect_right(starts, (s.start + s.end) / 2) - 1)]
            window.segments += _segments(s, None)
            window.log_probs.append(float(s.avg_logprob))
        return windows

    def flags(self, window: _Window, speech: list[tuple[float, float]]) -> list[str]:
        """Why a decoded window looks like a loop or a hallucination (empty: it does not)."""
        o = self.options
        words = [w for s in window.segments for w in s.words]
        reasons = []
        if repeated_run(_tokens(words), o.loop_max_ngram, o.loop_repeats, o.loop_min_words):
            reasons.append("repeat")
        if compression_ratio(" ".join(s.text for s in window.segments)) > o.compression_ratio_threshold:
            reasons.append("compression")
        if o.outside_speech_words and sum(outside_speech(words, speech, o.speech_pad_s)) >= o.outside_speech_words:
            reasons.append("outside_speech")
        if o.log_prob_threshold is not None and window.log_probs and \
                sum(window.log_probs) / len(window.log_probs) < o.log_prob_threshold:
            reasons.append("log_prob")
        return reasons

    def _guard(self, audio: np.ndarray, windows: list[_Window], speech: list[tuple[float, float]],
               biased: dict[str, str | None]) -> list[Segment]:
        """Flagged windows decoded again (unbiased, then each sampling temperature), the rest kept;
        counted in :attr:`last_stats`."""
        stats = self.last_stats
        stats.windows += len(windows)
        bad = {}
        for i, window in enumerate(windows):
            reasons = self.flags(window, speech)
            if reasons:
                bad[i] = reasons
                stats.flag(reasons, window.clips)
        kept = dict.fromkeys(bad)  # what a window that stays flagged keeps: its unbiased first-temperature decoding
        # A window with words outside speech is decoded again on its speech regions only; one
        # decoded without biasing and not for that starts again at the first sampling temperature.
        spans = {i: _speech_only(windows[i].clips, speech) if "outside_speech" in reasons else windows[i].clips
                 for i, reasons in bad.items()}
        first = {i: 0 if any(biased.values()) or "outside_speech" in reasons else 1 for i, reasons in bad.items()}
        for attempt, temperature in enumerate(self.options.temperatures):
            todo = [i for i in bad if first[i] <= attempt]
            if not bad:
                break
            if not todo:
                continue
            log.info("decoding %d flagged window(s) again without prompt and hot words at temperature %.1f (%s)",
                     len(todo), temperature, ", ".join(sorted({r for i in todo for r in bad[i]})))
            owner = sorted((span, i) for i in todo for span in spans[i])
            again = self._decode_clips(audio, [span for span, _ in owner], temperature, _UNBIASED)
            redone = {i: _Window(list(windows[i].clips)) for i in todo}
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
                    spans[i] = _speech_only(windows[i].clips, speech)
        for i in bad:
            stats.cleaned += 1
            windows[i] = _cleaned(kept[i] or windows[i], speech, self.options)
        segments = [seg for window in windows for seg in window.segments]
        return sorted(segments, key=lambda seg: (seg.start, seg.end))

    def fit_biasing(self, biasing: Biasing | None) -> tuple[str | None, str | None]:
        """(prompt, hotwords) cut to fit ``prompt_token_budget`` tokens together.

        Hot words keep their order (first = most important) and are dropped from the end;
        the prompt then keeps as many of its last words as the remaining budget allows.
        """
        if not biasing:
            return None, None
        budget = self.options.prompt_token_budget
        kept: list[str] = []
        terms = [t.strip() for t in biasing.hotwords if t.strip()]
        for i, term in enumerate(terms):
            if self.count_tokens(", ".join(kept + [term])) > budget:
                log.warning("hot words over the %d-token prompt budget; dropped %d: %s",
                            budget, len(terms) - i, ", ".join(terms[i:]))
                break
            kept.append(term)
        hotwords = ", ".join(kept) or None
        budget -= self.count_tokens(hotwords) if hotwords else 0
        words = (biasing.prompt or "").split()
        lo, hi = 0, len(words)  # smallest start index whose tail fits the budget
        while lo < hi:
            mid = (lo + hi) // 2
            if self.count_tokens(" ".join(words[mid:])) <= budget:
                hi = mid
            else:
                lo = mid + 1
        if lo:
            log.warning("prompt over the remaining %d-token budget; dropped its first %d of %d words",
                        budget, lo, len(words))
        prompt = " ".join(words[lo:]) or None
        return prompt, hotwords

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as faster-whisper encodes it into the prompt (with a leading space)."""
        return len(self.model.hf_tokenizer.encode(" " + text.strip(), add_special_tokens=False).ids)


@dataclass
class _Window:
    """One decoding window: the recording spans (s) of its clips, its segments (recording times)
    and the mean token log-probabilities faster-whisper gave its segments."""

    clips: list[tuple[float, float]]
    segments: list[Segment] = field(default_factory=list)
    log_probs: list[float] = field(default_factory=list)


def detect_speech(audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> list[tuple[float, float]]:
    """Speech regions (s) by the Silero VAD that ships with faster-whisper, with its defaults."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps
    return [(c["start"] / sample_rate, c["end"] / sample_rate)
            for c in get_speech_timestamps(audio, VadOptions(), sampling_rate=sample_rate)]


_UNBIASED: dict[str, str | None] = {"initial_prompt": None, "hotwords": None}


def _count(tokens: list[str], term: list[str]) -> int:
    """Occurrences of the token sequence ``term`` in ``tokens``."""
    n = len(term)
    return sum(tokens[i:i + n] == term for i in range(len(tokens) - n + 1))


def _tokens(words: list[Word]) -> list[str]:
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


def outside_speech(words: list[Word], speech: list[tuple[float, float]], pad_s: float) -> list[bool]:
    """For each word, whether it lies wholly outside every speech region widened by ``pad_s``."""
    starts = [s - pad_s for s, _ in speech]
    out = []
    for w in words:
        k = bisect_right(starts, w.end) - 1  # the last region starting before the word ends
        out.append(k < 0 or speech[k][1] + pad_s < w.start)
    return out


def _speech_only(clips: list[tuple[float, float]], speech: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The speech regions inside ``clips`` (each clipped to its clip), in time order."""
    return sorted((max(s, a), min(e, b)) for a, b in clips for s, e in speech if min(e, b) > max(s, a))


def _cleaned(window: _Window, speech: list[tuple[float, float]], options: WhisperOptions) -> _Window:
    """``window`` without the words outside speech and with every repeated run collapsed to
    its first copy (the last resort for a window every re-decode left flagged)."""
    tagged = [(k, w) for k, seg in enumerate(window.segments)
              for w, outside in zip(seg.words, outside_speech(list(seg.words), speech, options.speech_pad_s))
              if not (options.outside_speech_words and outside)]
    while True:
        run = repeated_run(_tokens([w for _, w in tagged]), options.loop_max_ngram, options.loop_repeats,
                           options.loop_min_words)
        if run is None:
            break
        start, n, copies = run
        del tagged[start + n:start + n * copies]
    segments = [Segment.from_words([w for k, w in tagged if k == i], speaker="")
                for i in range(len(window.segments)) if any(k == i for k, _ in tagged)]
    return _Window(window.clips, segments, window.log_probs)


def plan_clips(audio: np.ndarray, speech: list[tuple[float, float]], max_clip_s: float = 30.0,
               sample_rate: int = SAMPLE_RATE) -> list[tuple[float, float]]:
    """Pack speech regions into clips of at most ``max_clip_s`` seconds for batched decoding.

    Neighbouring regions share a clip while the clip spans at most ``max_clip_s``; a longer
    region is cut at its quietest 100 ms in the last third of each window.
    """
    duration = len(audio) / sample_rate
    pieces: list[tuple[float, float]] = []
    for start, end in sorted((max(0.0, s), min(duration, e)) for s, e in speech):
        while end - start > max_clip_s:
            cut = _quietest(audio, start + max_clip_s * 2 / 3, start + max_clip_s, sample_rate)
            pieces.append((start, cut))
            start = cut
        if end > start:
            pieces.append((start, end))
    clips: list[tuple[float, float]] = []
    for start, end in pieces:
        if clips and end - clips[-1][0] <= max_clip_s:
            clips[-1] = (clips[-1][0], end)
        else:
            clips.append((start, end))
    return clips


def _quietest(audio: np.ndarray, lo: float, hi: float, sample_rate: int) -> float:
    """Start time (s) of the 100 ms frame with the least energy in [lo, hi)."""
    frame = sample_rate // 10
    span = audio[int(lo * sample_rate):int(hi * sample_rate)]
    n = len(span) // frame
    if n == 0:
        return hi
    energy = (span[:n * frame].reshape(n, frame) ** 2).sum(axis=1)
    return lo + int(np.argmin(energy)) * frame / sample_rate


def pack_clips(clips: list[tuple[float, float]], max_clip_s: float = 30.0) -> list[list[int]]:
    """Clip indices grouped into windows whose clips last at most ``max_clip_s`` seconds together.

    First fit in time order: each clip joins the first window with room for it, so the short
    clips left between long ones share windows. Each window is decoded as one 30 s input.
    """
    windows: list[list[int]] = []
    room: list[float] = []
    for i, (start, end) in enumerate(clips):
        fits = next((w for w, left in enumerate(room) if end - start <= left + 1e-6), None)
        if fits is None:
            windows.append([i])
            room.append(max_clip_s - (end - start))
        else:
            windows[fits].append(i)
            room[fits] -= end - start
    return windows


#: (start in the joined audio, end there, start in the recording), all in seconds
_Piece = tuple[float, float, float]


def compression_ratio(text: str) -> float:
    """Whisper's repetition measure: UTF-8 length over zlib-compressed length."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def _joined(audio: np.ndarray, clips: list[tuple[float, float]], windows: list[list[int]],
            sample_rate: int = SAMPLE_RATE) -> tuple[np.ndarray, list[dict], list[_Piece]]:
    """The clips' samples laid end to end window by window, the windows' spans in that joined
    audio (faster-whisper ``clip_timestamps``) and where each clip went."""
    parts, spans, pieces = [], [], []
    at = 0
    for window in windows:
        first = at
        for i in window:
            a, b = round(clips[i][0] * sample_rate), round(clips[i][1] * sample_rate)
            parts.append(audio[a:b])
            pieces.append((at / sample_rate, (at + b - a) / sample_rate, a / sample_rate))
            at += b - a
        spans.append({"start": first / sample_rate, "end": at / sample_rate})
    return np.concatenate(parts), spans, pieces  # pieces in joined-audio order


def _segments(decoded: Any, pieces: list[_Piece] | None) -> list[Segment]:
    """Speechkit segments from a faster-whisper one (none if it holds no word).

    Punctuation-only "words" (Whisper's filler on noise) are dropped. With ``pieces`` (decoding
    of joined clips) every word goes back to the clip holding its midpoint, its times kept
    within that clip (the batched word alignment runs over whole seconds and can overshoot a
    clip), and the words of each clip form their own segment.
    """
    words = [w for w in decoded.words or () if any(ch.isalnum() for ch in w.word)]
    if not pieces:
        return [Segment.from_words([Word(w.word.strip(), float(w.start), float(w.end), float(w.probability))
                                    for w in words], speaker="")] if words else []
    starts = [p[0] for p in pieces]
    runs: list[tuple[int, list[Word]]] = []
    for w in words:
        k = max(0, bisect_right(starts, (w.start + w.end) / 2) - 1)
        lo, hi, origin = pieces[k]
        shift = origin - lo
        word = Word(w.word.strip(), float(min(max(w.start, lo), hi) + shift),
                    float(min(max(w.end, lo), hi) + shift), float(w.probability))
        if runs and runs[-1][0] == k:
            runs[-1][1].append(word)
        else:
            runs.append((k, [word]))
    return [Segment.from_words(run, speaker="") for _, run in runs]
