"""The CTC L3 recipe end to end with a test-built acoustic model: its correction never raises WER.

No English CTC weights ship in packages, so the acoustic model is the randomly initialised
wav2vec2 of tests/test_asr_ctc.py: its transcripts are near-garbage (WER close to 1), which is the
regime where the paper's LLM post-corrector deleted a quarter of the words. The constrained
corrector must leave such input no worse.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from speechkit.io.manifest import load_workspace
from speechkit.recipe import load_recipe
from speechkit.runner import run_workspace


@pytest.fixture(scope="module")
def ctc_runs(tiny_model, make_real_workspace, tmp_path_factory):
    """The ctc-l3 recipe without and with its correct stage, into one folder (the stages before
    correction come from the cache the first run filled, so both correct the same transcripts)."""
    ws = load_workspace(make_real_workspace(tmp_path_factory.mktemp("ws")))
    out = tmp_path_factory.mktemp("run")
    recipe = load_recipe("ctc-l3").with_overrides(model=str(tiny_model), device="cpu")
    uncorrected = replace(recipe, stages={k: v for k, v in recipe.stages.items() if k != "correct"})
    return {"uncorrected": run_workspace(uncorrected, ws, out, progress=False),
            "corrected": run_workspace(recipe, ws, out, progress=False)}


def test_l3_correction_never_raises_wer_on_garbage_asr(ctc_runs):
    before, after = (ctc_runs[k].scores["aggregate"]["wer"]["value"] for k in ("uncorrected", "corrected"))
    assert before > 0.5  # a random acoustic model: the high-WER regime of the paper's Appendix V
    assert after <= before
    words = {k: sum(len(s.text.split()) for r in run.results.values() for s in r.transcript.segments)
             for k, run in ctc_runs.items()}
    assert words["corrected"] >= 0.9 * words["uncorrected"]  # no silent summarisation
    assert all(r.summaries.get("correct") for r in ctc_runs["corrected"].results.values())  # it ran on every meeting
