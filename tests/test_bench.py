"""The benchmark harness on a few seconds of real speech, and the streaming it measures.

The harness runs every configuration once (repeats=1, lengths=1) on JFK; no timing is asserted,
only the structure of bench.json/bench.md and that the figures are positive finite numbers.
The streaming tests check that reading a recording block by block gives the samples and the
speaker embeddings of the whole recording.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechkit.asr.whisper import pack_clips
from speechkit.audio import load_audio
from speechkit.bench import CONFIGS, JFK, BenchOptions, run_bench
from speechkit.cascade import EMBED_BLOCK_S, GRID_S, Cascade, read_spans, speech_blocks
from speechkit.diarize import sliding_windows
from speechkit.recipe import load_recipe


def positive(x: object) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


@pytest.fixture(scope="module")
def bench(realdata: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("bench")
    jfk = realdata / "faster-whisper" / "jfk.flac"
    run_bench(BenchOptions(out=out, audio=jfk, repeats=1, lengths=(1,), realdata=realdata,
                           references=((jfk, JFK),), context=out / "workspace", progress=False))
    return out, json.loads((out / "bench.json").read_text())


def test_bench_json_has_ratios_sweep_and_machine(bench):
    _, report = bench
    ratios = report["ratios"]
    for name in ("asr_stage_vs_bare_sequential", "l1_cascade_vs_bare_sequential",
                 "l3_cascade_vs_bare_sequential", "bare_batched_vs_bare_sequential", "peak_rss_longest_vs_1x"):
        assert positive(ratios[name]), name
    configs = report["configs"]
    assert ratios["l3_cascade_vs_bare_sequential"] == pytest.approx(
        configs["l3_cascade"]["wall_s"] / configs["bare_sequential"]["wall_s"], rel=0.01)
    [entry] = report["length_sweep"]
    assert entry["audio_s"] == pytest.approx(11.0, abs=0.05)
    assert positive(entry["wall_s"]) and positive(entry["peak_rss_mb"])
    assert report["l3_context"]["enrolled_people"] == 2 and report["l3_context"]["hotwords"] > 0
    machine = report["machine"]
    assert machine["cores"] >= 1 and machine["threads"] >= 1 and machine["cpu"]
    assert set(report["targets"]) == {"l3_cascade_at_most_1.5x_bare_sequential",
                                      "asr_stage_at_least_as_fast_at_no_worse_wer",
                                      "peak_rss_1x_at_most_1.3x_of_1x"}


def test_every_configuration_ran_and_transcribed_jfk(bench):
    _, report = bench
    assert list(report["configs"]) == list(CONFIGS)
    for name, config in report["configs"].items():
        assert positive(config["wall_s"]) and positive(config["rtf"]) and positive(config["peak_rss_mb"]), name
        assert config["peak_rss_mb"] >= config["rss_after_load_mb"] > 0
        assert config["words"] >= 20, name  # JFK has 22 words
        assert config["wer"]["reference_words"] == 22 and config["wer"]["value"] <= 0.05, name
    cascades = {n: set(c["stages"]) for n, c in report["configs"].items()}
    assert {"vad", "asr"} <= cascades["asr_stage"] and "diarize" not in cascades["asr_stage"]
    assert {"vad", "asr", "diarize", "identify"} <= cascades["l1_cascade"]
    assert {"context", "vad", "asr", "diarize", "identify"} <= cascades["l3_cascade"]
    assert not cascades["bare_sequential"] and not cascades["bare_batched"]


def test_bench_md_reports_the_ratios_and_the_machine(bench):
    out, report = bench
    text = (out / "bench.md").read_text()
    assert report["machine"]["cpu"] in text and "vs bare sequential" in text
    for name in CONFIGS:
        assert f"| {name} |" in text
    assert f"{report['ratios']['l3_cascade_vs_bare_sequential']:.2f}x" in text
    assert "| 1x | 11.0 |" in text


def test_speech_blocks_group_the_speech_on_the_grid():
    speech = [(0.3, 5.0), (5.2, 40.0), (41.0, 100.0), (100.05, 130.0), (200.0, 205.0)]
    blocks = speech_blocks(speech, block_s=60.0)
    assert [r for _, _, regions in blocks for r in regions] == speech
    assert [len(regions) for _, _, regions in blocks] == [2, 1, 1, 1]  # 41-100 fits no neighbour
    for start, end, regions in blocks:
        assert start <= regions[0][0] - 0.49 or start == 0.0
        assert end == regions[-1][1] + 0.5
        assert regions[-1][1] - regions[0][0] <= 60.0 or len(regions) == 1
        assert abs(start / GRID_S - round(start / GRID_S)) < 1e-6  # on the 10 ms grid


def test_read_spans_gives_the_samples_of_the_whole_recording(realdata: Path):
    path = realdata / "pyannote-sample" / "sample.wav"
    whole = load_audio(path)
    spans = [(0.0, 0.25), (3.3, 12.01), (12.01, 12.5), (12.2, 13.0), (20.0, 29.99), (29.99, 35.0)]
    for (start, end), got in zip(spans, read_spans(path, spans), strict=True):
        np.testing.assert_array_equal(got, whole[round(start * 16000):round(end * 16000)])
    with pytest.raises(ValueError, match="sorted"):
        list(read_spans(path, [(5.0, 6.0), (4.0, 7.0)]))


def test_streamed_diarization_equals_whole_recording_diarization(realdata: Path, tmp_path: Path):
    """The cascade embeds the windows of a long recording a block at a time; the speaker turns
    must be those of the diarizer run on the whole recording held in memory."""
    parts = [load_audio(realdata / "pyannote-sample" / "sample.wav")] + [
        load_audio(realdata / "ami-debug" / f"{n}.wav") for n in ("trn06", "trn09")]
    gap = np.zeros(2 * 16000, np.float32)
    audio = np.concatenate([parts[0], gap, parts[1], gap, parts[2]])
    path = tmp_path / "joined.wav"
    sf.write(path, audio, 16000, subtype="FLOAT")
    cascade = Cascade(load_recipe("l1").with_overrides(device="cpu"))
    vad = cascade._vad(path, None, {})
    speech = [tuple(r) for r in vad["regions"]]
    diarizer = cascade._stage("diarize")
    windows = sliding_windows(speech, diarizer.window_s, diarizer.step_s)
    assert len(speech_blocks(windows, EMBED_BLOCK_S)) >= 2  # really streamed
    streamed = cascade._diarize(path, speech, vad["level_dbfs"], None, None, {})
    whole = diarizer(audio, speech)
    assert len(whole.speakers) >= 3
    assert [(t["start_time"], t["end_time"], t["speaker"]) for t in streamed["turns"]] == \
        [(t.start, t.end, t.speaker) for t in whole.turns]


def test_pack_clips_fills_windows_in_time_order():
    clips = [(0.0, 23.5), (30.0, 39.3), (40.0, 68.6), (70.0, 88.4), (90.0, 118.7), (120.0, 121.4)]
    windows = pack_clips(clips, 30.0)
    assert windows == [[0, 5], [1, 3], [2], [4]]
    assert all(sum(clips[i][1] - clips[i][0] for i in w) <= 30.0 for w in windows)
