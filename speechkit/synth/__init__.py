"""Synthetic workspaces with an exact latent state (see docs/synth.md).

``synthesize_workspace(out, SynthOptions(seed=...))`` samples a latent state, writes meetings
from it as sequences of dialogue acts, each realised by a phrasing family of the chosen split
(:mod:`speechkit.synth.acts`), in three forms (canonical, verbatim, TTS), synthesises them
offline with distinct voices, mixes them with gaps, overlaps, interruptions and backchannels
under a room/noise/remote channel, and writes audio, references, enrollments, artifacts and the
manifest. :func:`speechkit.synth.script.write_script` writes the same meetings as text only.
"""
from speechkit.synth.options import SynthOptions
from speechkit.synth.writer import synthesize_workspace

__all__ = ["SynthOptions", "synthesize_workspace"]
