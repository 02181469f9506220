"""The written meetings of a workspace, before any audio: the latent state with every act,
item and decision, and each meeting's turns (``write_script``).

The audio is rendered from this script (:mod:`speechkit.synth.writer`); each meeting's random
generator continues from its dialogue into its timeline and channel, so writing the script alone
gives the same dialogue and ``truth/`` acts as a full workspace of the same options, without TTS.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from speechkit.synth import dialogue
from speechkit.synth.acts import FamilyCycle
from speechkit.synth.options import SynthOptions
from speechkit.synth.state import LatentState, build_state


@dataclass
class Script:
    """The latent state after every meeting is written, each meeting's turns and the meeting's
    random generator as the dialogue left it (the timeline and channel draw from it next)."""

    state: LatentState
    turns: dict[str, list[dialogue.Turn]]
    rngs: dict[str, np.random.Generator]


def write_script(options: SynthOptions, voices: list[str]) -> Script:
    """Sample the latent state and write every meeting's dialogue in the options' language;
    ``voices``: the voice ids (the language's voices, :attr:`Language.voices`)."""
    lang = options.spoken_language
    state = build_state(options.seed, options.people, options.meetings, voices, options.difficulty,
                        options.projects, language=lang)
    state.phrasing = options.phrasing
    cycle = FamilyCycle(lang.families, options.phrasing,
                        np.random.default_rng(np.random.SeedSequence([options.seed, 0xFA])))
    cursors: dict = {}
    turns, rngs = {}, {}
    for plan in state.meetings:
        rng = np.random.default_rng(plan.seed)
        turns[plan.id] = dialogue.write_meeting(state, plan, options.minutes_of(plan.kind), rng, cursors, cycle, lang)
        rngs[plan.id] = rng
    return Script(state, turns, rngs)
