"""The cascade: audio -> VAD -> ASR -> diarization -> word attribution -> identification -> correction.

A :class:`Cascade` builds each stage once from a recipe's stage options (model weights load once
per process and are shared by every meeting) and runs them on one recording at a time::

    from speechkit.cascade import Cascade
    from speechkit.recipe import load_recipe

    cascade = Cascade(load_recipe("l1"))
    result = cascade.run("meeting.flac")
    for seg in result.transcript.segments:
        print(seg.speaker_name or seg.speaker, seg.text)

Results of the expensive stages (VAD, ASR, diarization, enrollment embeddings) go through a
:class:`~speechkit.cache.StageCache` when one is given.

Memory does not grow with the recording's length: the audio is streamed, never held whole. The
VAD reads it in ``VAD_CHUNK_S`` chunks (and measures the recording's level on the way); ASR
reads it again block by block, each block a run of speech regions spanning at most ``block_s``
seconds (a single longer region is one block), cut in the pauses between regions; the
diarization reads the audio of ``EMBED_BLOCK_S`` of its windows at a time. Only the window
embeddings (256 floats per 0.75 s) are kept for the clustering, which sees the whole recording.
After each block the freed heap memory is handed back to the system (glibc ``malloc_trim``).
"""
from __future__ import annotations

import ctypes
import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from speechkit.asr import Biasing, make_recognizer
from speechkit.audio import iter_audio_chunks, load_audio
from speechkit.cache import StageCache, digest, file_digest
from speechkit.context import MeetingContext
from speechkit.embeddings import l2_normalize
from speechkit.io.seglst import parse_seglst, to_seglst
from speechkit.recipe import Recipe
from speechkit.transcript import Segment, Transcript
from speechkit.vad import regions_from_probabilities

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000
#: Seconds of audio the VAD reads at a time (a whole number of Silero's 32 ms frames).
VAD_CHUNK_S = 60.0
#: Default longest span of speech (seconds) that ASR decodes at once.
BLOCK_S = 300.0
#: Longest span of windows (seconds) whose speaker embeddings are computed at once.
EMBED_BLOCK_S = 60.0
#: Audio kept around a block's speech (seconds), so that its first and last frames see real signal.
BLOCK_MARGIN_S = 0.5
GRID_S = 0.01  # blocks start on this grid (Resemblyzer's mel hop)
FRAME_S = 0.01  # speech regions shorter than this are not diarized (as in speechkit.diarize)


@dataclass
class CascadeResult:
    """One recording's speaker-attributed transcript and what the system learnt about its voices."""

    transcript: Transcript
    speakers: dict[str, list[float]]  # the name or label each cluster was given -> its centroid
    names: dict[str, str | None]  # diarization label -> given name (None: left unnamed)
    timings: dict[str, float] = field(default_factory=dict)
    correction: dict[str, Any] = field(default_factory=dict)


def _segments_to_json(segments: list[Segment]) -> list[dict]:
    return to_seglst([Transcript("_", segments)])


def _segments_from_json(data: list[dict]) -> list[Segment]:
    import json
    parsed = parse_seglst(json.dumps(data))
    return parsed["_"].segments if parsed else []


