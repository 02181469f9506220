"""The ASR stage's report section: what its loop and hallucination control did, per meeting."""
from __future__ import annotations

from speechkit.io.run_view import RunView

STAGE = "asr"
_COUNTS = ("windows", "flagged_windows", "redecoded_unbiased", "redecoded_fallback", "cleaned", "missed_spans",
           "missed_words")


def loop_control(view: RunView) -> list[str]:
    """Per meeting, what the ASR loop and hallucination control did (windows checked, flagged by
    reason, re-decoded without biasing / at a sampling temperature, cleaned; run.json ``asr.meetings``)."""
    rows = {mid: a for mid, a in (view.block(STAGE).get("meetings") or {}).items() if a}
    if not rows:
        return []
    lines = ["## ASR loop and hallucination control", "",
             "Windows flagged (repeated words or n-grams, compression, words outside speech) are decoded "
             "again without prompt and hot words, then at sampling temperatures; those still flagged are "
             "cleaned (repeats collapsed, words outside speech dropped). Speech no decoded word covered "
             "(skipped by the decoder) is decoded again on its own: the stretches and the words found there.", "",
             "| meeting | windows | flagged | reasons | re-decoded unbiased | re-decoded at temperature > 0 | cleaned "
             "| skipped speech decoded again | words found there |",
             "|---|---|---|---|---|---|---|---|---|"]
    totals = [0] * len(_COUNTS)
    for mid, a in rows.items():
        counts = [a.get(k, 0) for k in _COUNTS]
        totals = [t + c for t, c in zip(totals, counts)]
        reasons = ", ".join(f"{k} {v}" for k, v in (a.get("flagged") or {}).items()) or "-"
        lines.append(f"| {mid} | {counts[0]} | {counts[1]} | {reasons} | {' | '.join(map(str, counts[2:]))} |")
    lines.append(f"| all | {totals[0]} | {totals[1]} | | {' | '.join(map(str, totals[2:]))} |")
    return lines + [""]

