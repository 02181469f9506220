"""``probe.json`` (format ``speechkit-probe/1``) and the summary ``speechkit probe`` prints.

probe.json holds the run's level, the endpoint and model that played every role (the judge
among them), the options (budget included), per meeting every probe with its status, question,
answer, scores and label, the scoreboard and why the loop stopped, and the summary:

- ``judged``: probes the judge scored; ``findings``, ``near_misses``, ``severe`` among them;
- ``finding_rate``: findings / judged; ``severity_share``: severe findings / findings (None: n/a);
- ``findings_by_demand``: per demand, the questions that were findings.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from speechkit.io.atomic import write_json
from speechkit.steps.probe.loop import MeetingProbes, ProbeOptions

PROBE_FORMAT = "speechkit-probe/1"


def summarize(meetings: Sequence[MeetingProbes]) -> dict[str, Any]:
    """The summary over ``meetings`` (see the module docstring)."""
    judged = [p for m in meetings for p in m.judged]
    findings = [p for p in judged if p.label == "finding"]
    severe = sum(bool(p.severe) for p in findings)
    by_demand: dict[str, list[str]] = {}
    for p in findings:
        by_demand.setdefault(p.demand, []).append(p.question or "")
    return {"probes": sum(len(m.probes) for m in meetings), "judged": len(judged), "findings": len(findings),
            "near_misses": sum(p.label == "near-miss" for p in judged), "severe": severe,
            "finding_rate": round(len(findings) / len(judged), 4) if judged else None,
            "severity_share": round(severe / len(findings), 4) if findings else None,
            "tokens": sum(m.tokens for m in meetings), "findings_by_demand": dict(sorted(by_demand.items()))}


def probe_document(level: int, workspace: str, endpoint: dict[str, Any], options: ProbeOptions,
                   meetings: Sequence[MeetingProbes]) -> dict[str, Any]:
    """The content of probe.json."""
    return {"format": PROBE_FORMAT, "level": level, "workspace": workspace, "endpoint": endpoint,
            "options": options.as_dict(), "summary": summarize(meetings),
            "meetings": {m.meeting: m.as_dict() for m in meetings}}


def write_probe(path: str | Path, document: dict[str, Any]) -> None:
    """Write probe.json atomically."""
    write_json(path, document)


def format_summary(document: dict[str, Any]) -> str:
    """The printed summary: the counts, finding rate, severity share and findings by demand."""
    s = document["summary"]

    def share(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1%}"

    lines = [f"L{document['level']}, {document['endpoint']['model']}: {s['probes']} probes, {s['judged']} judged, "
             f"{s['findings']} findings ({s['severe']} severe), {s['near_misses']} near misses, "
             f"~{s['tokens']} tokens",
             f"finding rate {share(s['finding_rate'])}, severity share {share(s['severity_share'])}"]
    for meeting, m in document["meetings"].items():
        lines.append(f"{meeting}: {m['iterations']} iteration(s), stopped by {m['stopped']}")
    for demand, questions in s["findings_by_demand"].items():
        lines.append(f"findings, {demand}:")
        lines += [f"  - {q}" for q in questions]
    return "\n".join(lines)
