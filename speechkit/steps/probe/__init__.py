"""Adaptive probing of a run (``speechkit probe RUN``): the Evaluation-as-Search loop of paper 000_.

Instead of a fixed question bank, a search looks for the questions about a meeting that the
system answers badly from its own output. The deterministic parts are plain code:
:mod:`.scoreboard` (UCB over cognitive demands, the dead-demand rule), :mod:`.novelty` (the
near-duplicate filter), :mod:`.labels` (finding, near miss, hard negative, severe) and
:mod:`.loop` (iterations, stopping, the token budget); the language-model roles (generator,
self-verifier, the system under test, the judge) are in :mod:`.roles`, every one through
:mod:`speechkit.llm`. :mod:`.inputs` reads a finished run, whole, in parts; :mod:`.stats` gives
the finding rates' intervals and the test of the UCB search against the random baseline;
:mod:`.results` writes probe.json and the summary. It runs as the ``probe`` post-run step
(:class:`ProbeStep`). See docs/qa.md.
"""
from __future__ import annotations

from typing import Any

from speechkit.core.section import Section
from speechkit.core.stage import Spec
from speechkit.core.step import Step, StepJob
from speechkit.errors import FormatError, SpeechkitError
from speechkit.io.jsonfile import read_json
from speechkit.io.markdown import cell, code
from speechkit.io.run_folder import TRANSCRIPT, RunFolder
from speechkit.io.run_view import RunView
from speechkit.llm import session
from speechkit.llm.client import LLMClient, LLMUnavailable
from speechkit.llm.run import checked_endpoint
from speechkit.metrics.bootstrap import RESAMPLES, SEED
from speechkit.steps.probe.inputs import MeetingMaterial, meeting_material
from speechkit.steps.probe.loop import MeetingProbes, ProbeOptions, Strategy, probe_meeting
from speechkit.steps.probe.novelty import NoveltyFilter
from speechkit.steps.probe.results import (
    PROBE_FORMAT,
    difference_text,
    over_meetings_text,
    probe_document,
    rate_text,
    share,
    write_probe,
)
from speechkit.steps.probe.roles import Roles, TokenMeter
from speechkit.text_similarity import TextSimilarity, text_similarity
from speechkit.workspace import Workspace

BACKENDS = {"llm": "speechkit.steps.probe:LLMProber"}
DEFAULT_BACKEND = "llm"


class LLMProber:
    """The ``llm`` backend of probing: one endpoint plays every role (generator, self-verifier,
    the system under test, judge); ``similarity``: the novelty filter's measure (default
    :func:`~speechkit.text_similarity.text_similarity`)."""

    Options = ProbeOptions

    def __init__(self, options: ProbeOptions, similarity: TextSimilarity | None = None) -> None:
        self.options = options
        self.client = LLMClient(options)
        self.similarity = similarity or text_similarity("auto")

    def probe(self, material: MeetingMaterial, strategy: Strategy = "ucb", seed: int = 0) -> MeetingProbes:
        """The search over one meeting by ``strategy`` (``seed``: the random one's), with its own
        iterations, token budget and novelty filter."""
        roles = Roles(self.client, TokenMeter(self.options.token_budget))
        return probe_meeting(material, roles, NoveltyFilter(self.similarity, self.options.novelty_threshold),
                             self.options, strategy, seed)


def materials_of(run: RunFolder, ws: Workspace, meetings: tuple[str, ...] | None, transcript_bytes: int,
                 ) -> list[MeetingMaterial]:
    """What the roles read of each of ``meetings`` (default: every meeting the run transcribed)."""
    transcribed = run.meetings(ws)
    chosen = list(meetings or transcribed)
    unknown = [m for m in chosen if m not in transcribed]
    if unknown or not chosen:
        raise FormatError(run.transcripts, f"no transcript of meeting(s) {', '.join(unknown)}" if unknown
                          else "no meeting transcribed: nothing to probe")
    return [meeting_material(run, ws, m, transcript_bytes) for m in chosen]


def previous_probe(run: RunFolder) -> Any:
    """The run's probe.json as it is before probing (None when there is none or it cannot be read:
    it is written anew)."""
    path = run.file(RunFolder.PROBE)
    try:
        return read_json(path) if path.is_file() else None
    except SpeechkitError:
        return None


