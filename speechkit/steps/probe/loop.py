"""The Evaluation-as-Search loop over one meeting (paper 000_), and its options.

Each iteration, while the iteration count, the token budget and the live demands last:

1. the strategy picks ``questions_per_iteration`` (K) demands: ``ucb`` by UCB from the
   scoreboard (:mod:`.scoreboard`), ``random`` (the paper's random-probing baseline) uniformly at
   random from all the demands, with replacement, from a generator seeded by the run's seed and
   the meeting (the same picks every time), and with no demand ever dropped;
2. per demand, the probe reads the next part of the meeting (:meth:`.MeetingMaterial.part`: the
   parts in turn, so the whole transcript is probed); the generator writes a question and the
   self-verifier checks it; a question that fails gets one replacement (from another stretch of
   the part), and a replacement that fails too drops the probe (``status`` ``unverified``);
3. the novelty filter drops a question above ``novelty_threshold`` to an earlier one
   (``not-novel``; :mod:`.novelty`);
4. the system under test answers from its own output and the judge scores the answer
   (:mod:`.roles`), which labels the probe (:mod:`.labels`);
5. the iteration's judged probes go into the scoreboard.

A request that fails or an answer that is not what was asked ends that probe (``status``
``failed``, with the role and reason). The token budget is checked before every probe, so a
probe started finishes and the budget is overrun by at most one probe's requests. The loop stops
at ``iterations`` (I_max), when the budget is spent, or when every demand is dead. Both
strategies run on the same options, so on the same budget; they differ only in step 1.
"""
from __future__ import annotations

import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from speechkit.core.options import OptionError, bounded
from speechkit.llm.client import ClientOptions, NoAnswer
from speechkit.steps.probe.inputs import MeetingMaterial
from speechkit.steps.probe.labels import label, severe
from speechkit.steps.probe.novelty import NoveltyFilter
from speechkit.steps.probe.roles import DEMANDS, Roles
from speechkit.steps.probe.scoreboard import Scoreboard

log = logging.getLogger(__name__)

Strategy = Literal["ucb", "random"]
#: The search strategies: the UCB search, and the random-probing baseline it is compared with.
STRATEGIES: tuple[Strategy, ...] = ("ucb", "random")


@dataclass(frozen=True)
class ProbeOptions(ClientOptions):
    """Options of ``speechkit probe``: the LLM client's (endpoint, model, local server, deadline,
    retries, failure policy; :class:`~speechkit.llm.client.ClientOptions`) and the search's.

    ``iterations`` [1, 1000]: I_max, the most iterations per meeting (the paper's 20).
    ``questions_per_iteration`` [1, 100]: K, demands picked (probes started) per iteration (10).
    ``ucb_c`` [0, 100]: the UCB exploration constant c (1.0). ``near_miss_weight`` [0, 1]: the
    reward of a near miss (0.5). ``dead_after`` [1, 1000]: probes after which a demand without a
    finding is dropped (4). ``novelty_threshold`` [0, 1]: a question above this similarity to an
    earlier one is not asked (0.85). ``token_budget`` [1, 10^9]: estimated tokens (4 characters
    each, prompts and answers) per meeting and strategy. ``transcript_bytes`` [200, 10^7]: the
    most UTF-8 bytes of each transcript a prompt holds: the transcript is read whole, in parts
    this long, the probes taking them in turn (:mod:`.inputs`). ``demands``: the cognitive
    demands to search over (:data:`~speechkit.steps.probe.roles.DEMANDS`; another name is its own
    guidance). ``strategies``: the searches to run, each on its own budget of the options' size
    (``ucb``, the default; ``random``, the random-probing baseline; both: probe.json compares
    them). ``max_tokens``: as the client's, 400 here (answers are short).
    """

    max_tokens: int | None = bounded(400, ge=1, le=1_000_000)
    iterations: int = bounded(20, ge=1, le=1000)
    questions_per_iteration: int = bounded(10, ge=1, le=100)
    ucb_c: float = bounded(1.0, ge=0, le=100)
    near_miss_weight: float = bounded(0.5, ge=0, le=1)
    dead_after: int = bounded(4, ge=1, le=1000)
    novelty_threshold: float = bounded(0.85, ge=0, le=1)
    token_budget: int = bounded(200_000, ge=1, le=1_000_000_000)
    transcript_bytes: int = bounded(6000, ge=200, le=10_000_000)
    demands: tuple[str, ...] = tuple(DEMANDS)
    strategies: tuple[Strategy, ...] = ("ucb",)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.demands or len(set(self.demands)) != len(self.demands) or not all(d.strip() for d in self.demands):
            raise OptionError("demands", "expected one or more distinct, non-empty names")
        if not self.strategies or len(set(self.strategies)) != len(self.strategies):
            raise OptionError("strategies", f"expected one or more distinct of {', '.join(STRATEGIES)}")


