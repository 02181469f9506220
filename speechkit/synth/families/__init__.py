"""The phrasing families of every act (:mod:`speechkit.synth.acts`), by act.

The tables are data: :mod:`.items` (request, volunteer, absent, follow_up), :mod:`.decisions`
(decision), :mod:`.talk` (greeting, small_talk, status, number, question, aside, closing) in
English; :mod:`.zh` and :mod:`.ja` the Chinese and Japanese families of every act (written in
those languages, not translated template by template). In every language, every act has at
least eight families and at least four in each split; ids are unique.
"""

from __future__ import annotations

from speechkit.synth.acts import ACTS, SPLITS, Family
from speechkit.synth.families import decisions, items, ja, talk, zh

MIN_FAMILIES = 8
MIN_PER_SPLIT = 4


def _table(every: tuple[Family, ...]) -> dict[str, tuple[Family, ...]]:
    ids = [f.id for f in every]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate family ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    table = {act: tuple(f for f in every if f.act == act) for act in ACTS}
    for act, fams in table.items():
        counts = {s: sum(f.split == s for f in fams) for s in SPLITS}
        if len(fams) < MIN_FAMILIES or min(counts.values()) < MIN_PER_SPLIT:
            raise ValueError(
                f"act {act}: {len(fams)} families {counts}; need {MIN_FAMILIES}, {MIN_PER_SPLIT} per split"
            )
    return table


#: act -> its families (tables checked on import).
FAMILIES: dict[str, tuple[Family, ...]] = _table((*items.FAMILIES, *decisions.FAMILIES, *talk.FAMILIES))
#: language -> act -> its families, for the languages other than English.
LANGUAGE_FAMILIES: dict[str, dict[str, tuple[Family, ...]]] = {"zh": _table(zh.FAMILIES), "ja": _table(ja.FAMILIES)}


def family(family_id: str) -> Family:
    """The family with this id."""
    return next(f for fams in FAMILIES.values() for f in fams if f.id == family_id)
