"""Scoring settings: collars, the bootstrap, how notes are matched (``speechkit score`` flags)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from speechkit.errors import SpeechkitError, brief
from speechkit.io.uem import Uem
from speechkit.metrics.bootstrap import PERCENTILES, RESAMPLES, SEED, check_bootstrap_settings
from speechkit.metrics.cpwer import TCP_COLLAR
from speechkit.metrics.diarization import COLLAR
from speechkit.metrics.normalize import NORMALIZER_NAME


@dataclass(frozen=True)
class ScoreOptions:
    """Scoring settings.

    ``collar``: DER/JER collar in seconds on each side of a reference boundary.
    ``uem``: the scored regions of DER/JER per meeting (a UEM file; None: each meeting's extent).
    ``tcp_collar``: tcpWER collar in seconds. ``resamples``/``seed``: the bootstrap over meetings
    (0 resamples: no CI). ``similarity``: how action items are matched by description
    (:func:`speechkit.text_similarity.text_similarity`: ``auto`` takes the sentence embedder when
    it is installed, else the lexical measure). ``der_from_segments``: where the hypothesis has no
    speaker turns (an RTTM), score DER/JER on its transcript segments (else they are n/a).
    ``exclude_backchannels``: leave the reference's backchannel segments, and the hypothesis words
    that transcribe them, out of the word metrics (:mod:`speechkit.metrics.backchannels`).
    """

    collar: float = COLLAR
    tcp_collar: float = TCP_COLLAR
    resamples: int = RESAMPLES
    seed: int = SEED
    similarity: Literal["auto", "embedding", "lexical"] = "auto"
    uem: Uem | None = None
    der_from_segments: bool = False
    exclude_backchannels: bool = False

    def __post_init__(self) -> None:
        if self.similarity not in ("auto", "embedding", "lexical"):
            raise SpeechkitError(f"similarity: expected auto, embedding or lexical, got {brief(self.similarity)}")
        try:
            check_bootstrap_settings(self.resamples, self.seed)
        except ValueError as exc:
            raise SpeechkitError(str(exc)) from None
        for name in ("collar", "tcp_collar"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise SpeechkitError(f"{name}: expected a finite number of seconds >= 0, got {brief(value)}")

    def settings(self) -> dict[str, Any]:
        """scores.json ``settings`` (the metric families add their own entries after these)."""
        return {
            "normalizer": NORMALIZER_NAME,
            "der_collar_s": self.collar,
            "der_collar_note": f"{self.collar} s on each side of every reference boundary "
                               f"(pyannote.metrics collar={2 * self.collar}, total width); skip_overlap false",
            "der_uem": self.uem.path if self.uem else None,
            "der_from_segments": self.der_from_segments,
            "exclude_backchannels": self.exclude_backchannels,
            "tcpwer_collar_s": self.tcp_collar,
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "unit": "meeting",
                          "rng": "numpy.random.default_rng", "percentiles": list(PERCENTILES)},
            "aggregation": "micro over meetings: sum of per-meeting numerators / sum of denominators "
                           "(jer: mean of per-meeting JER)",
        }
