"""Telephone-band speech: stretches of a 16 kHz recording that carry sound below 4 kHz only.

A participant who dials in over a telephone or VoIP codec reaches the recording band-limited to
about 300-3400 Hz (and sampled at 8 kHz on the way). Silero's 16 kHz model can miss such speech
entirely (on a synthetic hybrid meeting it gave one remote voice 0.02-0.09), while its 8 kHz
model, made for telephone audio, hears it (see docs/real-speech.md). This module finds those
stretches so that the VAD can consult the 8 kHz model there and nowhere else.

A 32 ms frame belongs to a telephone-band stretch when, averaged over the second around it, the
energy in 300-3400 Hz rises at least ``low_rise_db`` above its quiet level (the recording's
10th percentile) while the energy in 4200-7800 Hz stays within ``high_rise_db`` of its own:
something is being said, and none of it reaches above 4 kHz. Wideband speech, near or far,
always lifts the upper band with its fricatives and breath; room noise lifts neither band much.
"""
from __future__ import annotations

import numpy as np

from speechkit.core.audio import SAMPLE_RATE

#: The telephone band and the band above it (Hz), as the frame's power spectrum splits them.
TELEPHONE_BAND = (300.0, 3400.0)
UPPER_BAND = (4200.0, 7800.0)
#: Percentile of the frame energies taken as a band's quiet level.
QUIET_PERCENTILE = 10.0
_TINY = 1e-12


def narrowband_frames(audio: np.ndarray, frame: int = 512, window_s: float = 1.0, low_rise_db: float = 10.0,
                      high_rise_db: float = 2.0, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """For each ``frame``-sample frame of ``audio`` (the last one zero padded), whether it lies in
    telephone-band speech (see the module docstring); ``window_s``: the span the band energies
    are averaged over."""
    audio = np.asarray(audio, dtype=np.float32)
    if not len(audio):
        return np.zeros(0, dtype=bool)
    frames = np.pad(audio, (0, -len(audio) % frame)).reshape(-1, frame) * np.hanning(frame).astype(np.float32)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    hz = np.fft.rfftfreq(frame, 1 / sample_rate)
    span = max(1, min(round(window_s * sample_rate / frame), len(frames)))
    rises = []
    for low, high in (TELEPHONE_BAND, UPPER_BAND):
        energy = power[:, (hz >= low) & (hz <= high)].sum(axis=1)
        quiet = np.percentile(10 * np.log10(energy + _TINY), QUIET_PERCENTILE)
        averaged = np.convolve(energy, np.ones(span) / span, mode="same")
        rises.append(10 * np.log10(averaged + _TINY) - quiet)
    return (rises[0] >= low_rise_db) & (rises[1] <= high_rise_db)
