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

import pytest

from benchmarks.bench import CONFIGS, JFK, BenchOptions, run_bench
from speechkit.stages.asr.clips import pack_clips

pytestmark = pytest.mark.slow  # the benchmark itself, every configuration on the bench audio


def positive(x: object) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


@pytest.fixture(scope="module")
def bench(realdata: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("bench")
    jfk = realdata / "faster-whisper" / "jfk.flac"
    run_bench(BenchOptions(out=out, audio=jfk, repeats=1, lengths=(1,), realdata=realdata,
                           references=((jfk, JFK),), context=out / "workspace", progress=False))
    return out, json.loads((out / "bench.json").read_text())


@pytest.mark.decodes
def test_bench_json_has_ratios_sweep_and_machine(bench):
    _, report = bench
    ratios = report["ratios"]
    for name in ("asr_stage_vs_bare_sequential", "l1_cascade_vs_bare_sequential", "l2_cascade_vs_bare_sequential",
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
    assert ratios["l3_cascade_vs_bare_batched"] == pytest.approx(
        configs["l3_cascade"]["wall_s"] / configs["bare_batched"]["wall_s"], rel=0.01)
    assert ratios["peak_rss_l1_cascade_vs_bare_batched"] == pytest.approx(
        configs["l1_cascade"]["peak_rss_mb"] / configs["bare_batched"]["peak_rss_mb"], rel=0.01)
    targets = report["targets"]
    assert set(targets) == {"asr_stage_errors_at_most_bare_sequential", "l3_cascade_wall_at_most_1.2x_bare_batched",
                            "cascade_peak_rss_at_most_1.5x_bare_batched", "peak_rss_1x_at_most_1.3x_of_1x",
                            "wer_on_at_least_1500_words"}
    assert targets["wer_on_at_least_1500_words"] == {"value": 22, "met": False}  # JFK alone
    rss = targets["cascade_peak_rss_at_most_1.5x_bare_batched"]
    assert set(rss["by_config"]) == {"l1_cascade", "l2_cascade", "l3_cascade"}
    assert rss["value"] == max(rss["by_config"].values())


@pytest.mark.decodes
def test_every_configuration_ran_and_transcribed_jfk(bench):
    _, report = bench
    assert list(report["configs"]) == list(CONFIGS)
    for name, config in report["configs"].items():
        assert positive(config["wall_s"]) and positive(config["rtf"]) and positive(config["peak_rss_mb"]), name
        assert config["peak_rss_mb"] >= config["rss_after_load_mb"] > 0
        assert config["words"] >= 20, name  # JFK has 22 words
        # every configuration's WER measured on one CPU's AVX-512, AVX2 and generic paths: 0.0
        assert config["wer"]["reference_words"] == 22 and config["wer"]["value"] <= 0.05, name
    cascades = {n: set(c["stages"]) for n, c in report["configs"].items()}
    assert {"vad", "asr"} <= cascades["asr_stage"] and "diarize" not in cascades["asr_stage"]
    assert {"vad", "asr", "diarize", "identify"} <= cascades["l1_cascade"]
    assert {"context", "vad", "asr", "diarize", "identify"} <= cascades["l2_cascade"]
    assert {"context", "vad", "asr", "diarize", "identify"} <= cascades["l3_cascade"]
    assert not cascades["bare_sequential"] and not cascades["bare_batched"]
    for name in ("asr_stage", "l1_cascade", "l2_cascade", "l3_cascade"):  # the ASR step's decodings
        counts = report["configs"][name]["asr"]
        assert counts["windows"] >= 1 and report["configs"][name]["asr_references"]["windows"] >= 1, name
        assert counts["redecoded_verify"] == counts["biased_kept"] + counts["biased_dropped"] <= counts["windows"]
    assert not report["configs"]["bare_batched"]["asr"]


@pytest.mark.decodes
def test_bench_md_reports_the_ratios_and_the_machine(bench):
    out, report = bench
    text = (out / "bench.md").read_text()
    assert report["machine"]["cpu"] in text and "vs bare sequential" in text
    for name in CONFIGS:
        assert f"| {name} |" in text
    assert f"{report['ratios']['l3_cascade_vs_bare_sequential']:.2f}x" in text
    assert "vs bare batched" in text and f"{report['ratios']['l3_cascade_vs_bare_batched']:.2f}x" in text
    assert "| 1x | 11.0 |" in text
    assert "pooled over 22 reference words (faster-whisper/jfk.flac)" in text
    assert "| l2_cascade |" in text and "ASR step per configuration" in text
    [clip] = report["per_clip"]  # JFK: no timed reference, so no times for lost words
    assert clip["clip"] == "faster-whisper/jfk.flac" and clip["words"] == 22 and clip["lost_at"] == []
    assert clip["bare_errors"] == report["configs"]["bare_sequential"]["wer"]["errors"]
    assert clip["stage_errors"] == report["configs"]["asr_stage"]["wer"]["errors"]
    assert f"| faster-whisper/jfk.flac | 22 | {clip['bare_errors']} | {clip['stage_errors']} |" in text


def test_per_clip_comparison_says_where_the_stage_loses_words(realdata: Path):
    """Words the stage drops (here: one speaker turn of sample.wav, 14.4-17.8 s) are counted as
    lost, at the reference's times; words only bare gets wrong count as gained."""
    from benchmarks.bench import _per_clip
    from speechkit.io.stm import read_stm
    from speechkit.metrics.normalize import normalize
    clip = realdata / "pyannote-sample" / "sample.wav"
    segments = read_stm(clip.with_suffix(".stm"))["sample"].segments
    text = " ".join(s.text for s in segments)
    turn = next(s for s in segments if s.start == pytest.approx(14.444))
    stage = " ".join(s.text for s in segments if s is not turn)
    bare = " ".join(s.text for s in segments[1:])  # bare misses the first turn instead
    [row] = _per_clip(((clip, text),), [bare], [stage])
    words = lambda s: len(normalize(s.text).split())  # noqa: E731 (as WER counts them: "I'm" is two)
    assert row["lost"] == words(turn) == row["stage_errors"]
    assert row["gained"] == words(segments[0]) == row["bare_errors"]
    [(start, end)] = row["lost_at"]
    assert turn.start - 0.05 <= start <= end <= turn.end + 0.05  # (rounded to 0.1 s)


def test_default_wer_references_hold_at_least_1500_words(realdata: Path):
    from benchmarks.bench import MIN_WER_WORDS, default_references
    from speechkit.metrics.normalize import normalize
    references = default_references(realdata)
    words = sum(len(normalize(text).split()) for _, text in references)
    assert words >= MIN_WER_WORDS and len(references) == 8
    assert all(Path(clip).is_file() for clip, _ in references)
    assert len(default_references(realdata, demo=None)) == 2  # the real recordings alone: 109 words


def test_pack_clips_fills_windows_in_time_order():
    clips = [(0.0, 23.5), (30.0, 39.3), (40.0, 68.6), (70.0, 88.4), (90.0, 118.7), (120.0, 121.4)]
    windows = pack_clips(clips, 30.0)
    assert windows == [[0, 5], [1, 3], [2], [4]]
    assert all(sum(clips[i][1] - clips[i][0] for i in w) <= 30.0 for w in windows)
