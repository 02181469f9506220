"""Audio decoding: any common format to float32 mono at one sample rate, whole or in chunks.

WAV, FLAC, Ogg, AIFF and the other libsndfile formats are read with soundfile; everything else
(MP3, M4A/AAC, Opus in WebM, video containers) is decoded by an ``ffmpeg`` subprocess that pipes
raw float32 samples. Both paths read the file block by block, select one channel or average the
channels, check that every sample is finite and resample with soxr, so
:func:`iter_audio_chunks` streams a recording of any length in constant memory.

Every problem with a file raises :class:`speechkit.errors.AudioError` naming the file: missing,
empty, header without samples, truncated or corrupt data, an undecodable codec, NaN or infinite
samples, or a channel index the file does not have. A silent file is valid (all zeros).
"""
from __future__ import annotations

import ctypes
import io
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from speechkit.errors import AudioError

#: File suffixes read by libsndfile (through soundfile); other suffixes go through ffmpeg.
SOUNDFILE_SUFFIXES = frozenset({".wav", ".wave", ".flac", ".ogg", ".oga", ".aif", ".aiff",
                                ".aifc", ".au", ".snd", ".w64", ".rf64", ".caf"})
#: WAV data sizes that streaming writers put in a header when they do not know the length.
_UNKNOWN_WAV_SIZES = frozenset({0, 0xFFFFFFFF})
_BLOCK_S = 10.0  # seconds of native-rate audio decoded per read
#: The sample rate every stage works at.
SAMPLE_RATE = 16000
#: Audio kept around a block's spans (seconds), so that its first and last frames see real signal.
BLOCK_MARGIN_S = 0.5
#: Blocks start on this grid (seconds; Resemblyzer's mel hop), so a block's frames are the recording's.
GRID_S = 0.01


def load_audio(path: str | Path, sample_rate: int = SAMPLE_RATE, channel: int | None = None) -> np.ndarray:
    """The whole recording at ``path`` as float32 mono at ``sample_rate``.

    ``channel`` selects one channel (0-based); ``None`` averages all channels.
    """
    chunks = list(iter_audio_chunks(path, chunk_s=60.0, sample_rate=sample_rate, channel=channel))
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)


def iter_audio_chunks(path: str | Path, chunk_s: float = 30.0, sample_rate: int = SAMPLE_RATE,
                      channel: int | None = None) -> Iterator[np.ndarray]:
    """Stream the recording as consecutive float32 mono chunks of ``chunk_s`` seconds.

    Every chunk but the last holds exactly ``round(chunk_s * sample_rate)`` samples; memory use
    does not grow with the recording's length. Problems found part-way (corrupt data, NaN
    samples) raise :class:`AudioError` when reached, after the chunks before them were yielded.
    """
    if chunk_s <= 0:
        raise ValueError(f"chunk_s must be positive, got {chunk_s}")
    path = _check_file(path)
    size = max(1, round(chunk_s * sample_rate))
    buffer: list[np.ndarray] = []
    buffered = 0
    total = 0
    for block in _resampled(path, sample_rate, channel):
        buffer.append(block)
        buffered += len(block)
        while buffered >= size:
            joined = np.concatenate(buffer)
            yield joined[:size]
            total += size
            buffer, buffered = [joined[size:]], buffered - size
    if buffered:
        total += buffered
        yield np.concatenate(buffer)
    if total == 0:
        raise AudioError(path, "holds no audio samples (header only)")


def audio_duration(path: str | Path) -> float:
    """The recording's duration in seconds, read from its header where the format has one."""
    path = _check_file(path)
    if path.suffix.lower() in SOUNDFILE_SUFFIXES and _soundfile_opens(path):
        with _open_soundfile(path) as handle:
            frames, rate = handle.frames, handle.samplerate
    else:
        info = _probe(path)
        if info["duration"] is not None:
            frames, rate = info["duration"], 1.0
        else:  # the container does not say: count the decoded samples
            frames = sum(len(c) for c in iter_audio_chunks(path, chunk_s=60.0, sample_rate=8000))
            rate = 8000.0
    if frames <= 0:
        raise AudioError(path, "holds no audio samples (header only)")
    return float(frames) / float(rate)


def _check_file(path: str | Path) -> Path:
    path = Path(path)
    if not path.exists():
        raise AudioError(path, "file not found")
    if not path.is_file():
        raise AudioError(path, "not a regular file")
    if path.stat().st_size == 0:
        raise AudioError(path, "empty file (0 bytes)")
    return path