def probe_run(run: RunFolder, ws: Workspace, prober: LLMProber, materials: list[MeetingMaterial], found: str,
              seed: int = SEED, previous: Any = None, resamples: int = RESAMPLES) -> dict[str, Any]:
    """Probe the meetings of ``materials`` (:func:`materials_of`) of the finished run ``run`` (of
    ``ws``) by each of the options' strategies and write its ``probe.json``; its content.
    ``found``: what probing the endpoint found (an unavailable one stops before any probe);
    ``seed``: the random strategy's and the comparison's bootstrap's, ``resamples`` the bootstrap's;
    ``previous``: the probe.json before (:func:`previous_probe`),
    whose other strategies are kept when comparable (:func:`~.results.kept_strategies`). The
    requests count in the current LLM session (a step's own, :mod:`speechkit.postrun`). Each
    meeting has its own iterations and token budget per strategy; under the ``fail`` policy,
    failed requests above ``max_failed_share`` raise :class:`LLMUnavailable` after probe.json is
    written (it says which probes failed).
    """
    options, client = prober.options, prober.client
    results = {strategy: [prober.probe(material, strategy, seed) for material in materials]
               for strategy in options.strategies}
    usage = session.current().usage(client.base_url, client.model)
    endpoint = {"base_url": "local server" if client.endpoint.local else client.base_url, "model": client.model,
                "models_reported": sorted(usage.reported), "probe": found, "requests": usage.requests,
                "failed": usage.failed, "novelty_similarity": prober.similarity.name}
    out = run.file(RunFolder.PROBE)
    document = probe_document(run.level(), str(ws.root), endpoint, options, seed, results, previous, resamples)
    write_probe(out, document)
    if options.failures == "fail" and usage.failed and usage.failed_share > options.max_failed_share:
        raise LLMUnavailable(f"{usage.base_url}: model {usage.model}: {usage.failed} of {usage.requests} probe "
                             f"requests failed ({usage.failed_share:.0%}); last: {usage.last_failure}; "
                             f"{out} lists them; --llm-failures allow goes on")
    return document


class ProbeStep(Step):
    """The ``probe`` step: adaptive probing of the run's meetings into ``probe.json``."""

    name = "probe"
    reads = (TRANSCRIPT,)
    writes = (RunFolder.PROBE,)
    backends = BACKENDS

    def __init__(self, spec: Spec) -> None:
        super().__init__(spec)
        self.prober = self.backend()
        self.materials: list[MeetingMaterial] = []
        self.found = ""
        self.previous: Any = None

    def check(self, run: RunFolder, job: StepJob) -> None:
        """Read what the roles read of every meeting to probe and the probe.json before, and probe
        the endpoint."""
        self.materials = materials_of(run, job.workspace, job.meetings, self.prober.options.transcript_bytes)
        self.previous = previous_probe(run)
        self.found = checked_endpoint(self.prober.client, self.prober.options.failures, "probe")

    def run(self, run: RunFolder, job: StepJob) -> dict[str, Any]:
        return probe_run(run, job.workspace, self.prober, self.materials, self.found, job.seed, self.previous,
                         job.resamples)


STEP = ProbeStep


def _demand_table(probe: dict[str, Any]) -> list[str]:
    """Per demand, each strategy's finding rate with its interval and, with both, the difference."""
    strategies, c = probe["strategies"], probe["comparison"]
    head = ["demand", *(f"{k}: findings / judged, rate [95% CI]" for k in strategies)]
    head += [f"{c['strategy']} - {c['baseline']} [95% CI], p"] if c else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for demand in next(iter(strategies.values()))["summary"]["by_demand"]:
        row = [cell(demand)]
        for part in strategies.values():
            r = part["summary"]["by_demand"][demand]
            row.append(f"{r['findings']} / {r['judged']}, {rate_text(r['finding_rate'], r['ci'])}")
        row += [difference_text(c["by_demand"][demand])] if c else []
        lines.append("| " + " | ".join(row) + " |")
    return lines


def probe_section(view: RunView) -> list[str]:
    """What probing found (the run's ``probe.json``): per strategy the finding rate with its
    interval and the severity share over the judged probes, the findings by demand; the finding
    rates per demand, and with both strategies their difference and its test; the model that
    played the roles. Nothing without the file; a line saying so for a probe.json of another format."""
    probe = view.document(RunFolder.PROBE)
    if probe is None:
        return []
    if not isinstance(probe, dict) or probe.get("format") != PROBE_FORMAT:
        given = probe.get("format") if isinstance(probe, dict) else None
        return ["## Adaptive probing", "", f"The run's {RunFolder.PROBE} is not {code(PROBE_FORMAT)} "
                f"({code(str(given))}): probe the run again (docs/qa.md) to see it here.", ""]
    lines = [f"## Adaptive probing (roles: {code(probe['endpoint']['model'])})", "",
             "A finding is an answer the judge scored 3 or lower on faithfulness or completeness against the "
             "reference transcript; rates are findings / judged probes with Wilson 95% intervals (docs/qa.md).", ""]
    for strategy, part in probe["strategies"].items():
        s = part["summary"]
        rate = "n/a (no probe was judged)" if s["finding_rate"] is None else rate_text(s["finding_rate"],
                                                                                       s["finding_rate_ci"])
        severe = "n/a (no finding)" if s["severity_share"] is None else share(s["severity_share"])
        lines += [f"- {code(strategy)}: {s['probes']} probes of {len(part['meetings'])} meeting(s), {s['judged']} "
                  f"judged: finding rate {rate}, severity share {severe}, {s['near_misses']} near misses."]
        lines += [f"  - {cell(demand)}: " + "; ".join(cell(q) for q in questions)
                  for demand, questions in s["findings_by_demand"].items()]
    c = probe["comparison"]
    if c is not None:
        lines += ["", f"{code(c['strategy'])} against the {code(c['baseline'])} baseline on the same budget: "
                      f"{difference_text(c['overall'])} (difference of finding rates, {c['interval']} interval; "
                      f"{c['test']}); {over_meetings_text(c['over_meetings'])}."]
    return lines + ["", *_demand_table(probe), ""]


SECTIONS = (Section(130, probe_section),)
