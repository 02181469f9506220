"""The cognitive-demand scoreboard: which demands to probe next, by UCB, and which are dead.

Each demand ``d`` has ``k_d`` judged probes; a finding earns 1, a near miss ``near_miss_weight``
(half credit), a hard negative 0, and ``mu_d`` is the mean reward. With ``N`` judged probes in
all, ``UCB(d) = mu_d + c * sqrt(ln N / k_d)`` (paper 000_, c = 1.0); an untested demand scores
infinity, so every demand is tried before any is tried twice; among equal scores the demand
with fewer probes started (judged or not: a question the self-verifier rejects is started but
not judged) comes first, then the given order. A demand with ``dead_after`` judged probes and no
finding is *dead* and never picked again.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from speechkit.steps.probe.labels import Label


@dataclass
class DemandRecord:
    """The probes of one demand: started, judged (``tests``), findings and near misses."""

    started: int = 0
    tests: int = 0
    findings: int = 0
    near_misses: int = 0


@dataclass
class Scoreboard:
    """The demands in their given order (ties go to the earlier one) and their records."""

    demands: Sequence[str]
    c: float = 1.0
    near_miss_weight: float = 0.5
    dead_after: int = 4
    records: dict[str, DemandRecord] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for d in self.demands:
            self.records.setdefault(d, DemandRecord())

    @property
    def total(self) -> int:
        """``N``: judged probes over all demands."""
        return sum(r.tests for r in self.records.values())

    def start(self, demand: str) -> None:
        """Count one probe of ``demand`` started."""
        self.records[demand].started += 1

    def record(self, demand: str, outcome: Label) -> None:
        """Count one judged probe of ``demand`` with its label."""
        r = self.records[demand]
        r.tests += 1
        r.findings += outcome == "finding"
        r.near_misses += outcome == "near-miss"

    def mean(self, demand: str) -> float:
        """``mu_d``: the mean reward (0 before any test)."""
        r = self.records[demand]
        return (r.findings + self.near_miss_weight * r.near_misses) / r.tests if r.tests else 0.0

    def ucb(self, demand: str) -> float:
        """``mu_d + c * sqrt(ln N / k_d)``; infinity for an untested demand."""
        r = self.records[demand]
        if r.tests == 0:
            return math.inf
        return self.mean(demand) + self.c * math.sqrt(math.log(self.total) / r.tests)

    def dead(self, demand: str) -> bool:
        """Whether ``demand`` has ``dead_after`` tests or more and no finding."""
        r = self.records[demand]
        return r.tests >= self.dead_after and r.findings == 0

    def alive(self) -> list[str]:
        """The demands still picked, in their given order."""
        return [d for d in self.demands if not self.dead(d)]

    def pick(self, k: int) -> list[str]:
        """The ``k`` demands to probe next: the live ones by UCB, highest first (ties: fewer probes
        started first, then the given order), repeated in that order when fewer than ``k`` are
        alive; empty when all are dead."""
        alive = self.alive()
        ranked = sorted(alive, key=lambda d: (-self.ucb(d), self.records[d].started, alive.index(d)))
        return [ranked[i % len(ranked)] for i in range(k)] if ranked else []

    def as_dict(self) -> dict[str, Any]:
        """Per demand: probes started, tests, findings, near misses, mean reward, UCB (None:
        untested) and whether dead."""
        return {d: {"started": r.started, "tests": r.tests, "findings": r.findings, "near_misses": r.near_misses,
                    "mean": round(self.mean(d), 4),
                    "ucb": None if math.isinf(self.ucb(d)) else round(self.ucb(d), 4), "dead": self.dead(d)}
                for d, r in self.records.items()}
