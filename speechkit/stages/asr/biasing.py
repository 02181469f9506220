"""What every ASR backend shares: the stage's own options, and :class:`Biasing` (the context that
biases recognition, defined with the meeting's context in :mod:`speechkit.meeting_context`)."""
from __future__ import annotations

from dataclasses import dataclass

from speechkit.core.options import StageOptions, bounded
from speechkit.meeting_context import Biasing

__all__ = ["AsrOptions", "Biasing"]


@dataclass(frozen=True)
class AsrOptions(StageOptions):
    """Options of the ASR stage that every backend's options include.

    ``block_s``: longest span of speech (seconds) decoded at once: the stage reads the recording
    block by block, each block a run of speech regions cut in the pauses between them (a single
    longer region is one block), so memory does not grow with the recording's length.
    """

    block_s: float = bounded(300.0, ge=30.0, le=7200.0)