class Cascade:
    """The stages of a recipe, built once and applied to recordings."""

    def __init__(self, recipe: Recipe, block_s: float = BLOCK_S) -> None:
        """``block_s``: longest span of speech (s) that ASR decodes at once; keep it at least 30 s
        times the ASR batch size so that batches fill."""
        if block_s < 30.0:
            raise ValueError(f"block_s must be at least 30 s, got {block_s}")
        self.recipe = recipe
        self.block_s = block_s
        self._stages: dict[str, Any] = {}

    # Stages are created on first use, so a cached rerun loads no model it does not need.
    def _stage(self, name: str) -> Any:
        if name not in self._stages:
            self._stages[name] = self._build(name)
        return self._stages[name]

    def _build(self, name: str) -> Any:
        device = self.recipe.device
        options = self.recipe.stage(name) or {}
        if name == "vad":
            from speechkit.vad import make_vad
            return make_vad(device=device, **options)
        if name == "asr":
            backend = options.pop("backend", "whisper")
            return make_recognizer(backend, device=device, **options)
        if name == "embedder":
            from speechkit.embeddings import make_embedder
            diarize = self.recipe.stage("diarize") or {}
            return make_embedder(diarize.get("embedder", "resemblyzer"), device=device,
                                 **diarize.get("embedder_options", {}))
        if name == "diarize":
            from speechkit.diarize import Diarizer
            options.pop("embedder", None)
            options.pop("embedder_options", None)
            return Diarizer(self._stage("embedder"), **options)
        if name == "correct":
            from speechkit.correct import make_corrector
            backend = options.pop("backend", "lexicon")
            return make_corrector(backend, **options)
        raise KeyError(name)

    def run(self, audio_path: str | Path, context: MeetingContext | None = None,
            cache: StageCache | None = None, session_id: str | None = None,
            num_speakers: int | None = None, channel: int | None = None) -> CascadeResult:
        """Run every stage on one recording with the given context (L1 when None)."""
        audio_path = Path(audio_path)
        context = context or MeetingContext(level=1)
        cache = cache or StageCache(None)
        session_id = session_id or audio_path.stem
        timings: dict[str, float] = {}

        audio_key = digest(file_digest(audio_path), channel)
        # The entry holds the regions and the level; the tag keeps entries of the older format
        # (a bare list of regions) from being read back.
        vad_key = digest(audio_key, self.recipe.stage("vad"), "regions+level")
        vad = cache.get_or_compute("vad", vad_key, lambda: self._vad(audio_path, channel, timings))
        speech = [(float(s), float(e)) for s, e in vad["regions"]]

        biasing = context.biasing if context.biasing else None
        asr_key = digest(vad_key, self.recipe.stage("asr"), self.recipe.device,
                         biasing.__dict__ if biasing else None, self.block_s)
        words = _segments_from_json(cache.get_or_compute("asr", asr_key, lambda: _segments_to_json(
            self.recognize(audio_path, speech, biasing, channel, timings))))

        diar_key = digest(vad_key, self.recipe.stage("diarize"), num_speakers)
        diarization = cache.get_or_compute("diarize", diar_key, lambda: self._diarize(
            audio_path, speech, vad["level_dbfs"], num_speakers, channel, timings))
        turns = _segments_from_json(diarization["turns"])
        centroids = {k: np.asarray(v, dtype=np.float32) for k, v in diarization["centroids"].items()}

        from speechkit.attribution import attribute_words, name_segments
        segments = attribute_words(words, turns) if turns else words
        with _timed(timings, "identify"):
            names = self._name_clusters(centroids, context, cache)
        segments = name_segments(segments, names)
        transcript = Transcript(session_id, segments)

        correction: dict[str, Any] = {}
        if self.recipe.stage("correct") is not None and (context.terms or context.names):
            with _timed(timings, "correct"):
                transcript, correction = self._correct(transcript, context)
        speakers = {(names.get(label) or label): vec.tolist() for label, vec in centroids.items()}
        return CascadeResult(transcript, speakers, names, timings, correction)

    def speech_regions(self, audio_path: str | Path, channel: int | None = None,
                       timings: dict[str, float] | None = None) -> list[tuple[float, float]]:
        """The VAD stage: speech regions (seconds) of a recording, streamed in ``VAD_CHUNK_S`` chunks.

        Frame probabilities are computed chunk by chunk (the VAD state restarts at each chunk)
        and turned into regions once, so a region may span chunks. ``timings`` gets the seconds
        spent decoding (``audio``) and in the VAD (``vad``) added.
        """
        return [tuple(r) for r in self._vad(audio_path, channel, {} if timings is None else timings)["regions"]]

    def _vad(self, audio_path: str | Path, channel: int | None, timings: dict[str, float]) -> dict:
        """Speech regions and the recording's level in dBFS (None if silent), in one pass."""
        vad = self._stage("vad")
        probs: list[np.ndarray] = []
        offsets: list[float] = []
        step, samples, energy = 0.0, 0, 0.0
        for chunk in _timed_iter(timings, "audio", iter_audio_chunks(audio_path, VAD_CHUNK_S, SAMPLE_RATE,
                                                                     channel)):
            if len(chunk) >= SAMPLE_RATE // 100:
                with _timed(timings, "vad"):
                    p, step = vad.probabilities(chunk)
                probs.append(np.asarray(p, dtype=np.float32))
                offsets.append(samples / SAMPLE_RATE)
            samples += len(chunk)
            energy += float(np.dot(chunk.astype(np.float64), chunk))
        level = 10 * float(np.log10(energy / samples)) if energy > 0 else None
        if not probs:
            return {"regions": [], "level_dbfs": level}
        duration = samples / SAMPLE_RATE
        frames = _on_grid(probs, offsets, step, duration)
        regions = regions_from_probabilities(frames, step, vad.options, duration)
        return {"regions": [list(r) for r in regions], "level_dbfs": level}

    def recognize(self, audio_path: str | Path, speech: list[tuple[float, float]],
                  biasing: Biasing | None = None, channel: int | None = None,
                  timings: dict[str, float] | None = None) -> list[Segment]:
        """The ASR stage: words of the ``speech`` regions, block by block (see :func:`speech_blocks`).

        ``timings`` gets the seconds spent decoding (``audio``) and recognising (``asr``) added.
        """
        timings = {} if timings is None else timings
        recognizer = self._stage("asr")
        out: list[Segment] = []
        blocks = speech_blocks(speech, self.block_s)
        for (start, _, regions), audio in zip(blocks, _timed_iter(timings, "audio", read_spans(
                audio_path, [(a, b) for a, b, _ in blocks], channel))):
            local = [(s - start, e - start) for s, e in regions]
            with _timed(timings, "asr"):
                segments = recognizer.transcribe(audio, speech=local, biasing=biasing)
            out.extend(_shifted(seg, start) for seg in segments)
            _return_freed_memory()
        return out

    def _diarize(self, audio_path: Path, speech: list[tuple[float, float]], level_dbfs: float | None,
                 num_speakers: int | None, channel: int | None, timings: dict[str, float]) -> dict:
        """Diarization as cached JSON: the window embeddings ``EMBED_BLOCK_S`` of windows at a
        time (volume normalised by the whole recording's ``level_dbfs``), then one clustering."""
        from speechkit.diarize import sliding_windows
        diarizer = self._stage("diarize")
        speech = [(s, e) for s, e in speech if e - s >= FRAME_S]
        blocks = speech_blocks(sliding_windows(speech, diarizer.window_s, diarizer.step_s), EMBED_BLOCK_S)
        if not blocks:
            return {"turns": [], "centroids": {}}
        embeddings = []
        for (start, _, windows), audio in zip(blocks, _timed_iter(timings, "audio", read_spans(
                audio_path, [(a, b) for a, b, _ in blocks], channel))):
            with _timed(timings, "diarize"):
                embeddings.append(diarizer.embedder.embed_windows(
                    audio, [(s - start, e - start) for s, e in windows], level_dbfs=level_dbfs))
            _return_freed_memory()
        with _timed(timings, "diarize"):
            result = diarizer.from_embeddings(np.concatenate(embeddings), [w for *_, ws in blocks for w in ws],
                                              speech, num_speakers=num_speakers)
        return {"turns": _segments_to_json(result.turns),
                "centroids": {k: np.asarray(v).tolist() for k, v in result.centroids.items()}}

    def _enrollment_vectors(self, context: MeetingContext, cache: StageCache) -> dict[str, np.ndarray]:
        embedder_opts = (self.recipe.stage("diarize") or {}).get("embedder", "resemblyzer")
        out = {}
        for name, clips in context.enrollments.items():
            vecs = []
            for clip in clips:
                key = digest(file_digest(clip), embedder_opts)
                vecs.append(np.asarray(cache.get_or_compute("enroll", key, lambda clip=clip: np.asarray(
                    self._stage("embedder").embed(load_audio(clip))).tolist()), dtype=np.float32))
            mean = np.mean(vecs, axis=0)
            out[name] = l2_normalize(mean)
        return out

    def _name_clusters(self, centroids: dict[str, np.ndarray], context: MeetingContext,
                       cache: StageCache) -> dict[str, str | None]:
        """L3: persons by enrollment; L2+: earlier names/labels by own centroids; new stable labels."""
        from speechkit.identify import identify
        options = self.recipe.stage("identify") or {}
        threshold = float(options.get("threshold", 0.75))
        prior_threshold = float(options.get("prior_threshold", threshold))
        names: dict[str, str | None] = {label: None for label in centroids}
        if context.enrollments:
            names.update(identify(centroids, self._enrollment_vectors(context, cache), threshold=threshold))
        if context.level >= 2:
            taken = {n for n in names.values() if n}
            pending = {k: v for k, v in centroids.items() if names[k] is None}
            known = {k: v for k, v in context.prior_speakers.items() if k not in taken}
            if pending and known:
                for label, name in identify(pending, known, threshold=prior_threshold).items():
                    if name:
                        names[label] = name
            used = set(names.values()) | set(context.prior_speakers)
            number = 1
            for label in sorted(centroids):
                if names[label] is None:
                    while f"Speaker {number}" in used:
                        number += 1
                    names[label] = f"Speaker {number}"
                    used.add(names[label])
        return names

    def _correct(self, transcript: Transcript, context: MeetingContext) -> tuple[Transcript, dict]:
        from speechkit.correct import Vocabulary
        vocabulary = Vocabulary(terms=tuple(context.terms), names=tuple(context.names),
                                nicknames={k: tuple(v) for k, v in context.names.items()},
                                lm_text=context.lm_text or None)
        result = self._stage("correct").correct(transcript, vocabulary)
        return result.transcript, result.stats_dict() if hasattr(result, "stats_dict") else dict(result.stats)


