"""The judged metrics of a run: its ``judged.json`` (the ``judge`` step's) folded into scores.json.

What the judge scores, 1 (worst) to 5 (best): the paper's five summary dimensions
(:data:`DIMENSIONS`, one score per meeting) and the description quality of each run action item
matched to a gold one (:data:`DESCRIPTION`). In scores.json they sit beside the exact metrics, a
family of their own (``judged_faithfulness`` ... ``description_quality``): per meeting the
summary's score, or the mean over its judged items (the ratio: their score sum over their count,
in ``details.judged_summary`` and ``details.judged_items``); over the meetings the micro ratio
with the scores' bootstrap CI, as every metric. The judge model that judged.json names goes to
``settings.judged.judge_model``, and every label a run's scores show names it
(:meth:`~speechkit.metrics.catalog.Metric.label_in`). A run without judged.json has every judged
metric n/a with the reason.
"""
from __future__ import annotations

from typing import Any

from speechkit.errors import FormatError
from speechkit.io.jsonfile import read_json
from speechkit.io.run_folder import RunFolder
from speechkit.metrics.bootstrap import Ratio
from speechkit.metrics.catalog import SCORE_1_TO_5, Details, Metric
from speechkit.metrics.family import ScoringRun, StepFamily

JUDGED = "judged"
#: The paper's five summary dimensions, in the order judged.json and the tables list them.
DIMENSIONS = ("faithfulness", "coherence", "recall", "precision", "conciseness")
#: The judged dimension of each matched action item (the paper's "AI desc.").
DESCRIPTION = "description_quality"
#: The same over every action item of the run, those no gold item matched judged against the transcript.
DESCRIPTION_ALL = "description_quality_all_items"
SCALE = (1, 2, 3, 4, 5)
SUMMARY_DETAIL, ITEMS_DETAIL, ALL_ITEMS_DETAIL = "judged_summary", "judged_items", "judged_all_items"
NO_JUDGED = f"the run has no {RunFolder.JUDGED} (the judge step: speechkit judge RUN, or a recipe's steps: judge)"
NOT_COVERED = f"the run's {RunFolder.JUDGED} has no entry for this meeting"
#: The exact metrics the comparison shows beside the judged ones (the paper's Table 4).
EXACT_BESIDE = ("assignee_accuracy", "assignee_accuracy_partial", "action_item_f1", "summary_fact_recall",
                "number_recall", "term_recall", "speaker_consistency")


def _summary(dimension: str) -> Any:
    def read(details: Details) -> Ratio | None:
        d = details.get(SUMMARY_DETAIL)
        return Ratio(d[dimension], 1) if d else None
    return read


def _items(detail: str) -> Any:
    def read(details: Details) -> Ratio | None:
        d = details.get(detail)
        return Ratio(d["score_sum"], d["items"]) if d else None
    return read


_NEEDS = (RunFolder.JUDGED,)
#: The judged metrics, in the order of scores.json.
JUDGED_METRICS: tuple[Metric, ...] = (
    Metric(DESCRIPTION, "judged desc. quality", "JDescQ", JUDGED, "higher", SCORE_1_TO_5, _NEEDS,
           "no action item of the notes matched a gold one", _items(ITEMS_DETAIL), decimals=2, judged=True),
    *(Metric(f"judged_{d}", f"judged {d}", f"J{d[:5].capitalize()}", JUDGED, "higher", SCORE_1_TO_5,
             _NEEDS, "the summary was not judged", _summary(d), decimals=2, judged=True) for d in DIMENSIONS),
    Metric(DESCRIPTION_ALL, "judged desc. all items", "JDescQAll", JUDGED, "higher", SCORE_1_TO_5, _NEEDS,
           "the notes have no action item", _items(ALL_ITEMS_DETAIL), decimals=2, judged=True),
)


def _score(value: Any) -> bool:
    return type(value) is int and value in SCALE


