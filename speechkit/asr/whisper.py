"""faster-whisper (CTranslate2 Whisper) recognition with prompt and hot-word biasing.

Models are resolved through :mod:`speechkit.registry` (``tiny.en``, ``base``, ``whisper-small``
... or a folder of CTranslate2 files) and loaded once per process. With ``batch_size > 1`` the
speech regions are cut into clips of at most 30 s (:func:`plan_clips`), the clips are packed
end to end into windows of at most 30 s (:func:`pack_clips`: the encoder runs once per window,
not once per clip) and the windows are decoded in batches by ``BatchedInferencePipeline``; with
``batch_size == 1`` ``WhisperModel.transcribe`` decodes the regions one window after another
(and may condition on its previous text).

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
from functools import lru_cache
from typing import Any

import numpy as np

from speechkit import registry
from speechkit.asr import Biasing
from speechkit.devices import default_compute_type, resolve_device
from speechkit.transcript import Segment, Word

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000
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


class WhisperRecognizer:
    """faster-whisper recognizer; see the module docstring for batching and biasing.

    Options: ``model`` (registry name such as ``tiny.en``/``base``/``whisper-large-v3`` or a
    folder), ``device`` (``auto``/``cpu``/``cuda[:N]``), ``compute_type`` (CTranslate2 type;
    default float16 on GPU, int8 on CPU), ``batch_size`` (1 = sequential decoding),
    ``beam_size``, ``language`` (None detects it), ``condition_on_previous_text`` (sequential
    path only; off by default because it copies earlier text on repetitive speech; when on,
    faster-whisper adds up to 223 tokens of earlier text after the hot words, which leaves
    little room for decoding if the hot words are long),
    ``prompt_token_budget`` (tokens for hot words + prompt, at most 223), ``max_clip_s``
    (longest clip the batched path decodes, at most 30), ``cpu_threads`` (0 = CTranslate2's
    default), ``progress`` (tqdm bar on stderr) and ``compression_ratio_threshold`` (a batched
    window whose text compresses more than this, Whisper's sign of a repetition loop, is decoded
    again sequentially with temperature fallback).
    """

    def __init__(self, model: str = "tiny.en", device: str = "auto", compute_type: str | None = None,
                 batch_size: int = 8, beam_size: int = 5, language: str | None = "en",
                 condition_on_previous_text: bool = False,
                 prompt_token_budget: int = MAX_PROMPT_TOKENS, max_clip_s: float = 30.0,
                 cpu_threads: int = 0, progress: bool = False,
                 compression_ratio_threshold: float = 2.4) -> None:
        if not 0 < prompt_token_budget <= MAX_PROMPT_TOKENS:
            raise ValueError(f"prompt_token_budget must be in 1..{MAX_PROMPT_TOKENS}")
        if not 0 < max_clip_s <= 30.0:
            raise ValueError("max_clip_s must be in (0, 30]")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.device = resolve_device(device)
        self.compute_type = compute_type or default_compute_type(self.device)
        self.model = load_model(str(registry.resolve(model)), self.device, self.compute_type, cpu_threads)
        self.batch_size = batch_size
        self.beam_size = beam_size
        self.language = language
        self.condition_on_previous_text = condition_on_previous_text
        self.prompt_token_budget = prompt_token_budget
        self.max_clip_s = max_clip_s
        self.progress = progress
        self.compression_ratio_threshold = compression_ratio_threshold

    def transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                   biasing: Biasing | None = None) -> list[Segment]:
        """Words with times and confidences for 16 kHz mono ``audio``; ``speaker`` is ``""``.

        ``speech`` limits decoding to those regions (seconds); ``None`` lets faster-whisper's
        own VAD find them; an empty list means there is nothing to decode.
        """
        audio = np.asarray(audio, dtype=np.float32)
        if audio.ndim != 1:
            raise ValueError(f"expected mono audio (1-D), got shape {audio.shape}")
        if not len(audio) or speech == []:
            return []
        prompt, hotwords = self.fit_biasing(biasing)
        common = dict(language=self.language, beam_size=self.beam_size, word_timestamps=True,
                      initial_prompt=" " + prompt if prompt else None, hotwords=hotwords,
                      vad_filter=speech is None, log_progress=self.progress)
        if self.batch_size == 1:
            decoded, _ = self.model.transcribe(
                audio, clip_timestamps="0" if speech is None else [t for r in sorted(speech) for t in r],
                condition_on_previous_text=self.condition_on_previous_text, **common)
            return [seg for s in decoded for seg in _segments(s, None)]
        from faster_whisper import BatchedInferencePipeline
        pipeline = BatchedInferencePipeline(self.model)
        if speech is None:
            decoded, _ = pipeline.transcribe(audio, batch_size=self.batch_size, **common)
            return [seg for s in decoded for seg in _segments(s, None)]
        clips = plan_clips(audio, speech, self.max_clip_s)
        if not clips:
            return []
        packing = pack_clips(clips, self.max_clip_s)
        joined, windows, pieces = _joined(audio, clips, packing)
        decoded, _ = pipeline.transcribe(joined, batch_size=self.batch_size, clip_timestamps=windows, **common)
        decoded = list(decoded)
        starts = [w["start"] for w in windows]
        window_of = [max(0, bisect_right(starts, (s.start + s.end) / 2) - 1) for s in decoded]
        looping = {k for s, k in zip(decoded, window_of) if compression_ratio(s.text) > self.compression_ratio_threshold}
        segments = [seg for s, k in zip(decoded, window_of) if k not in looping for seg in _segments(s, pieces)]
        if looping:
            # The batched pipeline decodes at one temperature: a window that fell into a repetition
            # loop is decoded again sequentially, with Whisper's temperature fallback.
            regions = sorted(clips[i] for k in looping for i in packing[k])
            log.info("re-decoding %d window(s) that looped (compression ratio > %.1f)",
                     len(looping), self.compression_ratio_threshold)
            again, _ = self.model.transcribe(audio, clip_timestamps=[t for r in regions for t in r],
                                             condition_on_previous_text=False, **common)
            segments += [seg for s in again for seg in _segments(s, None)]
        return sorted(segments, key=lambda seg: (seg.start, seg.end))

    def fit_biasing(self, biasing: Biasing | None) -> tuple[str | None, str | None]:
        """(prompt, hotwords) cut to fit ``prompt_token_budget`` tokens together.

        Hot words keep their order (first = most important) and are dropped from the end;
        the prompt then keeps as many of its last words as the remaining budget allows.
        """
        if not biasing:
            return None, None
        budget = self.prompt_token_budget
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
