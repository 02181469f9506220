"""``probe.json`` (format ``speechkit-probe/2``) and the summary ``speechkit probe`` prints.

probe.json holds the run's level, the endpoint and model that played every role (the judge
among them), the options (budget included), the ``seed`` of the random strategy, and under
``strategies``, per strategy probed (``ucb``, ``random``), per meeting every probe with its
status, part, question, answer, scores and label, the scoreboard and why the loop stopped, and
the strategy's summary:

- ``judged``: probes the judge scored; ``findings``, ``near_misses``, ``severe`` among them;
- ``finding_rate``: findings / judged, with its Wilson 95% interval ``finding_rate_ci``;
  ``severity_share``: severe findings / findings (None: n/a);
- ``by_demand``: per demand, judged, findings, finding rate and its interval (:mod:`.stats`);
- ``findings_by_demand``: per demand, the questions that were findings.

With both strategies, ``comparison`` holds the UCB search's rate minus the random baseline's,
over all probes and per demand: the difference, Newcombe's 95% interval and the p-value of
Fisher's exact test (:mod:`.stats`), and ``over_meetings``, the same difference with a paired
percentile bootstrap 95% interval over the meetings (each strategy's micro rate on the same draw
of meetings, :func:`~speechkit.metrics.bootstrap.paired_bootstrap`), which counts how the meetings
differ; None otherwise. Probing with some strategies keeps the
others' results from the probe.json before when they were probed with the same options, seed,
model and meetings (:func:`kept_strategies`), so ``--strategy random`` after the default
compares the two.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from speechkit.io.atomic import write_json
from speechkit.metrics.bootstrap import RESAMPLES, Ratio, paired_bootstrap
from speechkit.steps.probe.loop import STRATEGIES, MeetingProbes, ProbeOptions
from speechkit.steps.probe.stats import difference, interval, rate, rounded

PROBE_FORMAT = "speechkit-probe/2"
#: The strategy compared with the baseline in ``comparison``, and the baseline.
COMPARED, BASELINE = STRATEGIES


def summarize(meetings: Sequence[MeetingProbes], demands: Sequence[str]) -> dict[str, Any]:
    """The summary over ``meetings`` probed over ``demands`` (see the module docstring)."""
    judged = [p for m in meetings for p in m.judged]
    findings = [p for p in judged if p.label == "finding"]
    severe = sum(bool(p.severe) for p in findings)
    by_demand: dict[str, list[str]] = {}
    for p in findings:
        by_demand.setdefault(p.demand, []).append(p.question or "")
    overall = rate(len(findings), len(judged))
    return {"probes": sum(len(m.probes) for m in meetings), "judged": len(judged), "findings": len(findings),
            "near_misses": sum(p.label == "near-miss" for p in judged), "severe": severe,
            "finding_rate": overall["finding_rate"], "finding_rate_ci": overall["ci"],
            "severity_share": round(severe / len(findings), 4) if findings else None,
            "tokens": sum(m.tokens for m in meetings),
            "by_demand": {d: rate(sum(p.label == "finding" for p in judged if p.demand == d),
                                  sum(p.demand == d for p in judged)) for d in demands},
            "findings_by_demand": dict(sorted(by_demand.items()))}


def strategy_document(options: ProbeOptions, meetings: Sequence[MeetingProbes]) -> dict[str, Any]:
    """One strategy's part of probe.json: its summary and its meetings."""
    return {"summary": summarize(meetings, options.demands), "meetings": {m.meeting: m.as_dict() for m in meetings}}


def _meeting_rates(part: dict[str, Any]) -> list[Ratio]:
    """Per meeting of a strategy's part, in order: findings over judged probes."""
    labels = [[p["label"] for p in m["probes"] if p["label"]] for m in part["meetings"].values()]
    return [Ratio(sum(label == "finding" for label in judged), len(judged)) for judged in labels]


def comparison(strategies: dict[str, Any], resamples: int, seed: int) -> dict[str, Any] | None:
    """:data:`COMPARED` against :data:`BASELINE`, overall, over meetings (``resamples`` and
    ``seed``: the paired bootstrap's) and per demand (None without both)."""
    if COMPARED not in strategies or BASELINE not in strategies:
        return None
    one, other = strategies[COMPARED]["summary"], strategies[BASELINE]["summary"]
    paired = paired_bootstrap(_meeting_rates(strategies[BASELINE]), _meeting_rates(strategies[COMPARED]),
                              resamples, seed)
    return {"strategy": COMPARED, "baseline": BASELINE, "interval": "Newcombe (method 10), 95%",
            "test": "Fisher's exact test, two-sided",
            "overall": difference(rate(one["findings"], one["judged"]), rate(other["findings"], other["judged"])),
            "over_meetings": {"meetings": len(strategies[COMPARED]["meetings"]), "resamples": resamples,
                              "difference": rounded(paired.value),
                              "ci": interval(None if paired.ci_low is None else (paired.ci_low, paired.ci_high))},
            "by_demand": {d: difference(one["by_demand"][d], other["by_demand"][d]) for d in one["by_demand"]}}


