"""faster-whisper (CTranslate2 Whisper) recognition with prompt and hot-word biasing.

Models are resolved through :mod:`speechkit.registry` (``tiny.en``, ``base``, ``whisper-small``
... or a folder of CTranslate2 files) and loaded once per process (:func:`load_model`; every
``WhisperModel`` speechkit makes, the benchmark's included, comes from :func:`new_model`). With
``batch_size > 1`` the speech regions are cut into clips of at most 30 s
(:func:`~speechkit.stages.asr.clips.plan_clips`; the pauses between regions are left out), the
clips are packed end to end into windows
of at most 30 s (:func:`~speechkit.stages.asr.clips.pack_clips`: the encoder runs once per
window, not once per clip) and the windows are decoded in batches by
``BatchedInferencePipeline``; with ``batch_size == 1`` ``WhisperModel.transcribe`` decodes the
clips one after another (and may condition on its previous text).

Loop and hallucination control (:mod:`speechkit.stages.asr.loop_control`) runs on both paths,
with and without biasing: every decoding window is checked for repeated words and n-grams,
over-compressible text and words outside the speech regions, and a flagged window is decoded
again without the prompt and hot words, then with temperature fallback (seeded); see
:class:`WhisperOptions`. What it did is counted in the :class:`~speechkit.stages.asr.DecodeStats`
that :meth:`WhisperRecognizer.transcribe` returns with the segments (a
:class:`~speechkit.stages.asr.Recognition`), which the ASR stage keeps with its result (run.json
``asr``, the report). With ``Biasing.verify_hotwords`` (L2) the windows are decoded without
biasing first; a window whose decoding holds a hot word or words written like one
(``hotword_similarity``) is decoded again with the hot words and keeps that decoding only where
it holds more of them, so only the windows where a hot word may be said cost a second decoding.

Biasing: ``Biasing.hotwords`` go to faster-whisper's ``hotwords`` and ``Biasing.prompt`` to
``initial_prompt``. Both end up in the decoder prompt after ``<|startofprev|>``, which Whisper
limits to 223 tokens, so they are budgeted together with the model's tokenizer
(:mod:`speechkit.stages.asr.prompt_budget`): hot words are kept in their given (priority) order
while they fit, the prompt keeps its last words in the rest, and what is dropped is logged. In
faster-whisper 1.2.1 both decoding paths pass the hot words and the prompt to ``get_prompt``;
the batched path encodes ``initial_prompt`` without the leading space the sequential path adds,
so the prompt is passed with that space to make both paths see the same tokens.

The ``language`` option must be a language code Whisper has (:func:`whisper_languages`: checked
when the options are built, so a recipe or ``--set`` naming another is refused before any work),
and one the model knows (an English-only model knows ``en`` alone: checked when it loads):
faster-whisper would otherwise warn and decode in English.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Literal

import numpy as np

from speechkit import registry
from speechkit.core.audio import SAMPLE_RATE, span_blocks
from speechkit.core.options import OptionError, bounded
from speechkit.devices import default_compute_type, resolve_device
from speechkit.errors import SpeechkitError, brief
from speechkit.stages.asr import Recognition
from speechkit.stages.asr.biasing import AsrOptions, Biasing
from speechkit.stages.asr.clips import Piece, join_clips, pack_clips, plan_clips, span_index
from speechkit.stages.asr.loop_control import LoopControl, Window
from speechkit.stages.asr.prompt_budget import MAX_PROMPT_TOKENS, fit_biasing
from speechkit.transcript import Segment, Word

log = logging.getLogger(__name__)


def new_model(path: str, device: str = "cpu", compute_type: str = "int8", cpu_threads: int = 0) -> Any:
    """A new faster_whisper.WhisperModel for a resolved model folder on ``device`` (``cpu``,
    ``cuda[:N]``); the one place speechkit constructs one."""
    from faster_whisper import WhisperModel
    kind, _, index = device.partition(":")
    log.info("loading Whisper model %s on %s (%s)", path, device, compute_type)
    return WhisperModel(path, device=kind, device_index=int(index or 0), compute_type=compute_type,
                        cpu_threads=cpu_threads)


@lru_cache(maxsize=1)
def whisper_languages() -> tuple[str, ...]:
    """The language codes of Whisper's multilingual models (faster-whisper's table)."""
    from faster_whisper.tokenizer import _LANGUAGE_CODES
    return tuple(_LANGUAGE_CODES)


@cache
def load_model(path: str, device: str = "cpu", compute_type: str = "int8", cpu_threads: int = 0) -> Any:
    """The process's :func:`new_model` for these arguments (loaded on first use)."""
    return new_model(path, device, compute_type, cpu_threads)


