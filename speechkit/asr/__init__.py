"""Speech recognition: one interface, interchangeable backends.

A recognizer turns 16 kHz mono float32 audio (and optionally the speech regions found by VAD)
into segments whose words carry start, end and confidence. The segments are not yet attributed
to speakers: their ``speaker`` is ``""`` until diarization assigns one.

Backends are named in recipes and created by :func:`make_recognizer`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from speechkit.transcript import Segment

#: backend name -> "module:class"; imported only when used so the core install stays light.
BACKENDS = {
    "whisper": "speechkit.asr.whisper:WhisperRecognizer",
    "ctc": "speechkit.asr.ctc:CTCRecognizer",
}


@dataclass
class Biasing:
    """Context that steers recognition towards expected words.

    ``prompt``: free text given to decoders that take a prompt (Whisper ``initial_prompt``).
    ``hotwords``: words and phrases to favour (Whisper ``hotwords``; CTC score-level boost).
    ``hotword_weight``: strength of the CTC hot-word boost (None: the recognizer's default).
    ``lm_text``: text from which a decoder may build an n-gram LM (CTC + KenLM).
    """

    prompt: str | None = None
    hotwords: list[str] = field(default_factory=list)
    hotword_weight: float | None = None
    lm_text: str | None = None

    def __bool__(self) -> bool:
        return bool(self.prompt or self.hotwords or self.lm_text)


class Recognizer(Protocol):
    """What every ASR backend provides."""

    def transcribe(self, audio: np.ndarray, speech: list[tuple[float, float]] | None = None,
                   biasing: Biasing | None = None) -> list[Segment]:
        """Recognise ``audio`` (16 kHz mono float32); ``speech`` limits decoding to those regions (s)."""
        ...


def make_recognizer(backend: str, **options: Any) -> Recognizer:
    """Create the ASR backend named ``backend`` with its options (as given in a recipe)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown ASR backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    module, cls = BACKENDS[backend].split(":")
    return getattr(importlib.import_module(module), cls)(**options)