def _comparable(document: dict[str, Any]) -> tuple[Any, ...]:
    """What two probe.json must share for their strategies' results to stand side by side."""
    options = {k: v for k, v in document["options"].items() if k != "strategies"}
    meetings = sorted(next(iter(document["strategies"].values()))["meetings"]) if document["strategies"] else []
    return (document["format"], document["level"], document["workspace"], document["seed"],
            document["endpoint"]["model"], options, meetings)


def kept_strategies(previous: Any, document: dict[str, Any]) -> dict[str, Any]:
    """The strategies of ``previous`` (the probe.json before, or None) that ``document`` did not
    probe, when both were probed alike (:func:`_comparable`); nothing otherwise."""
    try:
        alike = _comparable(previous) == _comparable(document)
        return {k: v for k, v in previous["strategies"].items() if k not in document["strategies"]} if alike else {}
    except (TypeError, KeyError, AttributeError, StopIteration):
        return {}


def probe_document(level: int, workspace: str, endpoint: dict[str, Any], options: ProbeOptions, seed: int,
                   results: dict[str, Sequence[MeetingProbes]], previous: Any = None,
                   resamples: int = RESAMPLES) -> dict[str, Any]:
    """The content of probe.json: ``results`` per strategy, and those :func:`kept_strategies`
    keeps of ``previous``; ``seed`` and ``resamples``: the random strategy's seed and the
    comparison's bootstrap."""
    document = {"format": PROBE_FORMAT, "level": level, "workspace": workspace, "endpoint": endpoint,
                "options": options.as_dict(), "seed": seed,
                "strategies": {k: strategy_document(options, v) for k, v in results.items()}}
    kept = kept_strategies(previous, document)
    document["strategies"] = {k: (document["strategies"] | kept)[k] for k in STRATEGIES
                              if k in document["strategies"] or k in kept}
    document["comparison"] = comparison(document["strategies"], resamples, seed)
    return document


def write_probe(path: str | Path, document: dict[str, Any]) -> None:
    """Write probe.json atomically."""
    write_json(path, document)


def share(value: float | None) -> str:
    """A share as a percentage ("n/a" for None)."""
    return "n/a" if value is None else f"{value:.1%}"


def rate_text(value: float | None, ci: list[float] | None) -> str:
    """A finding rate with its interval: ``12.5% [3.5%, 36.0%]``."""
    return share(value) + ("" if ci is None else f" [{ci[0]:.1%}, {ci[1]:.1%}]")


def difference_text(d: dict[str, Any]) -> str:
    """A difference of rates with its interval and p-value: ``+12.5 pp [-3.1, 30.2], p 0.210``."""
    if d["difference"] is None:
        return "n/a"
    low, high = d["ci"]
    return f"{d['difference'] * 100:+.1f} pp [{low * 100:+.1f}, {high * 100:+.1f}], p {d['p_value']:.3f}"


def over_meetings_text(d: dict[str, Any]) -> str:
    """The difference over meetings with its paired bootstrap interval: ``over 3 meetings: +5.0 pp [...]``."""
    ci = "" if d["ci"] is None else f" [{d['ci'][0] * 100:+.1f}, {d['ci'][1] * 100:+.1f}]"
    value = "n/a" if d["difference"] is None else f"{d['difference'] * 100:+.1f} pp{ci}"
    return f"over {d['meetings']} meeting(s), paired bootstrap: {value}"


def format_summary(document: dict[str, Any]) -> str:
    """The printed summary: per strategy the counts, finding rate, severity share and findings by
    demand; then the comparison."""
    lines = []
    for strategy, part in document["strategies"].items():
        s = part["summary"]
        lines += [f"L{document['level']}, {strategy}, {document['endpoint']['model']}: {s['probes']} probes, "
                  f"{s['judged']} judged, {s['findings']} findings ({s['severe']} severe), {s['near_misses']} near "
                  f"misses, ~{s['tokens']} tokens",
                  f"finding rate {rate_text(s['finding_rate'], s['finding_rate_ci'])}, "
                  f"severity share {share(s['severity_share'])}"]
        for meeting, m in part["meetings"].items():
            lines.append(f"{meeting}: {m['iterations']} iteration(s), stopped by {m['stopped']}")
        for demand, questions in s["findings_by_demand"].items():
            lines.append(f"findings, {demand}:")
            lines += [f"  - {q}" for q in questions]
    c = document["comparison"]
    if c is not None:
        lines.append(f"{c['strategy']} - {c['baseline']}: {difference_text(c['overall'])} ({c['test']}); "
                     f"{over_meetings_text(c['over_meetings'])}")
        lines += [f"  {demand}: {difference_text(d)}" for demand, d in c["by_demand"].items()]
    return "\n".join(lines)
