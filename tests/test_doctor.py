"""speechkit doctor reports what is installed and how to fix what is not."""
from __future__ import annotations

from speechkit.cli import main


def test_doctor_passes_on_a_set_up_machine(capsys):
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "[ok ] faster-whisper" in out and "[ok ] whisper-tiny.en" in out and "[ok ] ffmpeg" in out
    assert "speechkit models fetch whisper-large-v3" in out  # an optional hub model, absent offline


def test_doctor_names_a_missing_tool_and_its_fix(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no ffmpeg on PATH
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "[MISSING] ffmpeg" in out and "fix: apt-get install -y ffmpeg" in out
    assert "missing (required): ffmpeg, ffprobe" in out


def test_doctor_says_which_backends_are_usable_here(capsys, offline_models):
    main(["doctor"])
    out = capsys.readouterr().out
    section = out.split("\nbackends\n", 1)[1].split("\n\n", 1)[0]
    assert "[ok ] asr whisper" in section and "[ok ] correct llm" in section
    assert "[absent ] asr ctc" in section and "model wav2vec2-base-960h not on this machine" in section
    assert "fix: speechkit models fetch wav2vec2-base-960h" in section
    assert "[absent ] diarize pyannote" in section
