"""The correction stage's report section: its edits per meeting, why each was allowed, what it refused."""
from __future__ import annotations

from collections import Counter

from speechkit.io.markdown import cell, code
from speechkit.io.run_view import RunView

STAGE = "correct"
#: Correction edits listed per meeting (run.json holds them all).
MAX_EDITS = 10
#: Why the correction stage allowed an edit (its ``gate``), as the report explains it.
GATES = {"respelling": "the term was split over several words", "spoken-form": "the words were a spoken form "
         "of the term", "confidence": "the ASR was unsure of the words", "lm": "the workspace language model "
         "prefers the term", "llm": "an LLM proposed it and the guards passed it"}


def corrections(view: RunView) -> list[str]:
    """The correction stage's edits per meeting (run.json ``stages.correct``; at most :data:`MAX_EDITS`
    listed per meeting) with why each was allowed, and what it rejected, counted by reason."""
    lines = ["## Corrections", ""]
    if STAGE not in view.stages:
        return lines + ["The recipe has no correct stage.", ""]
    done = {mid: c for mid, c in view.stage_summaries(STAGE).items() if c}
    if not done:
        return lines + ["The correct stage changed nothing in any meeting.", ""]
    lines += ["Why an edit was allowed: " + "; ".join(f"{gate}: {why}" for gate, why in GATES.items())
              + f". At most {MAX_EDITS} edits are listed per meeting; run.json (stages.correct) holds them all.", "",
              "| meeting | corrector | edits | turns changed | rejected (by reason) |", "|---|---|---|---|---|"]
    for mid, c in done.items():
        rejected = sum((Counter(c.get(kind) or {}) for kind in
                        ("rejected_candidates", "rejected_turns", "rejected_batches", "failures")), Counter())
        lines.append(f"| {mid} | {cell(c.get('backend'))} | {c.get('edits', 0)} | {c.get('turns_changed', 0)} of "
                     f"{c.get('turns', 0)} | {cell(', '.join(f'{k} {v}' for k, v in rejected.items()), 'none')} |")
    lines += ["", "| meeting | turn | before | after | allowed by | score |", "|---|---|---|---|---|---|"]
    for mid, c in done.items():
        edits = (c.get("details") or {}).get("edits", [])
        for e in edits[:MAX_EDITS]:
            score = "" if e.get("score") is None else f"{e['score']:.2f}"
            lines.append(f"| {mid} | {e['segment']} | {code(e['old'])} | {code(e['new'])} | {cell(e['gate'])} | "
                         f"{score} |")
        if len(edits) > MAX_EDITS:
            lines.append(f"| {mid} | | {len(edits) - MAX_EDITS} more | | | |")
    return lines + [""]

