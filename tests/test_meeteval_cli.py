"""meeteval's own command line runs in the environment and agrees with speechkit's cpWER."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from speechkit.io.stm import read_stm, write_stm
from speechkit.metrics.cpwer import cpwer
from speechkit.metrics.normalize import normalize
from speechkit.transcript import Transcript

MEETEVAL_WER = Path(sys.executable).parent / "meeteval-wer"


def _cpwer_cli(ref: Path, hyp: Path, out: Path) -> dict:
    """``meeteval-wer cpwer`` as a user runs it, its output files in ``out`` (not beside ``hyp``)."""
    done = subprocess.run([str(MEETEVAL_WER), "cpwer", "-r", str(ref), "-h", str(hyp),
                           "--average-out", str(out / "average.json"), "--per-reco-out", str(out / "per_reco.json")],
                          cwd=out, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((out / "average.json").read_text())


def test_meeteval_wer_cpwer_runs_and_matches_speechkit(realdata, tmp_path):
    ref_path = realdata / "pyannote-sample" / "sample.stm"
    (tmp_path / "same").mkdir()
    same = _cpwer_cli(ref_path, ref_path, tmp_path / "same")  # the command as a user first tries it
    assert same["error_rate"] == 0 and same["length"] > 50

    # speechkit normalises words before meeteval sees them ("didn't" -> "did not"); the files given
    # to the command line hold the normalised words, so both must count the same errors
    ref = read_stm(ref_path)["sample"]
    ref = Transcript("sample", [type(s)(s.start, s.end, s.speaker, " ".join(normalize(s.text))) for s in ref.segments])
    # a system that swapped the callers' labels after the first two turns (both given to Diane)
    # and dropped the last word of every fifth segment: deletions and speaker confusions
    segments = []
    for i, seg in enumerate(ref.segments):
        words = seg.text.split()
        text = " ".join(words[:-1]) if i % 5 == 0 and len(words) > 1 else seg.text
        speaker = {"Diane": "Sheila", "Sheila": "Diane"}[seg.speaker] if i > 1 else "Diane"
        segments.append(type(seg)(seg.start, seg.end, speaker, text))
    write_stm(tmp_path / "ref.stm", [ref])
    write_stm(tmp_path / "hyp.stm", [Transcript("sample", segments)])
    (tmp_path / "pair").mkdir()
    theirs = _cpwer_cli(tmp_path / "ref.stm", tmp_path / "hyp.stm", tmp_path / "pair")
    ours = cpwer(read_stm(tmp_path / "ref.stm")["sample"], read_stm(tmp_path / "hyp.stm")["sample"])
    assert theirs["errors"] > 0  # the edits are seen
    assert (theirs["errors"], theirs["length"]) == (ours.errors, ours.length)
    assert (theirs["substitutions"], theirs["deletions"], theirs["insertions"]) == \
        (ours.substitutions, ours.deletions, ours.insertions)
