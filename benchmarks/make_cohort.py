"""Regenerate the bundled impostor cohort for identification score normalisation.

    .venv/bin/python benchmarks/make_cohort.py [--data ../shared/realdata] [--out speechkit/data/cohort-resemblyzer.npy]

One Resemblyzer embedding (float16, 256 values) per real speaker that the identification
evaluation does not use: each participant of AMI excerpts trn04, trn05, trn06 and trn09 of
``ami-debug`` with at least 0.5 s of solo speech (their solo speech joined, embedded once, as
enrollment does), the two callers of the pyannote sample (same rule), and the three voices of
faster-whisper's clips (jfk.flac, each channel of stereo_diarization.wav). The identification
pairs (trn00/trn01/trn03, trn07/trn08) and the synthetic demo voices stay out.
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_real import DEFAULT_DATA, ROOT, load_recordings, solo_segments

COHORT_EXCERPTS = ("trn04", "trn05", "trn06", "trn09", "sample")


def build(data: Path = DEFAULT_DATA, min_solo_s: float = 0.5) -> tuple[np.ndarray, list[str]]:
    import soundfile as sf

    from speechkit.core.audio import load_audio
    from speechkit.stages.diarize.embedders import make_embedder

    embedder = make_embedder("resemblyzer", device="cpu")
    rows, names = [], []
    for rec in load_recordings(data, demo=False):
        if rec.name not in COHORT_EXCERPTS:
            continue
        audio = np.asarray(load_audio(rec.audio), dtype=np.float32)
        solo: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for s, e, spk in solo_segments(rec.reference, rec.uem[1]):
            solo[spk].append((s, e))
        for spk in sorted(solo):
            if sum(e - s for s, e in solo[spk]) >= min_solo_s:
                clip = np.concatenate([audio[int(s * 16000):int(e * 16000)] for s, e in solo[spk]])
                rows.append(embedder.embed(clip))
                names.append(f"{rec.name}:{spk}")
    fw = data / "faster-whisper"
    x, sr = sf.read(fw / "jfk.flac", dtype="float32")
    rows.append(embedder.embed(x if x.ndim == 1 else x.mean(axis=1), sr))
    names.append("jfk")
    x, sr = sf.read(fw / "stereo_diarization.wav", dtype="float32")
    for c in range(x.shape[1]):
        rows.append(embedder.embed(np.ascontiguousarray(x[:, c]), sr))
        names.append(f"stereo_diarization:{c}")
    return np.stack(rows).astype(np.float16), names


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--out", type=Path, default=ROOT / "speechkit" / "data" / "cohort-resemblyzer.npy")
    args = p.parse_args()
    cohort, names = build(args.data)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.save(args.out, cohort)
    print(f"wrote {args.out}: {cohort.shape[0]} speakers x {cohort.shape[1]} ({args.out.stat().st_size} bytes): "
          + ", ".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
