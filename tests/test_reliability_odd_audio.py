"""Odd audio on each surface that takes audio, round five (issue 48): ``speechkit transcribe``, a
workspace meeting (``speechkit run``) and ``speechkit serve``.

Each recording is built in tmp_path from JFK's real speech (../shared/realdata): one sample,
8 kHz and 192 kHz, 6 channels, all zeros, a clipped full-scale square wave, file names with
spaces, unicode and a newline (all valid: a defined result, the speech transcribed), and a WAV of
0 samples, a FLAC whose header is overwritten and an MP3 cut mid-frame (each an error naming the
file, on one line). An hour of silence keeps the peak memory of each surface flat: its peak RSS
is measured beside a minute of silence's (``serve`` runs as the real command for it).
"""
from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr
import yaml
from reliability_helpers import error_line

from speechkit.cli import main
from speechkit.io.multipart import Part, encode_form
from speechkit.io.names import session_token
from speechkit.metrics.wer import word_error_rate

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs the ffmpeg binary")

REPO = Path(__file__).resolve().parents[1]
JFK = ("And so my fellow Americans, ask not what your country can do for you, "
       "ask what you can do for your country.")
JFK_S = 11.0

#: valid recordings of speech: transcribed as well as the plain file
SPEECH = ["rate_8000", "rate_192000", "six_channel", "name_with_spaces_and_unicode", "name_with_a_newline"]
#: valid recordings without speech: a defined, empty or near-empty transcript inside the clip
NO_SPEECH = {"one_sample": 1 / 16000, "all_zeros": 5.0, "square_wave": 5.0}
#: name -> what the one error line says (besides the file's name)
BAD = {"zero_samples": "holds no audio samples", "flac_corrupt_header": "corrupt or truncated audio data",
       "mp3_cut_mid_frame": "corrupt or truncated audio data", "bad_name_with_a_newline": "corrupt or truncated"}
SUFFIX = {"one_sample": ".wav", "all_zeros": ".wav", "square_wave": ".wav", "zero_samples": ".wav",
          "flac_corrupt_header": ".flac", "mp3_cut_mid_frame": ".mp3", "bad_name_with_a_newline": ".flac"}


def _mp3_frame_starts(data: bytes) -> list[int]:
    """Offsets of the MPEG-1 Layer III frame headers of a constant-bit-rate ``data`` (sync word
    0xFFF, layer III): where each frame begins, so a cut can fall inside one."""
    return [m.start() for m in re.finditer(rb"\xff[\xfa\xfb]", data)]


