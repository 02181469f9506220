"""The acoustic channel of a meeting: room reverberation, noise, and remote participants.

A *clean* meeting is a dry close-talk mix with faint noise. A *hard* meeting puts the in-room
people in a simulated shoebox room (pyroomacoustics image-source method) at a sampled RT60,
adds pink noise at a sampled SNR and, in hybrid calls, passes remote people through their own
small room and a VoIP-like channel: 300-3400 Hz band-pass, 8 kHz resampling, 8-bit mu-law
quantisation and a level mismatch (OSynth App. "Hybrid (in-room plus remote) calls").
Room responses are shifted so the direct path lands at time zero: word times stay exact.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from speechkit.synth.voices import SAMPLE_RATE


@dataclass(frozen=True)
class Codec:
    """The remote participants' channel."""

    low_hz: float = 300.0
    high_hz: float = 3400.0
    rate: int = 8000
    mu: int = 255


@dataclass(frozen=True)
class Condition:
    """How one meeting sounds. ``gains_db`` per person; ``remote`` people go through ``codec``."""

    kind: str                       # clean | room | hybrid
    snr_db: float
    gains_db: dict[str, float]
    rt60: float = 0.0
    room: tuple[float, float, float] = (0.0, 0.0, 0.0)
    remote: tuple[str, ...] = ()
    remote_rt60: float = 0.0
    codec: Codec | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["room"] = list(self.room)
        d["remote"] = list(self.remote)
        return d


def sample_condition(rng: np.random.Generator, attendees: tuple[str, ...], hard: bool,
                     hybrid_p: float = 0.6, remote_room_p: float = 0.3) -> Condition:
    """Draw a meeting's condition: clean, or a reverberant noisy room, often with remote people.

    Remote people use a headset (dry) or, with ``remote_room_p``, a small room of their own.
    """
    gains = {pid: round(float(rng.uniform(-1.5, 1.5)), 2) for pid in attendees}
    if not hard:
        return Condition(kind="clean", snr_db=round(float(rng.uniform(30, 40)), 1), gains_db=gains)
    room = (round(float(rng.uniform(5, 9)), 2), round(float(rng.uniform(4, 7)), 2),
            round(float(rng.uniform(2.7, 3.3)), 2))
    remote: tuple[str, ...] = ()
    if len(attendees) >= 2 and rng.random() < hybrid_p:
        count = 2 if len(attendees) >= 4 and rng.random() < 0.3 else 1
        remote = tuple(sorted(rng.choice(list(attendees), size=count, replace=False).tolist(), key=attendees.index))
        for pid in remote:
            gains[pid] = round(float(rng.uniform(-4, -1)), 2)
    return Condition(kind="hybrid" if remote else "room", snr_db=round(float(rng.uniform(18, 25)), 1), gains_db=gains,
                     rt60=round(float(rng.uniform(0.2, 0.35)), 2), room=room, remote=remote,
                     remote_rt60=(round(float(rng.uniform(0.15, 0.25)), 2)
                                  if remote and rng.random() < remote_room_p else 0.0),
                     codec=Codec() if remote else None)


def _rirs(room: tuple[float, float, float], rt60: float, count: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Room impulse responses from ``count`` talker positions to one table microphone, direct path at 0."""
    import pyroomacoustics as pra

    absorption, max_order = pra.inverse_sabine(rt60, list(room))
    shoebox = pra.ShoeBox(list(room), fs=SAMPLE_RATE, materials=pra.Material(absorption), max_order=min(max_order, 12))
    mic = np.array([room[0] / 2, room[1] / 2, 0.8])
    shoebox.add_microphone(mic)
    for k in range(count):
        angle = 2 * np.pi * (k / max(count, 1)) + float(rng.uniform(-0.3, 0.3))
        dist = float(rng.uniform(0.8, min(room[0], room[1]) / 2 - 0.4))
        pos = mic + np.array([dist * np.cos(angle), dist * np.sin(angle), float(rng.uniform(0.35, 0.55))])
        shoebox.add_source(pos.tolist())
    shoebox.compute_rir()
    out = []
    for k in range(count):
        rir = np.asarray(shoebox.rir[0][k], dtype=np.float64)
        peak = int(np.argmax(np.abs(rir)))
        rir = rir[peak:] / abs(rir[peak])
        out.append(rir[: int(1.2 * rt60 * SAMPLE_RATE) + 1])
    return out


def _codec(signal: np.ndarray, codec: Codec) -> np.ndarray:
    """Band-limit, downsample to the codec rate and back, mu-law quantise (zero-phase, no delay)."""
    from scipy.signal import butter, resample_poly, sosfiltfilt

    sos = butter(4, [codec.low_hz, codec.high_hz], btype="bandpass", fs=SAMPLE_RATE, output="sos")
    x = sosfiltfilt(sos, signal)
    x = resample_poly(resample_poly(x, codec.rate, SAMPLE_RATE), SAMPLE_RATE, codec.rate)[: len(signal)]
    peak = max(float(np.abs(x).max()), 1e-9)
    y = x / peak
    levels = 2 ** 8 - 1
    comp = np.sign(y) * np.log1p(codec.mu * np.abs(y)) / np.log1p(codec.mu)
    comp = np.round((comp + 1) / 2 * levels) / levels * 2 - 1
    return np.sign(comp) * np.expm1(np.abs(comp) * np.log1p(codec.mu)) / codec.mu * peak


def _pink(n: int, rng: np.random.Generator) -> np.ndarray:
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / SAMPLE_RATE)
    spectrum /= np.sqrt(np.maximum(freqs, 20.0))
    noise = np.fft.irfft(spectrum, n)
    return noise / np.sqrt(np.mean(noise ** 2))


def _speech_power(x: np.ndarray) -> float:
    hop = SAMPLE_RATE // 100
    n = len(x) // hop
    frames = np.mean(x[: n * hop].reshape(n, hop) ** 2, axis=1)
    active = frames[frames > frames.max() * 1e-3]
    return float(active.mean()) if len(active) else 1e-9


def render(tracks: dict[str, np.ndarray], cond: Condition, rng: np.random.Generator) -> np.ndarray:
    """Mix the dry per-person tracks into one recording under ``cond``; float32, peak 0.9."""
    from scipy.signal import fftconvolve

    people = sorted(tracks)
    in_room = [p for p in people if p not in cond.remote]
    mix = np.zeros(len(next(iter(tracks.values()))), np.float64)
    rirs = dict(zip(in_room, _rirs(cond.room, cond.rt60, len(in_room), rng))) if cond.rt60 else {}
    remote_rirs = (dict(zip(cond.remote, _rirs((3.5, 3.0, 2.6), cond.remote_rt60, len(cond.remote), rng)))
                   if cond.remote and cond.remote_rt60 else {})
    for pid in people:
        x = tracks[pid].astype(np.float64)
        if pid in rirs:
            x = fftconvolve(x, rirs[pid])[: len(x)]
        if pid in remote_rirs:
            x = fftconvolve(x, remote_rirs[pid])[: len(x)]
        if pid in cond.remote:
            x = _codec(x, cond.codec or Codec())
        x = x / max(float(np.sqrt(_speech_power(x))), 1e-9) * 0.1
        mix += x * 10 ** (cond.gains_db.get(pid, 0.0) / 20)
    noise = _pink(len(mix), rng)
    mix += noise * np.sqrt(_speech_power(mix) / 10 ** (cond.snr_db / 10))
    return (mix / max(float(np.abs(mix).max()), 1e-9) * 0.9).astype(np.float32)