def read_judged(path: Any) -> dict[str, Any]:
    """A judged.json read back and checked where scores.json takes figures from it (one of schema
    ``speechkit.judged/1``, written before items were judged, has none)."""
    judged = read_json(path)
    meetings = judged.get("meetings") if isinstance(judged, dict) else None
    if not isinstance(meetings, dict) or not str(judged.get("schema", "")).startswith("speechkit.judged/"):
        raise FormatError(path, "not a speechkit judged.json (schema speechkit.judged/3)")
    for mid, m in meetings.items():
        if not isinstance(m, dict):
            raise FormatError(path, "expected an object", field=f"meetings.{mid}")
        scores, items = m.get("scores"), m.setdefault("items", [])
        if scores is not None and not (isinstance(scores, dict) and all(_score(scores.get(d)) for d in DIMENSIONS)):
            raise FormatError(path, "expected an integer 1-5 per dimension", field=f"meetings.{mid}.scores")
        if not isinstance(items, list) or not all(isinstance(i, dict) and (i.get("score") is None or _score(i["score"]))
                                                  for i in items):
            raise FormatError(path, "expected the judged items, each score null or an integer 1-5",
                              field=f"meetings.{mid}.items")
    return judged


class JudgedFamily(StepFamily):
    """The judged metrics from the run's ``judged.json`` (none without a run folder)."""

    name = JUDGED
    metrics = JUDGED_METRICS
    title = "LLM-judged scores"
    what = "judged"
    detail_numbers = {SUMMARY_DETAIL: DIMENSIONS, ITEMS_DETAIL: ("items", "score_sum"),
                      ALL_ITEMS_DETAIL: ("items", "score_sum")}
    beside = EXACT_BESIDE

    def table_note(self, settings: dict[str, Any]) -> str:
        check = settings.get("check_passed")
        return (f"Scores 1-5 by the judge {settings.get('judge_model')}"
                + ("; the judge FAILED its check: read them as noise" if check is False else "") + ".")

    def fold(self, scores: dict[str, Any], run: ScoringRun) -> None:
        if run.folder is None:
            return
        path = run.folder.file(RunFolder.JUDGED)
        judged = read_judged(path) if path.is_file() else None
        ratios: dict[str, dict[str, Ratio]] = {}
        reasons: dict[str, dict[str, str]] = {}
        for mid, entry in scores["meetings"].items():
            m = (judged or {}).get("meetings", {}).get(mid)
            if m is None:
                reasons[mid] = dict.fromkeys(self.keys, NOT_COVERED if judged else NO_JUDGED)
                continue
            ratios[mid], reasons[mid] = {}, {}
            if m.get("scores") is not None:
                entry["details"][SUMMARY_DETAIL] = {d: m["scores"][d] for d in DIMENSIONS}
                ratios[mid].update({f"judged_{d}": Ratio(m["scores"][d], 1) for d in DIMENSIONS})
            else:
                reasons[mid].update({f"judged_{d}": m.get("reason") or "not judged" for d in DIMENSIONS})
            failed = next((i.get("reason") for i in m["items"] if i.get("reason")), None)
            for key, detail, matched_only in ((DESCRIPTION, ITEMS_DETAIL, True),
                                              (DESCRIPTION_ALL, ALL_ITEMS_DETAIL, False)):
                given = [i["score"] for i in m["items"]
                         if i.get("score") is not None and (i.get("matched", True) or not matched_only)]
                if given:
                    entry["details"][detail] = {"items": len(given), "score_sum": sum(given)}
                    ratios[mid][key] = Ratio(sum(given), len(given))
                else:
                    reasons[mid][key] = ((m.get("items_reason") if matched_only else None) or failed
                                         or "no item was judged")
        self.fold_ratios(scores, ratios, reasons)
        scores["settings"][self.name] = {
            "file": RunFolder.JUDGED if judged else None,
            "judge_model": judged.get("judge_model") if judged else None,
            "check_passed": (judged.get("check") or {}).get("passed") if judged else None,
            "prompts": [(judged.get("judge") or {}).get("prompt"), (judged.get("item_settings") or {}).get("prompt")]
            if judged else []}