@pytest.fixture(scope="module")
def odd(realdata: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> a recording (see the module docstring)."""
    d = tmp_path_factory.mktemp("odd")
    flac = realdata / "faster-whisper" / "jfk.flac"
    native, rate = sf.read(flac, dtype="float32")  # 44.1 kHz stereo
    mono = native.mean(axis=1)
    out: dict[str, Path] = {}
    for r in (8000, 192000):
        out[f"rate_{r}"] = d / f"jfk{r}.wav"
        sf.write(out[f"rate_{r}"], soxr.resample(mono, rate, r), r, subtype="PCM_16")
    out["six_channel"] = d / "six.flac"
    sf.write(out["six_channel"], np.stack([mono * g for g in (1.0, 0.0, 0.5, 0.8, 0.0, 0.3)], axis=1), rate)
    out["name_with_spaces_and_unicode"] = d / "jfk  rede ü 会议.flac"
    out["name_with_a_newline"] = d / "jfk\nspeech.flac"
    for name in ("name_with_spaces_and_unicode", "name_with_a_newline"):
        shutil.copyfile(flac, out[name])
    paths = {name: d / f"{name}{SUFFIX[name]}" for name in SUFFIX}
    paths["bad_name_with_a_newline"] = d / "bad\nname.flac"
    sf.write(paths["one_sample"], mono[20000:20001], 16000, subtype="PCM_16")
    sf.write(paths["all_zeros"], np.zeros(5 * 16000, dtype=np.int16), 16000)
    t = np.arange(5 * 16000) / 16000
    sf.write(paths["square_wave"], np.where(np.sin(2 * np.pi * 440 * t) >= 0, 1.0, -1.0), 16000, subtype="PCM_16")
    sf.write(paths["zero_samples"], np.zeros(0, dtype=np.int16), 16000)
    corrupt = bytearray(flac.read_bytes())
    corrupt[8:42] = b"\xff" * 34  # the STREAMINFO block, after "fLaC" and its 4-byte block header
    paths["flac_corrupt_header"].write_bytes(bytes(corrupt))
    paths["bad_name_with_a_newline"].write_bytes(bytes(corrupt))
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(flac), "-c:a", "libmp3lame", "-b:a", "128k",
                    str(d / "jfk.mp3")], check=True)
    mp3 = (d / "jfk.mp3").read_bytes()
    starts = [s for s in _mp3_frame_starts(mp3) if s > len(mp3) // 2]
    paths["mp3_cut_mid_frame"].write_bytes(mp3[:(starts[0] + starts[1]) // 2])  # halfway into a middle frame
    return out | paths


def one_line(err: str) -> str:
    """The whole of ``err``, which must be one line and no traceback (transcribe prints no progress
    bar; tests/reliability_helpers.py's ``error_line`` allows other lines beside)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def shown(path: Path) -> str:
    """A path as error lines show it: control characters escaped (a newline as ``\\n``)."""
    return str(path).replace("\n", "\\n")


# --- speechkit transcribe ---

@pytest.mark.decodes
@pytest.mark.parametrize("name", SPEECH)
def test_transcribe_transcribes_odd_valid_speech(odd, name, tmp_path, capsys):
    assert main(["transcribe", str(odd[name]), "--out", str(tmp_path)]) == 0
    written = tmp_path / f"{session_token(odd[name].stem)}.json"
    segments = json.loads(written.read_text())
    assert [p.name for p in tmp_path.iterdir() if "\n" in p.name] == []  # names of one line
    # WER measured on one CPU's AVX-512 and AVX2 paths: 0.0
    assert word_error_rate(JFK, " ".join(s["words"] for s in segments)).ratio.value <= 0.1
    assert all(0 <= s["start_time"] <= s["end_time"] <= JFK_S + 0.1 for s in segments)
    assert {s["session_id"] for s in segments} == {session_token(odd[name].stem)}


@pytest.mark.parametrize("name", NO_SPEECH)
def test_transcribe_gives_a_defined_transcript_of_audio_without_speech(odd, name, tmp_path, capsys):
    assert main(["transcribe", str(odd[name]), "--out", str(tmp_path)]) == 0
    segments = json.loads((tmp_path / f"{name}.json").read_text())
    assert len(segments) <= 1, segments  # measured: none (VAD finds no speech in any)
    assert all(0 <= s["start_time"] <= s["end_time"] <= NO_SPEECH[name] + 0.01 for s in segments)
    assert (tmp_path / f"{name}.rttm").is_file() and (tmp_path / f"{name}.stm").is_file()


@pytest.mark.parametrize("name", BAD)
def test_transcribe_refuses_bad_audio_in_one_line_naming_the_file(odd, name, tmp_path, capsys):
    assert main(["transcribe", str(odd[name]), "--out", str(tmp_path / "out")]) == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"speechkit transcribe: error: {shown(odd[name])}: {BAD[name]}"), line
    assert not (tmp_path / "out").exists()


# --- a workspace meeting: speechkit run ---

def workspace(folder: Path, audio: dict[str, Path]) -> Path:
    """A workspace of one meeting per recording (its file name kept), each with JFK's words as
    its reference, or none for recordings without speech."""
    folder.mkdir()
    meetings = []
    for i, (name, path) in enumerate(audio.items()):
        shutil.copyfile(path, folder / path.name)
        (folder / f"{name}.stm").write_text(f"{name} 1 p1 0.30 10.50 {JFK if name in SPEECH else ''}\n")
        meetings.append({"id": name, "date": f"2026-03-{i + 1:02d}", "audio": path.name, "reference": f"{name}.stm",
                         "attendees": ["p1"]})
    (folder / "workspace.yaml").write_text(yaml.safe_dump({
        "name": "odd", "people": [{"id": "p1", "name": "John Kennedy"}], "meetings": meetings,
        "terms": {"numbers": [], "jargon": ["Americans"]}}, allow_unicode=True))
    return folder


@pytest.mark.decodes
def test_a_workspace_of_odd_valid_audio_is_run_and_scored(odd, tmp_path, capsys):
    names = ["rate_192000", "six_channel", "name_with_spaces_and_unicode", "name_with_a_newline", *NO_SPEECH]
    ws = workspace(tmp_path / "ws", {n: odd[n] for n in names})
    assert main(["run", "l1", "--workspace", str(ws), "--out", str(tmp_path / "run"),
                 "--cache-dir", str(tmp_path / "cache")]) == 0, capsys.readouterr().err
    scores = json.loads((tmp_path / "run" / "scores.json").read_text(),
                        parse_constant=lambda c: pytest.fail(f"scores.json holds {c}"))  # no NaN or Infinity
    for name in names:
        segments = json.loads((tmp_path / "run" / "transcripts" / f"{name}.json").read_text())
        if name in SPEECH:
            assert scores["meetings"][name]["wer"]["value"] <= 0.1, (name, segments)
        else:
            assert len(segments) <= 1
    assert {p.name for p in tmp_path.iterdir()} == {"ws", "run", "cache"}


@pytest.mark.parametrize("name", ["zero_samples", "flac_corrupt_header", "mp3_cut_mid_frame"])
def test_a_workspace_meeting_of_bad_audio_stops_the_run_in_one_line(odd, name, tmp_path, capsys):
    ws = workspace(tmp_path / "ws", {name: odd[name]})
    assert main(["run", "l1", "--workspace", str(ws), "--out", str(tmp_path / "run"),
                 "--cache-dir", str(tmp_path / "cache")]) == 1
    line = error_line(capsys)  # stderr also holds the progress bar
    assert line.startswith(f"speechkit run: error: {ws / odd[name].name}: {BAD[name]}"), line
    assert not (tmp_path / "run" / "scores.json").exists()


# --- an hour of silence: peak memory flat on each surface ---

PEAK_RSS = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_rss_kib(*command: str) -> int:
    """The peak resident memory (KiB) of ``command`` run to its end; it must succeed."""
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, *command], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    code, kib = done.stdout.split()
    assert code == "0", done.stdout
    return int(kib)


