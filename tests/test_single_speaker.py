"""One voice stays one speaker: the real single-speaker clips are not split (issue 25, item 9),
while two real callers are still told apart."""
from __future__ import annotations

import json

import numpy as np
import pytest

from speechkit.cli import main
from speechkit.core.audio import load_audio
from speechkit.stages import make_backend
from speechkit.stages.diarize.clustering import null_silhouette, silhouette_ahc

# the one-speaker clips of the real recordings (their README): file, channel
ONE_SPEAKER = [("faster-whisper/jfk.flac", None), ("faster-whisper/hotwords.mp3", None),
               ("faster-whisper/stereo_diarization.wav", 0), ("faster-whisper/stereo_diarization.wav", 1)]


@pytest.fixture(scope="module")
def diarize():
    vad, diarizer = make_backend("vad", "silero"), make_backend("diarize", "embedding")
    return lambda audio: diarizer(audio, vad(audio))


@pytest.mark.parametrize("clip, channel", ONE_SPEAKER)
def test_a_single_real_voice_is_one_speaker(realdata, diarize, clip, channel):
    turns = diarize(load_audio(realdata / clip, channel=channel)).turns
    assert turns and {t.speaker for t in turns} == {"SPEAKER_00"}


def test_two_real_callers_are_still_two(realdata, diarize):
    turns = diarize(load_audio(realdata / "pyannote-sample" / "sample.wav")).turns
    assert len({t.speaker for t in turns}) == 2


@pytest.mark.decodes
def test_transcribe_jfk_gives_one_speaker(realdata, tmp_path, capsys):
    assert main(["transcribe", str(realdata / "faster-whisper" / "jfk.flac"), "--out", str(tmp_path)]) == 0
    segments = json.loads((tmp_path / "jfk.json").read_text())
    assert {s["speaker"] for s in segments} == {"SPEAKER_00"} and "country" in segments[-1]["words"]


def test_the_one_voice_reference_separates_clusters_from_one_cloud():
    """Two tight clusters beat their one-Gaussian reference; one cloud cut in two does not, though
    its best cut's silhouette can pass a fixed floor; the reference is seeded."""
    rng = np.random.default_rng(1)
    centre = rng.standard_normal(32)
    one = centre + 0.5 * rng.standard_normal((14, 32))
    two = np.concatenate([centre + 0.1 * rng.standard_normal((10, 32)),
                          -centre + 0.1 * rng.standard_normal((10, 32))])
    ks = range(2, 7)
    assert null_silhouette(one, ks) == null_silhouette(one, ks)
    assert len(np.unique(silhouette_ahc(two, min_silhouette=0.0))) == 2
    assert len(np.unique(silhouette_ahc(one, min_silhouette=0.0))) == 1
    assert len(np.unique(silhouette_ahc(one, min_silhouette=0.0, null_draws=0))) > 1  # the floor alone splits it