@dataclass
class Probe:
    """One probe: where it came from (its iteration, demand and ``part`` of the meeting, from 0),
    what became of it, and, judged, its scores and label."""

    iteration: int
    demand: str
    part: int = 0
    status: str = "judged"
    question: str | None = None
    replaced: bool = False
    failed_checks: tuple[str, ...] = ()
    answer: str | None = None
    faithfulness: int | None = None
    completeness: int | None = None
    label: str | None = None
    severe: bool | None = None
    detail: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "demand": self.demand, "part": self.part, "status": self.status,
                "question": self.question,
                "replaced": self.replaced, "failed_checks": list(self.failed_checks), "answer": self.answer,
                "faithfulness": self.faithfulness, "completeness": self.completeness, "label": self.label,
                "severe": self.severe, "detail": self.detail}


@dataclass
class MeetingProbes:
    """The probes of one meeting, the scoreboard at the end, and why the loop stopped."""

    meeting: str
    probes: list[Probe] = field(default_factory=list)
    scoreboard: dict[str, Any] = field(default_factory=dict)
    iterations: int = 0
    stopped: str = ""
    tokens: int = 0

    @property
    def judged(self) -> list[Probe]:
        return [p for p in self.probes if p.label is not None]

    def as_dict(self) -> dict[str, Any]:
        return {"iterations": self.iterations, "stopped": self.stopped, "tokens": self.tokens,
                "scoreboard": self.scoreboard, "probes": [p.as_dict() for p in self.probes]}


def _question(roles: Roles, reference: str, probe: Probe, earlier: list[str]) -> str | None:
    """A verified question for ``probe`` from ``reference`` (one replacement), or None
    (``probe.status`` says why); every question generated is added to ``earlier``, which the
    generator is told not to repeat."""
    for attempt in range(2):
        question = roles.generate(reference, probe.demand, earlier, elsewhere=attempt > 0)
        earlier.append(question)  # every question generated, kept or not, is one not to repeat
        verdict = roles.verify(reference, question)
        probe.question, probe.replaced, probe.failed_checks = question, attempt > 0, verdict.failed
        if verdict.passed:
            return question
    probe.status = "unverified"
    return None


def run_probe(probe: Probe, roles: Roles, material: MeetingMaterial, novelty: NoveltyFilter,
              earlier: list[str]) -> Probe:
    """Carry ``probe`` through generation, verification, the novelty filter, answer and judgement,
    on its part of the meeting."""
    role = "generator or self-verifier"
    excerpt = material.part(probe.part)
    try:
        question = _question(roles, excerpt.reference, probe, earlier)
        if question is None:
            return probe
        if not novelty.admit(question):
            probe.status = "not-novel"
            return probe
        role = "system"
        probe.answer = roles.answer(material.system(excerpt), question)
        role = "judge"
        probe.faithfulness, probe.completeness = roles.judge(excerpt.reference, question, probe.answer)
    except NoAnswer as e:
        probe.status, probe.detail = "failed", f"{role}: {e.reason}: {e.detail}"[:300]
        log.warning("probe of %s (%s) failed: %s", material.meeting, probe.demand, probe.detail)
        return probe
    probe.label = label(probe.faithfulness, probe.completeness)
    probe.severe = severe(probe.faithfulness, probe.completeness)
    return probe


def random_picks(demands: tuple[str, ...], seed: int, meeting: str) -> Callable[[int], list[str]]:
    """The random baseline's picker for ``meeting``: ``k`` -> ``k`` demands drawn uniformly with
    replacement, from a generator seeded by ``seed`` and the meeting's name."""
    rng = np.random.default_rng([seed, zlib.crc32(meeting.encode())])
    return lambda k: [demands[i] for i in rng.integers(len(demands), size=k)]


def probe_meeting(material: MeetingMaterial, roles: Roles, novelty: NoveltyFilter, options: ProbeOptions,
                  strategy: Strategy = "ucb", seed: int = 0) -> MeetingProbes:
    """The search over one meeting by ``strategy`` (see the module docstring; ``seed``: the
    random strategy's); ``roles.meter`` holds its budget."""
    board = Scoreboard(options.demands, c=options.ucb_c, near_miss_weight=options.near_miss_weight,
                       dead_after=options.dead_after)
    pick = board.pick if strategy == "ucb" else random_picks(options.demands, seed, material.meeting)
    out = MeetingProbes(material.meeting)
    earlier: list[str] = []
    out.stopped = "iterations"
    for iteration in range(1, options.iterations + 1):
        demands = pick(options.questions_per_iteration)
        if not demands:
            out.stopped = "all demands dead"
            break
        if roles.meter.exhausted:
            out.stopped = "token budget"
            break
        out.iterations = iteration
        started = []
        for demand in demands:
            if roles.meter.exhausted:
                out.stopped = "token budget"
                break
            board.start(demand)
            number = len(out.probes) + len(started)
            started.append(run_probe(Probe(iteration, demand, number % len(material.excerpts)), roles, material,
                                     novelty, earlier))
        out.probes += started
        for p in started:
            if p.label is not None:
                board.record(p.demand, p.label)
        if out.stopped == "token budget":
            break
    out.scoreboard, out.tokens = board.as_dict(), roles.meter.spent
    return out
