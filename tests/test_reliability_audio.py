"""Bad and unusual audio through the whole cascade and through ``speechkit transcribe``.

tests/test_audio.py checks the decoder itself; here every case goes through
``Cascade(load_recipe("l1")).run`` (VAD, ASR, diarization) and the CLI, which must exit with 1 and
an error naming the file, never a traceback. Unusual but valid audio (other sample rates, many
channels, clipping, a wrong file extension) must still be transcribed correctly. The recordings
are built in tmp_path from the real speech in ../shared/realdata (JFK, pyannote's sample).
"""
from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr
import yaml

from speechkit.cascade import Cascade
from speechkit.cli import main
from speechkit.errors import AudioError
from speechkit.io.manifest import load_workspace
from speechkit.metrics.wer import word_error_rate
from speechkit.recipe import load_recipe
from speechkit.runner import run_workspace
from speechkit.scoring.catalogue import catalogue

METRICS = catalogue().metrics
TRANSCRIPT_KEYS = catalogue().transcript_keys
family = catalogue().family

NOTES_METRICS = family("notes").keys

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs the ffmpeg binary")

JFK = ("And so my fellow Americans, ask not what your country can do for you, "
       "ask what you can do for your country.")


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


@pytest.fixture(scope="module")
def clips(realdata: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> a recording built from real speech (good and bad ones)."""
    d = tmp_path_factory.mktemp("clips")
    fw = realdata / "faster-whisper"
    native, rate = sf.read(fw / "jfk.flac", dtype="float32")  # 44.1 kHz stereo
    mono = native.mean(axis=1)
    out: dict[str, Path] = {"stereo_44k1_flac": fw / "jfk.flac", "missing": d / "missing.wav", "folder": d}
    for r in (8000, 44100, 48000):
        out[f"rate_{r}"] = d / f"jfk{r}.wav"
        sf.write(out[f"rate_{r}"], soxr.resample(mono, rate, r), r, subtype="PCM_16")
    six = np.stack([mono * g for g in (1.0, 0.0, 0.5, 0.8, 0.0, 0.3)], axis=1)  # two silent channels
    out["six_channel"] = d / "six.wav"
    sf.write(out["six_channel"], six, rate, subtype="PCM_16")
    out["clipped"] = d / "clipped.wav"
    sf.write(out["clipped"], np.clip(mono * 12, -1.0, 1.0), rate, subtype="PCM_16")
    # Wrong extensions: the content decides (FLAC, MP3 and Opus-in-Ogg all named .wav).
    out["flac_named_wav"] = d / "flac.wav"
    shutil.copyfile(fw / "jfk.flac", out["flac_named_wav"])
    for codec, suffix in (("libmp3lame", ".mp3"), ("libopus", ".opus")):
        ffmpeg("-i", str(fw / "jfk.flac"), "-c:a", codec, str(d / f"jfk{suffix}"))
        out[f"{suffix[1:]}_named_wav"] = d / f"{suffix[1:]}.wav"
        shutil.copyfile(d / f"jfk{suffix}", out[f"{suffix[1:]}_named_wav"])
    wav = out["rate_8000"].read_bytes()
    flac, mp3 = (fw / "jfk.flac").read_bytes(), (d / "jfk.mp3").read_bytes()
    for name, data in (("zero_bytes.wav", b""), ("header_only.wav", wav[:44]),
                       ("truncated.wav", wav[:len(wav) // 2]), ("truncated.flac", flac[:len(flac) // 2]),
                       ("truncated.mp3", mp3[:len(mp3) // 2])):
        out[name.replace(".", "_")] = d / name
        (d / name).write_bytes(data)
    codec = bytearray(wav)
    codec[20:22] = struct.pack("<H", 0x1234)  # WAVE format tag that no decoder knows
    out["unsupported_codec"] = d / "codec.wav"
    out["unsupported_codec"].write_bytes(bytes(codec))
    out["video_only"] = d / "video.mp4"
    ffmpeg("-f", "lavfi", "-i", "testsrc=duration=2:size=64x64:rate=5", str(out["video_only"]))
    speech = soxr.resample(mono, rate, 16000)
    for name, value in (("nan", np.nan), ("inf", np.inf)):
        damaged = speech.copy()
        damaged[48000] = value
        out[name] = d / f"{name}.wav"
        sf.write(out[name], damaged, 16000, subtype="FLOAT")
    out["short_0s2"] = d / "short.wav"
    sf.write(out["short_0s2"], speech[16000:16000 + 3200], 16000)
    out["silence"] = d / "silence.wav"
    sf.write(out["silence"], np.zeros(20 * 16000, dtype=np.int16), 16000)
    return out


@pytest.fixture(scope="module")
def cascade() -> Cascade:
    return Cascade(load_recipe("l1"))


# name -> words the error message must contain (besides the file's path)
BAD = {
    "missing": "file not found",
    "folder": "cannot read",
    "zero_bytes_wav": "empty file (0 bytes)",
    "header_only_wav": "truncated",
    "truncated_wav": "truncated",
    "truncated_flac": "corrupt or truncated",
    "truncated_mp3": "truncated",
    "unsupported_codec": "unsupported codec",
    "video_only": "no decodable audio stream",
    "nan": "NaN or infinite sample values (first at 3.000 s)",
    "inf": "NaN or infinite sample values (first at 3.000 s)",
}


@pytest.mark.parametrize("name", BAD)
def test_bad_audio_stops_the_cascade_with_an_error_naming_the_file(clips, cascade, name):
    path = clips[name]
    with pytest.raises(AudioError) as info:
        cascade.run(path)
    assert str(path) in str(info.value) and BAD[name] in str(info.value)


@pytest.mark.parametrize("name", BAD)
def test_bad_audio_makes_transcribe_exit_1_naming_the_file(clips, name, tmp_path, capsys):
    path = clips[name]
    assert main(["transcribe", str(path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("speechkit transcribe: error: ") and str(path) in err and BAD[name] in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing half-done is written


# Valid audio that must still be transcribed as well as the plain file (tiny.en gets JFK right).
GOOD = ["rate_8000", "rate_44100", "rate_48000", "stereo_44k1_flac", "six_channel", "clipped",
        "flac_named_wav", "mp3_named_wav", "opus_named_wav"]


@pytest.mark.decodes
@pytest.mark.parametrize("name", GOOD)
def test_unusual_valid_audio_is_transcribed(clips, cascade, name):
    if name == "six_channel":
        assert sf.info(str(clips[name])).channels == 6
    if name == "clipped":
        samples, _ = sf.read(clips[name], dtype="float32")
        assert np.mean(np.abs(samples) > 0.999) > 0.05  # really clipped
    result = cascade.run(clips[name])
    text = " ".join(s.text for s in result.transcript.segments)
    # WER every file measured on one CPU's AVX-512, AVX2 and generic paths: 0.0
    assert word_error_rate(JFK, text).ratio.value <= 0.1, text
    assert all(0 <= s.start <= s.end <= 11.1 for s in result.transcript.segments)


@pytest.mark.decodes
def test_wrong_extension_is_decoded_by_content_through_the_cli(clips, tmp_path, capsys):
    path = clips["mp3_named_wav"]
    assert main(["transcribe", str(path), "--out", str(tmp_path)]) == 0
    segments = json.loads((tmp_path / "mp3.json").read_text())
    # WER measured on one CPU's AVX-512, AVX2 and generic paths: 0.0
    assert word_error_rate(JFK, " ".join(s["words"] for s in segments)).ratio.value <= 0.1
    assert "your country" in capsys.readouterr().out


def test_short_clip_gives_a_defined_result(clips, cascade):
    result = cascade.run(clips["short_0s2"])
    assert len(result.transcript.segments) <= 1
    assert all(0 <= s.start <= s.end <= 0.25 for s in result.transcript.segments)


def test_silence_gives_an_empty_transcript(clips, cascade, tmp_path, capsys):
    result = cascade.run(clips["silence"])
    assert result.transcript.segments == [] and result.record.result("identify") == {} and result.speakers == {}
    assert main(["transcribe", str(clips["silence"]), "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "silence.json").read_text()) == []
    assert (tmp_path / "silence.stm").read_text() == "" and (tmp_path / "silence.rttm").read_text() == ""


def test_silent_meeting_is_scored_with_defined_metrics(clips, tmp_path, capsys):
    """A meeting whose recording is silent: empty hypothesis, every metric defined, no NaN."""
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copyfile(clips["silence"], ws / "m1.wav")
    (ws / "m1.stm").write_text("m1 1 p_ann 1.00 4.00 we ship version twenty on march third\n"
                               "m1 1 p_bob 5.00 8.00 the kubernetes cluster is down\n")
    (ws / "workspace.yaml").write_text(yaml.safe_dump({
        "name": "silent", "people": [{"id": "p_ann", "name": "Ann Lee"}, {"id": "p_bob", "name": "Bob Roy"}],
        "meetings": [{"id": "m1", "date": "2026-03-02", "audio": "m1.wav", "reference": "m1.stm",
                      "attendees": ["p_ann", "p_bob"]}],
        "terms": {"numbers": ["20"], "jargon": ["Kubernetes"]}}))
    result = run_workspace(load_recipe("l1"), load_workspace(ws), tmp_path / "run", progress=False)
    assert result.results["m1"].transcript.segments == []
    values = {k: v["value"] for k, v in result.scores["meetings"]["m1"].items() if k in TRANSCRIPT_KEYS}
    assert values == {"wer": 1.0, "number_recall": 0.0, "term_recall": 0.0, "named_speaker_accuracy": 0.0,
                      "der": 1.0, "jer": 1.0, "cpwer": 1.0, "tcpwer": 1.0, "speaker_consistency": None}
    assert {k: v for k, v in result.scores["not_applicable"].items() if k in TRANSCRIPT_KEYS} == {
        "speaker_consistency": "no person of this meeting speaks in another scored meeting"}
    assert all("no gold notes" in result.scores["not_applicable"][k] for k in NOTES_METRICS)
    assert set(result.scores["aggregate"]) == set(METRICS)
    saved = json.loads((tmp_path / "run" / "scores.json").read_text())  # strict JSON: no NaN/Infinity
    assert saved["aggregate"]["wer"]["value"] == 1.0
    assert (tmp_path / "run" / "report.html").stat().st_size > 0
    # The same pair through `speechkit score` (single pair mode).
    assert main(["score", "--ref", str(ws / "m1.stm"), "--hyp", str(tmp_path / "run" / "transcripts" / "m1.json"),
                 "--resamples", "0"]) == 0
    assert "1.000" in capsys.readouterr().out


LONG_S = 2 * 3600
CYCLE_S = 120  # 30 s of real speech, then 90 s of silence
STREAM = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from speechkit.core.audio import iter_audio_chunks
    path = sys.argv[1]
    first = iter_audio_chunks(path, chunk_s=30.0)
    next(first)
    first.close()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    total, pattern = 0, []
    for chunk in iter_audio_chunks(path, chunk_s=30.0):
        total += len(chunk)
        rms = float(np.sqrt(np.mean(chunk.astype(np.float64) ** 2)))
        pattern.append("S" if rms > 0.01 else "." if rms < 1e-3 else "?")
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(total, after - before, "".join(pattern))
""")


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".wav", ".m4a"])
def test_two_hour_recording_streams_in_bounded_memory(realdata, tmp_path, suffix):
    """2 h at 8 kHz (written in chunks; .m4a: AAC decoded by the ffmpeg pipe) resampled to 16 kHz
    while streaming: the process's peak RSS grows far less than the decoded signal's size."""
    speech, rate = sf.read(realdata / "pyannote-sample" / "sample.wav", dtype="float32")
    speech = soxr.resample(speech, rate, 8000)
    assert len(speech) == 30 * 8000
    silence = np.zeros((CYCLE_S - 30) * 8000, dtype=np.float32)
    path = tmp_path / "two_hours.wav"
    with sf.SoundFile(path, "w", samplerate=8000, channels=1, subtype="PCM_16") as handle:
        for _ in range(LONG_S // CYCLE_S):
            handle.write(speech)
            handle.write(silence)
    assert sf.info(str(path)).duration == LONG_S
    if suffix != ".wav":
        ffmpeg("-i", str(path), "-c:a", "aac", str(path.with_suffix(suffix)))
        path.unlink()
        path = path.with_suffix(suffix)
    done = subprocess.run([sys.executable, "-c", STREAM, str(path)], capture_output=True, text=True, check=True)
    total, growth_kib, pattern = done.stdout.split()
    assert int(total) == LONG_S * 16000
    assert pattern == "S..." * (LONG_S // CYCLE_S)  # every chunk holds what was written there
    decoded_kib = LONG_S * 16000 * 4 // 1024  # 450 MiB of float32
    assert int(growth_kib) < decoded_kib / 20, (growth_kib, decoded_kib)
