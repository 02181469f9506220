"""Adaptive probing of a run (``speechkit probe RUN``): the Evaluation-as-Search loop of paper 000_.

Instead of a fixed question bank, a search looks for the questions about a meeting that the
system answers badly from its own output. The deterministic parts are plain code:
:mod:`.scoreboard` (UCB over cognitive demands, the dead-demand rule), :mod:`.novelty` (the
near-duplicate filter), :mod:`.labels` (finding, near miss, hard negative, severe) and
:mod:`.loop` (iterations, stopping, the token budget); the language-model roles (generator,
self-verifier, the system under test, the judge) are in :mod:`.roles`, every one through
:mod:`speechkit.llm`. :mod:`.inputs` reads a finished run, :mod:`.results` writes probe.json and
the summary. See docs/qa.md.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from speechkit.errors import FormatError
from speechkit.io.atomic import check_output_file
from speechkit.io.lock import run_folder_lock
from speechkit.llm import session
from speechkit.llm.client import LLMClient, LLMUnavailable
from speechkit.llm.run import checked_endpoint
from speechkit.probe.inputs import meeting_material, open_run
from speechkit.probe.loop import MeetingProbes, ProbeOptions, probe_meeting
from speechkit.probe.novelty import NoveltyFilter
from speechkit.probe.results import probe_document, write_probe
from speechkit.probe.roles import Roles, TokenMeter
from speechkit.report import rewrite_report
from speechkit.text_similarity import TextSimilarity, text_similarity

PROBE_NAME = "probe.json"


def probe_run(folder: str | Path, options: ProbeOptions, meetings: list[str] | None = None,
              workspace: str | Path | None = None, cache_dir: str | Path | None = None,
              similarity: TextSimilarity | None = None) -> dict[str, Any]:
    """Probe the finished run in ``folder`` and write ``folder/probe.json``; its content.

    ``meetings``: the meetings to probe (default: every meeting the run transcribed), each with
    its own iterations and token budget. ``workspace``: default the one run.json names.
    ``cache_dir``: the response cache (default ``folder/cache/llm``). ``similarity``: the
    novelty filter's measure (default :func:`~speechkit.text_similarity.text_similarity`). An
    unavailable endpoint stops before any probe; under the ``fail`` policy, failed requests
    above ``max_failed_share`` raise :class:`LLMUnavailable` after probe.json is written (it
    says which probes failed).
    """
    run = open_run(folder, workspace)
    chosen = meetings or run.meetings
    unknown = [m for m in chosen if m not in run.meetings]
    if unknown or not chosen:
        raise FormatError(run.folder / "transcripts", f"no transcript of meeting(s) {', '.join(unknown)}" if unknown
                          else "no meeting transcribed: nothing to probe")
    out = run.folder / PROBE_NAME
    check_output_file(out)
    materials = [meeting_material(run, m, options.transcript_bytes) for m in chosen]
    similarity = similarity or text_similarity("auto")
    client = LLMClient(options)
    with run_folder_lock(run.folder):
        session.begin(cache_dir or run.folder / "cache" / "llm")
        try:
            found = checked_endpoint(client, options.failures, "probe")
            results: list[MeetingProbes] = []
            for material in materials:
                roles = Roles(client, TokenMeter(options.token_budget))
                results.append(probe_meeting(material, roles, NoveltyFilter(similarity, options.novelty_threshold),
                                             options))
        finally:
            usage = session.end().usage(client.base_url, client.model)
        endpoint = {"base_url": "local server" if client.endpoint.local else client.base_url, "model": client.model,
                    "models_reported": sorted(usage.reported), "probe": found, "requests": usage.requests,
                    "failed": usage.failed, "novelty_similarity": similarity.name}
        document = probe_document(run.level, str(run.workspace.root), endpoint, options, results)
        write_probe(out, document)
        if (run.folder / "report.md").is_file():
            rewrite_report(run.folder)  # the report's probing section
    if options.failures == "fail" and usage.failed and usage.failed_share > options.max_failed_share:
        raise LLMUnavailable(f"{usage.base_url}: model {usage.model}: {usage.failed} of {usage.requests} probe "
                             f"requests failed ({usage.failed_share:.0%}); last: {usage.last_failure}; "
                             f"{out} lists them; --llm-failures allow goes on")
    return document