@pytest.fixture(scope="module")
def silence(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A minute and an hour of digital silence, 16 kHz FLAC, written a minute at a time."""
    d = tmp_path_factory.mktemp("silence")
    out = {}
    for name, minutes in (("minute", 1), ("hour", 60)):
        out[name] = d / f"{name}.flac"
        with sf.SoundFile(out[name], "w", samplerate=16000, channels=1, subtype="PCM_16") as handle:
            for _ in range(minutes):
                handle.write(np.zeros(60 * 16000, dtype=np.int16))
    return out


#: the hour decoded as float32 at 16 kHz: what reading it whole would cost
HOUR_KIB = 3600 * 16000 * 4 // 1024


def test_an_hour_of_silence_is_transcribed_in_flat_memory(silence, tmp_path):
    """Measured on a 2-core machine: 226 MB for the minute, 239 MB for the hour (+6% of 225 MiB)."""
    peaks = {name: peak_rss_kib(sys.executable, "-m", "speechkit", "transcribe", str(path),
                                "--out", str(tmp_path / name)) for name, path in silence.items()}
    assert json.loads((tmp_path / "hour" / "hour.json").read_text()) == []
    assert peaks["hour"] - peaks["minute"] < HOUR_KIB / 5, peaks


def test_an_hour_of_silence_as_a_workspace_meeting_is_run_in_flat_memory(silence, tmp_path):
    peaks = {}
    for name, path in silence.items():
        ws = workspace(tmp_path / f"ws-{name}", {name: path})
        peaks[name] = peak_rss_kib(sys.executable, "-m", "speechkit", "run", "l1", "--workspace", str(ws),
                                   "--out", str(tmp_path / f"run-{name}"), "--cache-dir", str(tmp_path / f"c-{name}"))
    assert json.loads((tmp_path / "run-hour" / "transcripts" / "hour.json").read_text()) == []
    assert peaks["hour"] - peaks["minute"] < HOUR_KIB / 5, peaks


def _vm_hwm_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+) kB", status, re.M).group(1))


def _upload(url: str, path: Path) -> tuple[int, dict]:
    body, content_type = encode_form([Part("model", b"whisper"), Part("file", path.read_bytes(), path.name,
                                                                      "audio/flac")])
    host, port = url.removeprefix("http://").removesuffix("/v1").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=300)
    try:
        connection.request("POST", "/v1/audio/transcriptions", body=body,
                           headers={"Content-Type": content_type, "Content-Length": str(len(body))})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the server's peak RSS from /proc")
def test_an_hour_of_silence_uploaded_to_serve_is_answered_in_flat_memory(silence, tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "speechkit", "serve", "--port", "0",
                                "--cache-dir", str(tmp_path / "cache")], cwd=tmp_path,
                               env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), process.stderr.read() if not url else url
        peaks = {}
        for name in ("minute", "hour"):
            status, answer = _upload(url, silence[name])
            assert (status, answer["text"]) == (200, ""), answer
            peaks[name] = _vm_hwm_kib(process.pid)
        assert peaks["hour"] - peaks["minute"] < HOUR_KIB / 5, peaks
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stdout.close()
        process.stderr.close()
    assert {p.name for p in tmp_path.iterdir()} == {"cache"}

