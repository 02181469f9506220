"""Audio decoding on the real recordings, streaming, and every kind of bad file."""
from __future__ import annotations

import shutil
import subprocess
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr

from speechkit.core.audio import audio_duration, encode_audio, iter_audio_chunks, load_audio
from speechkit.errors import AudioError

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs the ffmpeg binary")


@pytest.fixture(scope="module")
def fw(realdata: Path) -> Path:
    return realdata / "faster-whisper"


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def test_flac_is_mixed_down_and_resampled(fw: Path) -> None:
    native, rate = sf.read(fw / "jfk.flac", dtype="float32")
    assert rate == 44100 and native.shape[1] == 2  # the file really needs both steps
    audio = load_audio(fw / "jfk.flac")
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert len(audio) == 176000
    expected = soxr.resample(native.mean(axis=1), rate, 16000, quality="HQ")
    np.testing.assert_allclose(audio, expected, atol=1e-4)
    assert audio_duration(fw / "jfk.flac") == pytest.approx(11.0)


def test_other_sample_rate_and_channel_selection(fw: Path) -> None:
    native, _ = sf.read(fw / "stereo_diarization.wav", dtype="float32")
    left = load_audio(fw / "stereo_diarization.wav", channel=0)
    right = load_audio(fw / "stereo_diarization.wav", channel=1)
    np.testing.assert_array_equal(left, native[:, 0])  # 16 kHz already: no resampling
    np.testing.assert_array_equal(right, native[:, 1])
    assert abs(np.corrcoef(left, right)[0, 1]) < 0.2  # two different speakers
    low = load_audio(fw / "stereo_diarization.wav", sample_rate=8000, channel=0)
    assert len(low) == len(left) // 2


def test_compressed_formats_go_through_ffmpeg(fw: Path, tmp_path: Path) -> None:
    mp3 = load_audio(fw / "hotwords.mp3")
    assert len(mp3) / 16000 == pytest.approx(4.0, abs=0.06)
    assert np.abs(mp3).max() > 0.1
    reference = load_audio(fw / "jfk.flac")
    for suffix, codec in ((".m4a", "aac"), (".mp3", "libmp3lame"), (".opus", "libopus")):
        encoded = tmp_path / f"jfk{suffix}"
        ffmpeg("-i", str(fw / "jfk.flac"), "-c:a", codec, str(encoded))
        audio = load_audio(encoded)
        assert len(audio) == pytest.approx(len(reference), abs=800), suffix
        n = min(len(audio), len(reference))
        assert np.corrcoef(audio[:n], reference[:n])[0, 1] > 0.98, suffix
        assert audio_duration(encoded) == pytest.approx(11.0, abs=0.1)


@pytest.mark.parametrize("fmt", ["wav", "flac"])
def test_encoded_audio_reads_back_exactly(fw: Path, tmp_path: Path, fmt: str) -> None:
    # real speech on the 16-bit grid (jfk.flac is 24-bit): every sample survives the encoding
    audio = (np.round(load_audio(fw / "jfk.flac") * 32768) / 32768).astype(np.float32)
    path = tmp_path / f"clip.{fmt}"
    path.write_bytes(encode_audio(audio, fmt))
    assert sf.info(str(path)).subtype == "PCM_16" and sf.info(str(path)).samplerate == 16000
    np.testing.assert_array_equal(load_audio(path), audio)
    # louder than full scale is clipped, not wrapped round
    loud = tmp_path / f"loud.{fmt}"
    loud.write_bytes(encode_audio(np.array([1.5, -1.5, 0.25], dtype=np.float32), fmt))
    assert sf.read(str(loud), dtype="int16")[0].tolist() == [32767, -32768, 8192]


def test_chunks_stream_the_same_signal(fw: Path) -> None:
    whole = load_audio(fw / "jfk.flac")
    chunks = list(iter_audio_chunks(fw / "jfk.flac", chunk_s=3.0))
    assert [len(c) for c in chunks] == [48000, 48000, 48000, 32000]
    np.testing.assert_allclose(np.concatenate(chunks), whole, atol=1e-6)


