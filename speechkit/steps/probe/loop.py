"""The Evaluation-as-Search loop over one meeting (paper 000_), and its options.

Each iteration, while the iteration count, the token budget and the live demands last:

1. the scoreboard picks ``questions_per_iteration`` (K) demands by UCB (:mod:`.scoreboard`);
2. per demand, the generator writes a question and the self-verifier checks it; a question that
   fails gets one replacement (from another part of the meeting), and a replacement that fails
   too drops the probe (``status`` ``unverified``);
3. the novelty filter drops a question above ``novelty_threshold`` to an earlier one
   (``not-novel``; :mod:`.novelty`);
4. the system under test answers from its own output and the judge scores the answer
   (:mod:`.roles`), which labels the probe (:mod:`.labels`);
5. the iteration's judged probes go into the scoreboard.

A request that fails or an answer that is not what was asked ends that probe (``status``
``failed``, with the role and reason). The token budget is checked before every probe, so a
probe started finishes and the budget is overrun by at most one probe's requests. The loop stops
at ``iterations`` (I_max), when the budget is spent, or when every demand is dead.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from speechkit.core.options import OptionError, bounded
from speechkit.llm.client import ClientOptions, NoAnswer
from speechkit.steps.probe.inputs import MeetingMaterial
from speechkit.steps.probe.labels import label, severe
from speechkit.steps.probe.novelty import NoveltyFilter
from speechkit.steps.probe.roles import DEMANDS, Roles
from speechkit.steps.probe.scoreboard import Scoreboard

log = logging.getLogger(__name__)


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
    each, prompts and answers) per meeting. ``transcript_bytes`` [200, 10^7]: the most UTF-8
    bytes of each transcript a prompt holds (the first lines). ``demands``: the cognitive
    demands to search over (:data:`~speechkit.steps.probe.roles.DEMANDS`; another name is its own
    guidance). ``max_tokens``: as the client's, 400 here (answers are short).
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

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.demands or len(set(self.demands)) != len(self.demands) or not all(d.strip() for d in self.demands):
            raise OptionError("demands", "expected one or more distinct, non-empty names")


@dataclass
class Probe:
    """One probe: where it came from, what became of it, and, judged, its scores and label."""

    iteration: int
    demand: str
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
        return {"iteration": self.iteration, "demand": self.demand, "status": self.status, "question": self.question,
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


def _question(roles: Roles, material: MeetingMaterial, probe: Probe, earlier: list[str]) -> str | None:
    """A verified question for ``probe`` (one replacement), or None (``probe.status`` says why);
    every question generated is added to ``earlier``, which the generator is told not to repeat."""
    for attempt in range(2):
        question = roles.generate(material.reference, probe.demand, earlier, elsewhere=attempt > 0)
        earlier.append(question)  # every question generated, kept or not, is one not to repeat
        verdict = roles.verify(material.reference, question)
        probe.question, probe.replaced, probe.failed_checks = question, attempt > 0, verdict.failed
        if verdict.passed:
            return question
    probe.status = "unverified"
    return None


def run_probe(probe: Probe, roles: Roles, material: MeetingMaterial, novelty: NoveltyFilter,
              earlier: list[str]) -> Probe:
    """Carry ``probe`` through generation, verification, the novelty filter, answer and judgement."""
    role = "generator or self-verifier"
    try:
        question = _question(roles, material, probe, earlier)
        if question is None:
            return probe
        if not novelty.admit(question):
            probe.status = "not-novel"
            return probe
        role = "system"
        probe.answer = roles.answer(material.system, question)
        role = "judge"
        probe.faithfulness, probe.completeness = roles.judge(material.reference, question, probe.answer)
    except NoAnswer as e:
        probe.status, probe.detail = "failed", f"{role}: {e.reason}: {e.detail}"[:300]
        log.warning("probe of %s (%s) failed: %s", material.meeting, probe.demand, probe.detail)
        return probe
    probe.label = label(probe.faithfulness, probe.completeness)
    probe.severe = severe(probe.faithfulness, probe.completeness)
    return probe


def probe_meeting(material: MeetingMaterial, roles: Roles, novelty: NoveltyFilter,
                  options: ProbeOptions) -> MeetingProbes:
    """The search over one meeting (see the module docstring); ``roles.meter`` holds its budget."""
    board = Scoreboard(options.demands, c=options.ucb_c, near_miss_weight=options.near_miss_weight,
                       dead_after=options.dead_after)
    out = MeetingProbes(material.meeting)
    earlier: list[str] = []
    out.stopped = "iterations"
    for iteration in range(1, options.iterations + 1):
        demands = board.pick(options.questions_per_iteration)
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
            started.append(run_probe(Probe(iteration, demand), roles, material, novelty, earlier))
        out.probes += started
        for p in started:
            if p.label is not None:
                board.record(p.demand, p.label)
        if out.stopped == "token budget":
            break
    out.scoreboard, out.tokens = board.as_dict(), roles.meter.spent
    return out
