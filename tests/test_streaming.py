"""Streaming: recordings read in blocks of spans give what the whole recording held in memory gives."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechkit.cascade import Cascade
from speechkit.core.audio import GRID_S, load_audio, read_spans, span_blocks
from speechkit.recipe import load_recipe
from speechkit.stages.diarize.embedding import sliding_windows


def test_speech_blocks_group_the_speech_on_the_grid():
    speech = [(0.3, 5.0), (5.2, 40.0), (41.0, 100.0), (100.05, 130.0), (200.0, 205.0)]
    blocks = span_blocks(speech, block_s=60.0)
    assert [r for _, _, regions in blocks for r in regions] == speech
    assert [len(regions) for _, _, regions in blocks] == [2, 1, 1, 1]  # 41-100 fits no neighbour
    for start, end, regions in blocks:
        assert start <= regions[0][0] - 0.49 or start == 0.0
        assert end == regions[-1][1] + 0.5
        assert regions[-1][1] - regions[0][0] <= 60.0 or len(regions) == 1
        assert abs(start / GRID_S - round(start / GRID_S)) < 1e-6  # on the 10 ms grid
    # widened evenly to at least min_s (cut at the recording's start), still on the grid
    assert span_blocks([(100.0, 103.0), (1.0, 2.0)], block_s=30.0, min_s=30.0) == [
        (0.0, 16.5, [(1.0, 2.0)]), (86.5, 116.5, [(100.0, 103.0)])]
    assert span_blocks(speech, block_s=60.0, min_s=30.0)[1:3] == blocks[1:3]  # longer already


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
    record = cascade.record(path)
    speech = cascade.run_stage("vad", record).regions
    diarizer = cascade.stage("diarize").backend
    windows = sliding_windows(speech, diarizer.options.window_s, diarizer.options.step_s)
    assert len(span_blocks(windows, diarizer.options.embed_block_s)) >= 2  # really streamed
    streamed = cascade.run_stage("diarize", record)
    whole = diarizer(audio, speech)
    assert len(whole.speakers) >= 2  # several speakers: the clustering really sees every block
    assert [(t.start, t.end, t.speaker) for t in streamed.turns] == [(t.start, t.end, t.speaker) for t in whole.turns]