def _resampled(path: Path, sample_rate: int, channel: int | None) -> Iterator[np.ndarray]:
    """Native-rate blocks from the right decoder, reduced to mono, checked and resampled."""
    if path.suffix.lower() in SOUNDFILE_SUFFIXES and _soundfile_opens(path):
        rate, channels, blocks = _soundfile_blocks(path)
    else:
        rate, channels, blocks = _ffmpeg_blocks(path)
    if channel is not None and not 0 <= channel < channels:
        raise AudioError(path, f"channel {channel} requested but the file has {channels} "
                               f"channel{'s' if channels != 1 else ''} (0..{channels - 1})")
    resampler = None
    if rate != sample_rate:
        import soxr
        resampler = soxr.ResampleStream(rate, sample_rate, 1, dtype="float32", quality="HQ")
    done = 0
    for block in blocks:
        bad = ~np.isfinite(block)
        if bad.any():
            blocks.close()
            first = (done + int(np.argwhere(bad)[0][0])) / rate
            raise AudioError(path, f"contains NaN or infinite sample values (first at {first:.3f} s)")
        done += len(block)
        mono = block[:, channel] if channel is not None else block.mean(axis=1)
        mono = np.ascontiguousarray(mono, dtype=np.float32)
        yield resampler.resample_chunk(mono) if resampler else mono
    if resampler:
        yield resampler.resample_chunk(np.zeros(0, dtype=np.float32), last=True)


def _soundfile_opens(path: Path) -> bool:
    """True if libsndfile can open ``path``; False lets ffmpeg try (e.g. an MP3 named .wav)."""
    import soundfile as sf
    try:
        sf.info(str(path))
    except sf.LibsndfileError as exc:
        if _ffmpeg_knows(path):
            return False
        raise AudioError(path, f"cannot decode: {exc.error_string}") from None
    return True


def _open_soundfile(path: Path):
    """Open with soundfile, refusing files whose header promises more data than they hold."""
    import soundfile as sf
    handle = sf.SoundFile(str(path))
    log = handle.extra_info
    declared = re.search(r"^data : (\d+) \(should be (\d+)\)", log, re.MULTILINE)
    if declared and int(declared[1]) not in _UNKNOWN_WAV_SIZES and int(declared[1]) > int(declared[2]):
        handle.close()
        raise AudioError(path, f"truncated: the header declares {int(declared[1])} bytes of audio "
                               f"data but the file holds {int(declared[2])}")
    if "Last page lacks an end-of-stream bit" in log:
        handle.close()
        raise AudioError(path, "truncated: the last Ogg page lacks its end-of-stream mark")
    return handle


def _soundfile_blocks(path: Path) -> tuple[int, int, Iterator[np.ndarray]]:
    import soundfile as sf
    with _open_soundfile(path) as handle:
        rate, channels = handle.samplerate, handle.channels

    def blocks() -> Iterator[np.ndarray]:
        with sf.SoundFile(str(path)) as handle:
            while True:
                try:
                    block = handle.read(int(_BLOCK_S * rate), dtype="float32", always_2d=True)
                except sf.LibsndfileError as exc:
                    raise AudioError(path, f"corrupt or truncated audio data: {exc.error_string}") from None
                if not len(block):
                    return
                yield block

    return rate, channels, blocks()


def _ffmpeg_knows(path: Path) -> bool:
    try:
        _probe(path)
    except AudioError:
        return False
    return True


def _probe(path: Path) -> dict:
    """Sample rate, channel count, duration (None if unknown) and codec (None if ffmpeg has no
    decoder for it) of the first audio stream.

    ffmpeg and ffprobe get absolute paths so that a name like ``a:b.mp3`` is not read as a protocol.
    """
    if shutil.which("ffprobe") is None:
        raise AudioError(path, f"decoding {path.suffix or 'this'} files needs ffmpeg (ffprobe not found)")
    cmd = ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
           "stream=codec_name,codec_tag,sample_rate,channels,duration:format=duration", "-of", "json",
           str(path.absolute())]
    result = subprocess.run(cmd, capture_output=True, text=True)
    streams = json.loads(result.stdout or "{}").get("streams", []) if result.returncode == 0 else []
    stream = streams[0] if streams else {}
    if not int(stream.get("sample_rate") or 0) or not int(stream.get("channels") or 0):
        why = _last_line(result.stderr, path) or "no decodable audio stream found"
        raise AudioError(path, f"cannot decode: {why}")
    duration = stream.get("duration") or json.loads(result.stdout).get("format", {}).get("duration")
    return {"sample_rate": int(stream["sample_rate"]), "channels": int(stream["channels"]),
            "duration": float(duration) if duration not in (None, "N/A") else None,
            "codec": stream.get("codec_name"), "codec_tag": stream.get("codec_tag")}


