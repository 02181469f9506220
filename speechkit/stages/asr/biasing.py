"""What every ASR backend shares: the context that biases recognition, and the stage's own options."""
from __future__ import annotations

from dataclasses import dataclass, field

from speechkit.stages.options import StageOptions


@dataclass
class Biasing:
    """Context that steers recognition towards expected words.

    ``prompt``: free text given to decoders that take a prompt (Whisper ``initial_prompt``).
    ``hotwords``: words and phrases to favour (Whisper ``hotwords``; CTC score-level boost).
    ``hotword_weight``: strength of the CTC hot-word boost (None: the recognizer's default).
    ``lm_text``: text from which a decoder may build an n-gram LM (CTC + KenLM).
    ``verify_hotwords``: biasing that must never make a window worse (L2: the system's own words).
    A recognizer that supports it (Whisper) decodes each window with and without the biasing and
    keeps the biased decoding only where it holds more of the hot words than the unbiased one
    (and is not flagged as a loop); elsewhere the unbiased decoding. Others bias unconditionally.
    """

    prompt: str | None = None
    hotwords: list[str] = field(default_factory=list)
    hotword_weight: float | None = None
    lm_text: str | None = None
    verify_hotwords: bool = False

    def __bool__(self) -> bool:
        return bool(self.prompt or self.hotwords or self.lm_text)


@dataclass(frozen=True)
class AsrOptions(StageOptions):
    """Options of the ASR stage that every backend's options include.

    ``block_s``: longest span of speech (seconds) decoded at once: the stage reads the recording
    block by block, each block a run of speech regions cut in the pauses between them (a single
    longer region is one block), so memory does not grow with the recording's length.
    """

    block_s: float = 300.0

    def __post_init__(self) -> None:
        if self.block_s < 30.0:
            raise ValueError(f"block_s must be at least 30 s, got {self.block_s}")
