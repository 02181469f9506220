"""Synthetic workspaces with an exact latent state (see docs/synth.md).

``synthesize_workspace(out, SynthOptions(seed=...))`` samples a latent state, writes meetings
from it in three forms (canonical, verbatim, TTS), synthesises them offline with distinct
voices, mixes them with gaps, overlaps and backchannels under a room/noise/remote channel,
and writes audio, references, enrollments, artifacts and the manifest.
"""
from speechkit.synth.options import SynthOptions
from speechkit.synth.writer import synthesize_workspace

__all__ = ["SynthOptions", "synthesize_workspace"]
