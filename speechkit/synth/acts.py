"""Dialogue acts and their phrasing families, the fixed tuned / held-out split, and how a
meeting picks a family.

An **act** is one thing a meeting does (a request, a decision, a number stated...). A
**family** is one way of realising an act: a fixed sequence of lines, each said by a role
(``host``, ``who``, ``alt``...), some spread over two or more turns and speakers, some with a
part said later in the meeting (after :data:`LATER`). Each family has an id
(``<act>.<name>``) and belongs to one split, ``tuned`` or ``held-out``, fixed in the family
tables (:mod:`speechkit.synth.families`): rule-based components may be developed on ``tuned``
only, and a ``--phrasing held-out`` workspace measures how much they lean on it.

Templates are rendered by :func:`speechkit.synth.dialogue.render`: ``{slot}`` tokens, and
``[word]`` tokens for disfluencies (said and transcribed verbatim, absent from the canonical
form). A role starting with ``~`` starts speaking before the previous line ends (an
interruption, overlapped in the mix). Which slots a family's templates use decides whether it
fits a moment: a family whose roles or slots the moment cannot fill is skipped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

#: The acts, in the order docs/synth.md describes them.
ACTS = ("greeting", "small_talk", "status", "request", "volunteer", "absent", "follow_up", "decision",
        "number", "question", "aside", "closing")
SPLITS = ("tuned", "held-out")
PHRASINGS = ("tuned", "held-out", "all")
#: A line that separates what is said now from what is said later in the meeting (a topic return).
LATER = ("", "")

_SLOT = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Family:
    """One phrasing family of an act.

    ``lines``: ``(role, template)`` pairs in order (:data:`LATER` splits off a later part).
    ``corrects``: the field the family states twice, the second time for good (``due``,
    ``choice``, ``number``; "" for none): the first version is in the ``*0`` slot
    (``{d0}``, ``{c0}``, ``{n0}``). ``owner``: the role that ends up owning the action item
    (request-like acts). ``asked``: whether somebody asked for the item (False: self-assigned).
    ``outcome``: for follow-ups, ``done`` (the item is closed) or ``open``.
    """

    id: str
    split: str
    lines: tuple[tuple[str, str], ...]
    corrects: str = ""
    owner: str = "who"
    asked: bool = True
    outcome: str = ""
    roles: frozenset[str] = field(init=False)
    slots: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"family {self.id}: split must be one of {SPLITS}, got {self.split!r}")
        roles = {role.lstrip("~") for role, _ in self.lines if role}
        slots = {s for _, text in self.lines for s in _SLOT.findall(text)}
        object.__setattr__(self, "roles", frozenset(roles | {self.owner}))
        object.__setattr__(self, "slots", frozenset(slots))

    @property
    def act(self) -> str:
        return self.id.split(".")[0]

    def fits(self, roles: set[str], slots: set[str]) -> bool:
        """Whether the moment has every role and slot the family needs."""
        return self.roles <= roles and self.slots <= slots


@dataclass
class ActRecord:
    """How one act was realised (``truth/state.json`` ``acts[]``, docs/synth.md).

    ``lines``: each turn the family wrote, ``{"speaker", "text"}`` (canonical text);
    ``target``: the action item, decision or number term it concerns ("" for none);
    ``correction``: ``{"field", "first", "final"}`` when the family corrected itself.
    """

    id: str
    meeting: str
    act: str
    family: str
    split: str
    target: str = ""
    lines: list[dict] = field(default_factory=list)
    correction: dict | None = None


class FamilyCycle:
    """Picks families for a workspace: per act, the families of the chosen phrasing in a
    shuffled cycle (reshuffled when used up), so a workspace spreads its acts over all of them."""

    def __init__(self, families: dict[str, tuple[Family, ...]], phrasing: str, rng: np.random.Generator) -> None:
        if phrasing not in PHRASINGS:
            raise ValueError(f"phrasing must be one of {', '.join(PHRASINGS)}, got {phrasing!r}")
        self.pool = {act: tuple(f for f in fams if phrasing == "all" or f.split == phrasing)
                     for act, fams in families.items()}
        self.rng = rng
        self.queue: dict[str, list[Family]] = {}

    def next(self, act: str, roles: set[str], slots: set[str]) -> Family | None:
        """The next family of ``act`` in the cycle that fits (None: none of them fits)."""
        fitting = [f for f in self.pool[act] if f.fits(roles, slots)]
        if not fitting:
            return None
        queue = self.queue.setdefault(act, [])
        if not any(f in fitting for f in queue):
            pool = self.pool[act]
            queue.extend(pool[i] for i in self.rng.permutation(len(pool)))
        family = next(f for f in queue if f in fitting)
        queue.remove(family)
        return family
