"""The report's section on the scored terms the context held: of each meeting's scored terms (the
terms term and number recall count), how many each stream of the context the run gave it held
(run.json ``scored_term_exposure``, :mod:`speechkit.metrics.exposure`)."""
from __future__ import annotations

from speechkit.core.section import Section
from speechkit.io.run_view import RunView
from speechkit.metrics.exposure import ANY, QUESTIONS, STREAMS

COLUMNS = {**STREAMS, ANY: "any of these", QUESTIONS: "questions (a whole system)"}


def _cell(found: int, scored: int) -> str:
    return f"{found}/{scored} ({found / scored:.0%})" if scored else "n/a"


def exposure_lines(view: RunView) -> list[str]:
    """The section: one row per meeting and one for all, one column per stream."""
    lines = ["## Scored terms in the context", ""]
    if "scored_term_exposure" not in view.info:
        return lines + ["Not recorded: the run predates the figure (run.json has no `scored_term_exposure`).", ""]
    block = view.block("scored_term_exposure")
    if not block:
        return lines + ["Not applicable: no meeting scores a term (no term list and no reference).", ""]
    streams, scored = block["streams"], block["scored"]
    rows = [f"| {mid} | {m['scored']} | " + " | ".join(_cell(m[key], m["scored"]) for key in COLUMNS) + " |"
            for mid, m in block["per_meeting"].items()]
    rows.append(f"| all | {scored['all']} | "
                + " | ".join(_cell(streams[key]["all"], scored["all"]) for key in COLUMNS) + " |")
    kinds = [f"{kind} {_cell(streams[ANY][kind], scored[kind])}" for kind in ("numbers", "jargon")]
    return lines + [
        "Of each meeting's scored terms (those term and number recall count, numbers and jargon), how many the "
        "context the run gave the meeting held, per stream: a term counts when its normalised form is a "
        "whole-word substring of a line or item of the stream, as term recall matches. At L1 the context is empty; at "
        "L2 it holds the system's own words, so what it holds there was earned; at L3 the workspace text, whose "
        "jargon list holds every jargon term of the workspace by design. The questions are what a whole system "
        "is asked about the meeting (no cascade stage reads them; not in \"any\").", "",
        f"In any stream: {'; '.join(kinds)}.", "",
        "| meeting | scored terms | " + " | ".join(COLUMNS.values()) + " |",
        "|---|---|" + "---|" * len(COLUMNS), *rows, ""]


#: After the missed terms (70).
SECTIONS = (Section(75, exposure_lines),)
