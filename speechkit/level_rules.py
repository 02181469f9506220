"""The rules of the context levels: speechkit's, or the OSynth paper's as written (``context.rules``).

speechkit's levels are stricter than the paper's in some places and kinder in others (docs/systems.md,
"Level rules"). A user reproducing the paper's figures needs its rules; a user evaluating their own
system needs speechkit's. Each rule set is one :class:`LevelRules` row, which
:func:`speechkit.context.build_context` consults; nothing else branches on the name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RuleSet = Literal["speechkit", "paper"]


@dataclass(frozen=True)
class LevelRules:
    """What the levels give a cascade, beyond the streams every rule set shares.

    ``invite_speaker_count``: at L3 the invite's size is the diarizer's speaker count.
    ``enrollments``: whose voice enrollments L3 gives: the meeting's ``invited`` or every ``enrolled`` person.
    ``voice_memory``: at L2 and up the earlier meetings' speaker centroids keep a voice's name or label.
    ``identify_every_level``: identification is asked at L1 and L2 too, without enrollments (a
    backend that can name a voice without them, ``identify: chat``, may invent names, which can repeat).
    ``lm_every_level``: the CTC recognizer's n-gram is there at every level, built from a general
    English word list (never the workspace's text), the same at every level; the workspace's and the
    system's own text go to no n-gram.
    ``turn_guards``: each corrected turn must pass the guards (:mod:`speechkit.stages.correct.guards`);
    without them a batch whose answer has the wrong length is the only rewrite rejected.
    """

    invite_speaker_count: bool
    enrollments: Literal["invited", "enrolled"]
    voice_memory: bool
    identify_every_level: bool
    lm_every_level: bool
    turn_guards: bool


RULES: dict[str, LevelRules] = {
    "speechkit": LevelRules(invite_speaker_count=True, enrollments="invited", voice_memory=True,
                            identify_every_level=False, lm_every_level=False, turn_guards=True),
    # Section 4.2 and Appendix V of the OSynth paper.
    "paper": LevelRules(invite_speaker_count=False, enrollments="enrolled", voice_memory=False,
                        identify_every_level=True, lm_every_level=True, turn_guards=False),
}


def level_rules(name: str) -> LevelRules:
    """The rules named ``name`` (``context.rules``, checked when the recipe is loaded)."""
    return RULES[name]