def speech_blocks(spans: list[tuple[float, float]],
                  block_s: float) -> list[tuple[float, float, list[tuple[float, float]]]]:
    """Consecutive spans (speech regions, or diarization windows) grouped into blocks
    ``(audio start, audio end, spans)``.

    A block's spans reach at most ``block_s`` seconds from the first one's start to the last
    one's end, unless one span alone is longer. Its audio reaches ``BLOCK_MARGIN_S`` beyond
    them on both sides (so blocks may overlap a little) and starts on the 10 ms grid, so that
    frame-based features of a block are those of the whole recording.
    """
    groups: list[list[tuple[float, float]]] = []
    for start, end in sorted(spans):
        if groups and end - groups[-1][0][0] <= block_s:
            groups[-1].append((start, end))
        else:
            groups.append([(start, end)])
    return [(max(0.0, round(float(np.floor((g[0][0] - BLOCK_MARGIN_S) / GRID_S)) * GRID_S, 2)),
             max(end for _, end in g) + BLOCK_MARGIN_S, g) for g in groups]


def read_spans(audio_path: str | Path, spans: list[tuple[float, float]],
               channel: int | None = None) -> Iterator[np.ndarray]:
    """The 16 kHz samples of each ``(start, end)`` span (seconds, sorted by start; they may
    overlap), decoded in one streaming pass that stops after the last span; only the current
    span is held."""
    chunks = iter_audio_chunks(audio_path, chunk_s=30.0, sample_rate=SAMPLE_RATE, channel=channel)
    held = np.zeros(0, dtype=np.float32)  # decoded samples from sample `at` on
    at = 0
    for start, end in spans:
        a, b = round(start * SAMPLE_RATE), round(end * SAMPLE_RATE)
        if a < at:
            raise ValueError("spans must be sorted by start")
        parts, have = [held[a - at:]], at + len(held)
        while have < b and (chunk := next(chunks, None)) is not None:
            parts.append(chunk[max(0, a - have):])
            have += len(chunk)
        held, at = np.concatenate(parts), a
        yield held[:b - a]


@lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def _return_freed_memory() -> None:
    """Hand the heap memory freed by the last block back to the system.

    glibc keeps freed pages in its per-thread arenas; without this the resident size crept up
    by about 30 MB per ASR block (base model), 450 MB over 73 minutes of audio.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _on_grid(probs: list[np.ndarray], offsets: list[float], step: float, duration: float) -> np.ndarray:
    """Per-chunk frame probabilities as one sequence of frames every ``step`` seconds from 0."""
    lengths = np.array([len(p) for p in probs])
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    grid = np.arange(int(np.ceil(duration / step - 1e-9))) * step
    which = np.searchsorted(np.asarray(offsets), grid + 1e-9, side="right") - 1
    local = np.minimum(((grid - np.asarray(offsets)[which]) / step + 1e-6).astype(int), lengths[which] - 1)
    return np.concatenate(probs)[starts[which] + local]


def _shifted(segment: Segment, seconds: float) -> Segment:
    """``segment`` with its times and its words' times moved by ``seconds``."""
    words = tuple(replace(w, start=None if w.start is None else w.start + seconds,
                          end=None if w.end is None else w.end + seconds) for w in segment.words)
    return replace(segment, start=segment.start + seconds, end=segment.end + seconds, words=words)


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Add the seconds spent in the block to ``timings[stage]``."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - t0


def _timed_iter(timings: dict[str, float], stage: str, items: Iterable[Any]) -> Iterator[Any]:
    """``items``, adding the seconds spent producing each to ``timings[stage]``."""
    iterator = iter(items)
    while True:
        with _timed(timings, stage):
            item = next(iterator, _END)
        if item is _END:
            return
        yield item


_END = object()
