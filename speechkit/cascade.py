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
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from speechkit.asr import Biasing, make_recognizer
from speechkit.audio import load_audio
from speechkit.cache import StageCache, digest, file_digest
from speechkit.context import MeetingContext
from speechkit.io.seglst import parse_seglst, to_seglst
from speechkit.recipe import Recipe
from speechkit.transcript import Segment, Transcript

log = logging.getLogger(__name__)


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

    def __init__(self, recipe: Recipe) -> None:
        self.recipe = recipe
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

        def timed(stage: str, fn):
            t0 = time.perf_counter()
            value = fn()
            timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - t0
            return value

        audio_key = digest(file_digest(audio_path), channel)
        audio: np.ndarray | None = None

        def samples() -> np.ndarray:
            nonlocal audio
            if audio is None:
                audio = timed("audio", lambda: load_audio(audio_path, channel=channel))
            return audio

        vad_key = digest(audio_key, self.recipe.stage("vad"))
        speech = cache.get_or_compute("vad", vad_key, lambda: timed(
            "vad", lambda: [list(r) for r in self._stage("vad")(samples())]))
        speech = [tuple(r) for r in speech]

        biasing = context.biasing if context.biasing else None
        asr_key = digest(vad_key, self.recipe.stage("asr"), self.recipe.device,
                         biasing.__dict__ if biasing else None)
        words = _segments_from_json(cache.get_or_compute("asr", asr_key, lambda: _segments_to_json(timed(
            "asr", lambda: self._stage("asr").transcribe(samples(), speech=speech, biasing=biasing)))))

        diar_key = digest(vad_key, self.recipe.stage("diarize"), num_speakers)
        diarization = cache.get_or_compute("diarize", diar_key, lambda: timed(
            "diarize", lambda: self._diarize(samples(), speech, num_speakers)))
        turns = _segments_from_json(diarization["turns"])
        centroids = {k: np.asarray(v, dtype=np.float32) for k, v in diarization["centroids"].items()}

        from speechkit.attribution import attribute_words, name_segments
        segments = attribute_words(words, turns) if turns else words
        names = timed("identify", lambda: self._name_clusters(centroids, context, cache))
        segments = name_segments(segments, names)
        transcript = Transcript(session_id, segments)

        correction: dict[str, Any] = {}
        if self.recipe.stage("correct") is not None and (context.terms or context.names):
            transcript, correction = timed("correct", lambda: self._correct(transcript, context))
        speakers = {(names.get(label) or label): vec.tolist() for label, vec in centroids.items()}
        return CascadeResult(transcript, speakers, names, timings, correction)

    def _diarize(self, audio: np.ndarray, speech: list[tuple[float, float]], num_speakers: int | None) -> dict:
        result = self._stage("diarize")(audio, speech, num_speakers=num_speakers)
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
            out[name] = mean / (np.linalg.norm(mean) or 1.0)
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
