"""What a judged probe is: a finding, a near miss or a hard negative, and whether it is severe.

The judge scores an answer's faithfulness and completeness from 1 to 5 (paper 000_, MARC); the
label depends on the lower of the two:

| lower score | label | severe |
|---|---|---|
| 1, 2 | ``finding`` | yes |
| 3 | ``finding`` | no |
| 4 | ``near-miss`` | no |
| 5 | ``hard-negative`` | no |
"""
from __future__ import annotations

from typing import Literal

Label = Literal["finding", "near-miss", "hard-negative"]
#: A probe whose lower score is at most this is a finding (the paper's theta).
FINDING_MAX = 3
#: A probe whose lower score is this is a near miss.
NEAR_MISS = 4
#: A finding whose lower score is at most this is severe.
SEVERE_MAX = 2
SCORES = (1, 2, 3, 4, 5)


def label(faithfulness: int, completeness: int) -> Label:
    """The label of a probe scored ``faithfulness`` and ``completeness`` (each 1-5)."""
    for score in (faithfulness, completeness):
        if score not in SCORES:
            raise ValueError(f"a score is a whole number from 1 to 5, got {score!r}")
    low = min(faithfulness, completeness)
    if low <= FINDING_MAX:
        return "finding"
    return "near-miss" if low == NEAR_MISS else "hard-negative"


def severe(faithfulness: int, completeness: int) -> bool:
    """Whether a probe scored so is a severe finding (lower score at most :data:`SEVERE_MAX`)."""
    return min(faithfulness, completeness) <= SEVERE_MAX
