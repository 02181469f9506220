"""Adaptive probing of a run (``speechkit probe RUN``): the Evaluation-as-Search loop of paper 000_.

Instead of a fixed question bank, a search looks for the questions about a meeting that the
system answers badly from its own output. The deterministic parts are plain code:
:mod:`.scoreboard` (UCB over cognitive demands, the dead-demand rule), :mod:`.novelty` (the
near-duplicate filter), :mod:`.labels` (finding, near miss, hard negative, severe) and
:mod:`.loop` (iterations, stopping, the token budget); the language-model roles (generator,
self-verifier, the system under test, the judge) are in :mod:`.roles`, every one through
:mod:`speechkit.llm`. :mod:`.inputs` reads a finished run, :mod:`.results` writes probe.json and
the summary. It runs as the ``probe`` post-run step (:class:`ProbeStep`). See docs/qa.md.
"""
from __future__ import annotations

from typing import Any

from speechkit.core.section import Section
from speechkit.core.stage import Spec
from speechkit.core.step import Step, StepJob
from speechkit.errors import FormatError
from speechkit.io.markdown import cell, code
from speechkit.io.run_folder import TRANSCRIPT, RunFolder
from speechkit.io.run_view import RunView
from speechkit.llm import session
from speechkit.llm.client import LLMClient, LLMUnavailable
from speechkit.llm.run import checked_endpoint
from speechkit.steps.probe.inputs import MeetingMaterial, meeting_material
from speechkit.steps.probe.loop import MeetingProbes, ProbeOptions, probe_meeting
from speechkit.steps.probe.novelty import NoveltyFilter
from speechkit.steps.probe.results import probe_document, write_probe
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

    def probe(self, material: MeetingMaterial) -> MeetingProbes:
        """The search over one meeting, with its own iterations and token budget."""
        roles = Roles(self.client, TokenMeter(self.options.token_budget))
        return probe_meeting(material, roles, NoveltyFilter(self.similarity, self.options.novelty_threshold),
                             self.options)


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


def probe_run(run: RunFolder, ws: Workspace, prober: LLMProber, materials: list[MeetingMaterial], found: str,
              ) -> dict[str, Any]:
    """Probe the meetings of ``materials`` (:func:`materials_of`) of the finished run ``run`` (of
    ``ws``) and write its ``probe.json``; its content. ``found``: what probing the endpoint found
    (an unavailable one stops before any probe). The requests count in the current LLM session (a
    step's own, :mod:`speechkit.postrun`). Each meeting has its own iterations and token budget;
    under the ``fail`` policy, failed requests above ``max_failed_share`` raise
    :class:`LLMUnavailable` after probe.json is written (it says which probes failed).
    """
    options, client = prober.options, prober.client
    results = [prober.probe(material) for material in materials]
    usage = session.current().usage(client.base_url, client.model)
    endpoint = {"base_url": "local server" if client.endpoint.local else client.base_url, "model": client.model,
                "models_reported": sorted(usage.reported), "probe": found, "requests": usage.requests,
                "failed": usage.failed, "novelty_similarity": prober.similarity.name}
    out = run.file(RunFolder.PROBE)
    document = probe_document(run.level(), str(ws.root), endpoint, options, results)
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

    def check(self, run: RunFolder, job: StepJob) -> None:
        """Read what the roles read of every meeting to probe, and probe the endpoint."""
        self.materials = materials_of(run, job.workspace, job.meetings, self.prober.options.transcript_bytes)
        self.found = checked_endpoint(self.prober.client, self.prober.options.failures, "probe")

    def run(self, run: RunFolder, job: StepJob) -> dict[str, Any]:
        return probe_run(run, job.workspace, self.prober, self.materials, self.found)


STEP = ProbeStep


def probe_section(view: RunView) -> list[str]:
    """What probing found (the run's ``probe.json``): the finding rate and severity share over the
    judged probes, the model that played the roles, the findings by demand; nothing without the file."""
    probe = view.document(RunFolder.PROBE)
    if probe is None:
        return []
    s = probe["summary"]
    rate = "n/a (no probe was judged)" if s["finding_rate"] is None else f"{s['finding_rate']:.1%}"
    severe = "n/a (no finding)" if s["severity_share"] is None else f"{s['severity_share']:.1%}"
    lines = [f"## Adaptive probing (roles: {code(probe['endpoint']['model'])})", "",
             f"{s['probes']} probes of {len(probe['meetings'])} meeting(s), {s['judged']} judged: finding rate "
             f"{rate}, severity share {severe}, {s['near_misses']} near misses. A finding is an answer the judge "
             "scored 3 or lower on faithfulness or completeness against the reference transcript (docs/qa.md).", ""]
    for demand, questions in s["findings_by_demand"].items():
        lines += [f"- {cell(demand)}: " + "; ".join(cell(q) for q in questions)]
    return lines + [""]


SECTIONS = (Section(130, probe_section),)
