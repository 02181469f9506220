"""Are the synthetic voices distinguishable? Resemblyzer cosine similarities, for the manifest.

*Within* a person: the person's enrollment embedding against the embedding of their (dry)
speech in each meeting. *Across* people: enrollment against enrollment. A voice set is
usable when every within-person similarity exceeds every cross-person one.
"""
from __future__ import annotations

import itertools

import numpy as np

from speechkit.errors import ModelNotAvailableError
from speechkit.synth.voices import SAMPLE_RATE


def voice_similarity(enrollments: dict[str, np.ndarray], speech: dict[str, list[np.ndarray]]) -> dict:
    """Cosine similarities of Resemblyzer d-vectors; ``speech`` holds per-person clips (one per meeting)."""
    try:
        from resemblyzer import VoiceEncoder, preprocess_wav
    except ImportError as exc:
        raise ModelNotAvailableError(f"Resemblyzer is not installed ({exc}); pip install resemblyzer") from None
    encoder = VoiceEncoder("cpu", verbose=False)

    def embed(audio: np.ndarray) -> np.ndarray:
        e = encoder.embed_utterance(preprocess_wav(audio.astype(np.float32), source_sr=SAMPLE_RATE))
        return e / np.linalg.norm(e)

    enrolled = {pid: embed(a) for pid, a in sorted(enrollments.items())}
    within = {}
    for pid, clips in sorted(speech.items()):
        sims = [float(enrolled[pid] @ embed(c)) for c in clips if len(c) >= SAMPLE_RATE]
        if sims:
            within[pid] = {"mean": round(float(np.mean(sims)), 3), "min": round(min(sims), 3), "clips": len(sims)}
    cross = {f"{a}~{b}": round(float(enrolled[a] @ enrolled[b]), 3) for a, b in itertools.combinations(enrolled, 2)}
    within_min = min((w["min"] for w in within.values()), default=None)
    cross_max = max(cross.values(), default=None)
    return {"model": "resemblyzer VoiceEncoder (d-vector, 256-dim)", "within": within, "cross": cross,
            "within_min": within_min, "cross_max": cross_max,
            "separable": bool(within_min is not None and cross_max is not None and within_min > cross_max)}