#: CTranslate2's compute types.
ComputeType = Literal["int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16", "float16", "bfloat16",
                      "float32"]


@dataclass(frozen=True)
class WhisperOptions(AsrOptions):
    """Options of the faster-whisper backend.

    ``model``: registry name (``tiny.en``, ``base``, ``whisper-large-v3`` ...) or a folder of
    CTranslate2 files. ``compute_type``: CTranslate2 type (None: float16 on a GPU, int8 on a
    CPU). ``batch_size``: windows decoded at once (1 = sequential decoding). ``beam_size``.
    ``language`` (None detects it): a Whisper language code the model knows.
    ``condition_on_previous_text``: sequential path only; off
    by default because it copies earlier text on repetitive speech (when on, faster-whisper adds
    up to 223 tokens of earlier text after the hot words). ``prompt_token_budget``: tokens for
    hot words + prompt, at most 223. ``max_clip_s``: longest clip decoded at once, at most 30.
    ``cpu_threads``: 0 = CTranslate2's default. ``progress``: a tqdm bar on stderr.
    ``hotword_similarity``: with ``Biasing.verify_hotwords`` (L2), a window is decoded a second
    time, with the hot words, only when its unbiased decoding holds a run of words whose letters
    are at least this alike to a hot word's (difflib's ratio; 0: every window, 1: only the hot
    word itself).
    ``missed_speech_s``: a stretch of the speech regions at least this long that no decoded word
    covers is decoded again on its own (0: never; see ``LoopControl.fill_missed``).
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
    compute_type: ComputeType | None = None
    batch_size: int = bounded(8, ge=1, le=256)
    beam_size: int = bounded(5, ge=1, le=64)
    language: str | None = "en"
    condition_on_previous_text: bool = False
    prompt_token_budget: int = bounded(MAX_PROMPT_TOKENS, ge=1, le=MAX_PROMPT_TOKENS)
    max_clip_s: float = bounded(30.0, gt=0.0, le=30.0)
    cpu_threads: int = bounded(0, ge=0, le=1024)
    progress: bool = False
    seed: int = bounded(0, ge=0, lt=2**63)
    temperatures: tuple[float, ...] = bounded((0.0, 0.2, 0.4, 0.6, 0.8, 1.0), ge=0.0, le=2.0)
    compression_ratio_threshold: float = bounded(2.4, gt=0.0, le=100.0)
    loop_repeats: int = bounded(3, ge=2, le=1000)
    loop_max_ngram: int = bounded(6, ge=1, le=1000)
    loop_min_words: int = bounded(4, ge=1, le=10_000)
    outside_speech_words: int = bounded(3, ge=0, le=10_000)
    speech_pad_s: float = bounded(0.3, ge=0.0, le=60.0)
    log_prob_threshold: float | None = bounded(None, ge=-100.0, le=0.0)
    hotword_similarity: float = bounded(0.6, ge=0.0, le=1.0)
    missed_speech_s: float = bounded(2.0, ge=0.0, le=30.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.temperatures or list(self.temperatures) != sorted(self.temperatures):
            raise ValueError("temperatures must be a non-empty increasing list of values in [0, 2]")
        if self.language is not None and self.language not in whisper_languages():
            raise OptionError("language", f"{brief(self.language)} is not a language code of Whisper "
                                          "(such as en, de, ja; null detects the language)")


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
        known = self.model.supported_languages
        if self.options.language is not None and self.options.language not in known:
            raise SpeechkitError(f"stages.asr.language: {self.options.language!r} is not a language of the model "
                                 f"{self.options.model} (it knows {', '.join(known[:8])}"
                                 f"{' ...' if len(known) > 8 else ''})")
        self._sampler: Any = None  # the sampling copy of the model, for one transcribe call

    def transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                   biasing: Biasing | None = None) -> Recognition:
        """Words with times and confidences for 16 kHz mono ``audio`` (``speaker`` is ``""``), with
        what the loop control did (:attr:`Recognition.stats`).

        ``speech`` limits decoding to those regions (seconds); ``None`` lets faster-whisper's
        Silero VAD find them; an empty list means there is nothing to decode. The regions are
        cut into clips of at most ``max_clip_s`` (:func:`~speechkit.stages.asr.clips.plan_clips`;
        the sequential path lets neighbours share a clip);
        the batched path packs them into windows (:func:`~speechkit.stages.asr.clips.pack_clips`),
        the sequential path decodes clip after clip. Every window (a clip, on the sequential path)
        then goes through the loop and hallucination control described in :class:`WhisperOptions`,
        and speech no window decoded a word of is decoded again on its own (``missed_speech_s``).
        """
        audio = np.asarray(audio, dtype=np.float32)
        if audio.ndim != 1:
            raise ValueError(f"expected mono audio (1-D), got shape {audio.shape}")
        control = LoopControl(self.options)
        try:
            return Recognition(self._transcribe(audio, speech, biasing, control), control.stats)
        finally:
            self._sampler = None

    def _transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None,
                    biasing: Biasing | None, control: LoopControl) -> list[Segment]:
        if not len(audio) or speech == []:
            return []
        if speech is None:
            speech = detect_speech(audio)
        speech = sorted(speech)
        # batched: each region its own clip, packed into windows without the pauses; sequential:
        # every clip costs a 30 s encoder pass, so neighbours share one, pause included
        clips = plan_clips(audio, speech, self.options.max_clip_s, join_neighbours=self.options.batch_size == 1)
        if not clips:
            return []
        prompt, hotwords = self.fit_biasing(biasing)
        biased = {"initial_prompt": " " + prompt if prompt else None, "hotwords": hotwords}
        if biasing is not None and biasing.verify_hotwords and hotwords:
            windows = self._first_pass(audio, clips, _UNBIASED)
            terms = hotwords.split(", ")
            check = control.to_verify(windows, terms, self.options.hotword_similarity)
            trial = self._decode_windows(audio, [windows[i].clips for i in check], biased)
            is_biased = control.verified(windows, dict(zip(check, trial)), terms, speech)
        else:
            windows = self._first_pass(audio, clips, biased)
            is_biased = [any(biased.values())] * len(windows)
        def redecode(spans: list[tuple[float, float]], temperature: float) -> list[Window]:
            return self._decode_clips(audio, spans, temperature, _UNBIASED)
        return control.fill_missed(control.guard(windows, speech, is_biased, redecode), speech, redecode)

    def _first_pass(self, audio: np.ndarray, clips: list[tuple[float, float]],
                    biased: dict[str, str | None]) -> list[Window]:
        """The clips decoded at ``temperatures[0]``: sequentially, or packed into batched windows."""
        if self.options.batch_size == 1:
            return self._decode_windows(audio, [[clip] for clip in clips], biased)
        return self._decode_windows(audio, [[clips[i] for i in window]
                                            for window in pack_clips(clips, self.options.max_clip_s)], biased)

    def _decode_windows(self, audio: np.ndarray, windows: list[list[tuple[float, float]]],
                        biased: dict[str, str | None]) -> list[Window]:
        """Windows (each given by its clips) decoded at ``temperatures[0]``: one clip after another
        (``batch_size == 1``: one clip a window), or each window's clips joined end to end and the
        windows decoded in batches by ``BatchedInferencePipeline``."""
        if not windows:
            return []
        if self.options.batch_size == 1:
            return self._decode_clips(audio, [clip for window in windows for clip in window],
                                      self.options.temperatures[0], biased, self.options.condition_on_previous_text)
        from faster_whisper import BatchedInferencePipeline
        joined, spans, pieces = join_clips(audio, windows)
        decoded, _ = BatchedInferencePipeline(self._model(self.options.temperatures[0])).transcribe(
            joined, batch_size=self.options.batch_size, clip_timestamps=spans, temperature=self.options.temperatures[0],
            **self._common(biased))
        return _into_windows(decoded, [Window(list(window)) for window in windows], [w["start"] for w in spans], pieces)

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
            ctranslate2.set_random_seed(self.options.seed)
            self._sampler = new_model(str(registry.resolve(self.options.model)), self.device, self.compute_type,
                                      self.options.cpu_threads)
        return self._sampler

    def _decode_clips(self, audio: np.ndarray, clips: list[tuple[float, float]], temperature: float | tuple[float, ...],
                      biased: dict[str, str | None], condition: bool = False) -> list[Window]:
        """``clips`` (in time order) decoded one after another by ``WhisperModel.transcribe``; one
        window per clip.

        faster-whisper computes the features of all the audio it is given (numpy's FFT of five
        minutes takes about 2 s), so unless the decoder conditions on the text before
        (``condition``), the clips go in groups reaching at most ``max_clip_s``, each given only
        its own stretch of ``audio`` (:func:`~speechkit.core.audio.span_blocks`: on the 10 ms
        grid, so its frames are the recording's): a few clips re-decoded in a long recording cost
        their own seconds. The stretch is at least ``max_clip_s`` long, because Whisper sets its
        log-mel floor from the loudest frame it is given: a short quiet clip given alone is heard
        over its own noise floor, and tiny.en then wrote more errors on the bench references."""
        if condition:
            return self._decode_clips_at(audio, clips, temperature, biased, condition)
        windows = []
        max_s = self.options.max_clip_s
        for start, end, group in span_blocks(clips, max_s, min_s=max_s):
            part = audio[round(start * SAMPLE_RATE):round(end * SAMPLE_RATE)]
            decoded = self._decode_clips_at(part, [(a - start, b - start) for a, b in group], temperature, biased)
            windows += [Window([clip], [seg.shifted(start) for seg in window.segments], window.log_probs)
                        for clip, window in zip(group, decoded)]
        return windows

    def _decode_clips_at(self, audio: np.ndarray, clips: list[tuple[float, float]],
                         temperature: float | tuple[float, ...], biased: dict[str, str | None],
                         condition: bool = False) -> list[Window]:
        """``clips`` (seconds in ``audio``, in time order) decoded by one ``WhisperModel.transcribe``
        call; one window per clip."""
        decoded, _ = self._model(temperature).transcribe(audio, clip_timestamps=[t for clip in clips for t in clip],
                                           temperature=temperature, condition_on_previous_text=condition,
                                           **self._common(biased))
        return _into_windows(decoded, [Window([clip]) for clip in clips], [clip[0] for clip in clips], None)

    def fit_biasing(self, biasing: Biasing | None) -> tuple[str | None, str | None]:
        """(prompt, hotwords) cut to fit ``prompt_token_budget`` of this model's tokens together
        (:func:`~speechkit.stages.asr.prompt_budget.fit_biasing`)."""
        return fit_biasing(biasing, self.options.prompt_token_budget, self.count_tokens)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as faster-whisper encodes it into the prompt (with a leading space)."""
        return len(self.model.hf_tokenizer.encode(" " + text.strip(), add_special_tokens=False).ids)


def detect_speech(audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> list[tuple[float, float]]:
    """Speech regions (s) by the Silero VAD that ships with faster-whisper, with its defaults."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps
    return [(c["start"] / sample_rate, c["end"] / sample_rate)
            for c in get_speech_timestamps(audio, VadOptions(), sampling_rate=sample_rate)]


_UNBIASED: dict[str, str | None] = {"initial_prompt": None, "hotwords": None}


def _into_windows(decoded: Iterable[Any], windows: list[Window], starts: list[float],
                  pieces: list[Piece] | None) -> list[Window]:
    """``windows`` (starting at ``starts`` in the decoded audio) with faster-whisper's ``decoded``
    segments: each goes to the window holding its midpoint, with its mean token log-probability."""
    for s in decoded:
        window = windows[span_index(starts, (s.start + s.end) / 2)]
        window.segments += _segments(s, pieces)
        window.log_probs.append(float(s.avg_logprob))
    return windows


def spoken_words(decoded: Any) -> list[Word]:
    """The words of a faster-whisper segment, times as decoded (``speaker`` not set).

    Whisper writes a word that continues the previous one without a leading space (``" $45"``
    ``",000"``, ``" pacs"`` ``".002"``, ``" v2"`` ``".4"``): such a piece is joined to the word
    before it (its end and the lower probability), as the segment's text has it, instead of
    becoming a word of its own. Punctuation-only "words" (Whisper's filler on noise) are dropped.
    """
    joined: list[list[Any]] = []
    for w in decoded.words or ():
        if joined and not w.word.startswith(" "):
            last = joined[-1]
            last[0], last[2], last[3] = last[0] + w.word, w.end, min(last[3], w.probability)
        else:
            joined.append([w.word, w.start, w.end, w.probability])
    return [Word(text.strip(), float(start), float(end), float(p)) for text, start, end, p in joined
            if any(ch.isalnum() for ch in text)]


def _segments(decoded: Any, pieces: list[Piece] | None) -> list[Segment]:
    """Speechkit segments from a faster-whisper one (none if it holds no word; its words by
    :func:`spoken_words`).

    With ``pieces`` (decoding of joined clips) every word goes back to the clip holding its
    midpoint, its times kept within that clip (the batched word alignment runs over whole
    seconds and can overshoot a clip), and the words of each clip form their own segment.
    """
    words = spoken_words(decoded)
    if not pieces:
        return [Segment.from_words(words, speaker="")] if words else []
    starts = [p[0] for p in pieces]
    runs: list[tuple[int, list[Word]]] = []
    for w in words:
        k = span_index(starts, (w.start + w.end) / 2)
        lo, hi, origin = pieces[k]
        shift = origin - lo
        word = Word(w.text, min(max(w.start, lo), hi) + shift, min(max(w.end, lo), hi) + shift, w.confidence)
        if runs and runs[-1][0] == k:
            runs[-1][1].append(word)
        else:
            runs.append((k, [word]))
    return [Segment.from_words(run, speaker="") for _, run in runs]