def _ffmpeg_blocks(path: Path) -> tuple[int, int, Iterator[np.ndarray]]:
    info = _probe(path)
    if info["codec"] is None:
        raise AudioError(path, f"unsupported codec: ffmpeg has no decoder for its audio stream "
                               f"(codec tag {info['codec_tag']})")
    rate, channels = info["sample_rate"], info["channels"]
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-i", str(path.absolute()), "-map", "0:a:0",
           "-f", "f32le", "-acodec", "pcm_f32le", "-"]

    def blocks() -> Iterator[np.ndarray]:
        frames = 0
        with tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors)
            try:
                nbytes = int(_BLOCK_S * rate) * channels * 4
                while data := process.stdout.read(nbytes):
                    block = np.frombuffer(data[:len(data) - len(data) % (channels * 4)], dtype="<f4")
                    frames += len(block) // channels
                    yield block.reshape(-1, channels)
                code = process.wait()
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
                process.stdout.close()
            errors.seek(0)
            message = _last_line(errors.read().decode("utf-8", "replace"), path)
        if code != 0 or message:
            raise AudioError(path, f"corrupt or truncated audio data: {message or f'ffmpeg exit {code}'}")
        declared = info["duration"]
        if declared and frames / rate < declared - max(0.5, 0.02 * declared):
            raise AudioError(path, f"truncated: the header declares {declared:.2f} s but only "
                                   f"{frames / rate:.2f} s could be decoded")

    return rate, channels, blocks()


def _last_line(text: str, path: Path) -> str:
    """The last message of ffmpeg's stderr without its ``[decoder @ 0x...]`` or file-name prefix."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    line = re.sub(r"^\[[^]]*@ 0x[0-9a-f]+\]\s*", "", lines[-1])
    return line.removeprefix(f"{path.absolute()}: ")


def encode_audio(audio: np.ndarray, fmt: str = "wav", sample_rate: int = SAMPLE_RATE) -> bytes:
    """Mono float32 ``audio`` in [-1, 1] (louder samples are clipped) as a 16-bit ``wav`` or
    ``flac`` file's bytes: samples scaled by 2^15 and rounded, so audio read from a 16-bit file
    comes back exactly. What requests to a server carry (a transcription upload, a chat's audio)."""
    import soundfile as sf
    scaled = np.round(np.asarray(audio, dtype=np.float64).ravel() * 32768.0)
    pcm = np.clip(scaled, -32768, 32767).astype(np.int16)
    buffer = io.BytesIO()
    sf.write(buffer, pcm, sample_rate, format=fmt.upper(), subtype="PCM_16")
    return buffer.getvalue()


def span_blocks(spans: list[tuple[float, float]], block_s: float,
                min_s: float = 0.0) -> list[tuple[float, float, list[tuple[float, float]]]]:
    """Consecutive spans (speech regions, or diarization windows) grouped into blocks
    ``(audio start, audio end, spans)``.

    A block's spans reach at most ``block_s`` seconds from the first one's start to the last
    one's end, unless one span alone is longer. Its audio reaches ``BLOCK_MARGIN_S`` beyond
    them on both sides (so blocks may overlap a little), widened evenly to at least ``min_s``
    seconds, and starts on the 10 ms grid, so that frame-based features of a block are those
    of the whole recording.
    """
    groups: list[list[tuple[float, float]]] = []
    for start, end in sorted(spans):
        if groups and end - groups[-1][0][0] <= block_s:
            groups[-1].append((start, end))
        else:
            groups.append([(start, end)])
    blocks = []
    for g in groups:
        start, end = g[0][0] - BLOCK_MARGIN_S, max(end for _, end in g) + BLOCK_MARGIN_S
        widen = max(0.0, min_s - (end - start)) / 2
        blocks.append((max(0.0, round(float(np.floor((start - widen) / GRID_S)) * GRID_S, 2)), end + widen, g))
    return blocks


def read_spans(path: str | Path, spans: list[tuple[float, float]],
               channel: int | None = None) -> Iterator[np.ndarray]:
    """The 16 kHz samples of each ``(start, end)`` span (seconds, sorted by start; they may
    overlap), decoded in one streaming pass that stops after the last span; only the current
    span is held."""
    chunks = iter_audio_chunks(path, chunk_s=30.0, sample_rate=SAMPLE_RATE, channel=channel)
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


def read_blocks(path: str | Path, blocks: list[tuple[float, float, list[tuple[float, float]]]],
                channel: int | None = None) -> Iterator[np.ndarray]:
    """The audio of each block of :func:`span_blocks`, freeing heap memory after each one."""
    for audio in read_spans(path, [(a, b) for a, b, _ in blocks], channel):
        yield audio
        return_freed_memory()


@lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def return_freed_memory() -> None:
    """Hand the heap memory freed by the last block back to the system.

    glibc keeps freed pages in its per-thread arenas; without this the resident size crept up
    by about 30 MB per ASR block (base model), 450 MB over 73 minutes of audio.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