@pytest.mark.parametrize("suffix", [".wav", ".mka"])
def test_memory_does_not_grow_with_duration(fw: Path, tmp_path: Path, suffix: str) -> None:
    """Peak memory while streaming 10 min equals that for 2 min (and is far below the signal)."""
    native, rate = sf.read(fw / "jfk.flac", dtype="float32")
    peaks = {}
    for seconds in (120, 600):
        path = tmp_path / f"long{seconds}.wav"
        sf.write(path, np.tile(native, (seconds // 11 + 1, 1))[:seconds * rate], rate, subtype="PCM_16")
        if suffix == ".mka":  # FLAC in Matroska: decoded by ffmpeg
            path = path.rename(path.with_suffix(".src.wav"))
            ffmpeg("-i", str(path), "-c:a", "flac", str(path.with_suffix("").with_suffix(".mka")))
            path = path.with_suffix("").with_suffix(".mka")
        tracemalloc.start()
        total = sum(len(chunk) for chunk in iter_audio_chunks(path, chunk_s=30.0))
        peaks[seconds] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert total == pytest.approx(seconds * 16000, abs=16)
    assert peaks[600] < 1.1 * peaks[120]
    assert peaks[600] < 0.5 * 600 * 16000 * 4  # well under the decoded 10 min


def test_silent_file_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "silence.wav"
    sf.write(path, np.zeros(32000, dtype=np.int16), 16000)
    audio = load_audio(path)
    assert len(audio) == 32000 and not audio.any()


@pytest.fixture(scope="module")
def bad_files(fw: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """name -> (a damaged file built from real audio, words the error must contain)."""
    tmp_path = tmp_path_factory.mktemp("bad")
    sf.write(tmp_path / "jfk.wav", load_audio(fw / "jfk.flac"), 16000, subtype="PCM_16")
    wav = (tmp_path / "jfk.wav").read_bytes()
    flac = (fw / "jfk.flac").read_bytes()
    mp3 = tmp_path / "jfk.mp3"
    ffmpeg("-i", str(fw / "jfk.flac"), str(mp3))
    signal = load_audio(fw / "jfk.flac")
    files = {
        "missing": (tmp_path / "nope.wav", b"", "not found"),
        "zero_bytes": (tmp_path / "zero.wav", b"", "empty file"),
        "header_only": (tmp_path / "header.wav", wav[:44], "truncated"),
        "half_header": (tmp_path / "half.wav", wav[:30], "cannot decode"),
        "truncated_wav": (tmp_path / "cut.wav", wav[:len(wav) // 2], "truncated"),
        "truncated_flac": (tmp_path / "cut.flac", flac[:len(flac) // 2], "corrupt or truncated"),
        "truncated_mp3_mid_frame": (tmp_path / "cut.mp3", mp3.read_bytes()[:mp3.stat().st_size // 2],
                                    "truncated"),
        "truncated_mp3_at_70pct": (tmp_path / "cut70.mp3", mp3.read_bytes()[:int(mp3.stat().st_size * .7)],
                                   "truncated"),
        "random_bytes_flac": (tmp_path / "noise.flac", np.random.default_rng(0).bytes(20000), "cannot decode"),
        "text_as_mp3": (tmp_path / "text.mp3", b"not audio at all\n" * 200, "cannot decode"),
        "text_as_m4a": (tmp_path / "text.m4a", b"not audio at all\n" * 200, "cannot decode"),
    }
    out = {}
    for name, (path, data, words) in files.items():
        if name != "missing":
            path.write_bytes(data)
        out[name] = (path, words)
    for name, bad in (("nan", np.nan), ("inf", np.inf)):
        damaged = signal.copy()
        damaged[8000] = bad
        path = tmp_path / f"{name}.wav"
        sf.write(path, damaged, 16000, subtype="FLOAT")
        out[name] = (path, "NaN or infinite")
    header_only = tmp_path / "no_frames.wav"
    sf.write(header_only, np.zeros(0, dtype=np.float32), 16000)
    out["no_frames"] = (header_only, "no audio samples")
    return out


BAD = ["missing", "zero_bytes", "header_only", "half_header", "truncated_wav", "truncated_flac",
       "truncated_mp3_mid_frame", "truncated_mp3_at_70pct", "random_bytes_flac", "text_as_mp3",
       "text_as_m4a", "nan", "inf", "no_frames"]


@pytest.mark.parametrize("name", BAD)
def test_bad_files_raise_audio_error_naming_the_file(bad_files: dict, name: str) -> None:
    path, words = bad_files[name]
    with pytest.raises(AudioError) as info:
        load_audio(path)
    assert str(path) in str(info.value)
    assert words in str(info.value)


def test_duration_checks_the_file_too(bad_files: dict) -> None:
    for name in ("missing", "zero_bytes", "truncated_wav", "text_as_mp3", "no_frames"):
        with pytest.raises(AudioError):
            audio_duration(bad_files[name][0])


def test_nan_error_says_where(bad_files: dict) -> None:
    path, _ = bad_files["nan"]
    with pytest.raises(AudioError, match=r"first at 0\.500 s"):
        load_audio(path)


def test_channel_out_of_range(fw: Path) -> None:
    with pytest.raises(AudioError, match=r"channel 2 requested but the file has 2 channels"):
        load_audio(fw / "stereo_diarization.wav", channel=2)
    with pytest.raises(AudioError, match=r"channel 1 requested but the file has 1 channel "):
        load_audio(fw.parent / "pyannote-sample" / "sample.wav", channel=1)


def test_streaming_header_with_unknown_length_is_accepted(fw: Path, tmp_path: Path) -> None:
    """ffmpeg writing WAV to a pipe puts 0xFFFFFFFF as the data size: not a truncation."""
    piped = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", str(fw / "jfk.flac"),
                            "-f", "wav", "-"], check=True, capture_output=True).stdout
    path = tmp_path / "piped.wav"
    path.write_bytes(piped)
    assert len(load_audio(path)) == 176000
