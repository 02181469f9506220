"""The notes metrics: a run's meeting notes (:meth:`~speechkit.io.run_folder.RunFolder.notes`) against the
workspace's gold notes.

Each meeting's notes are scored by :func:`speechkit.metrics.notes.score_notes` (what each metric
means is said there); a meeting without the run's notes or gold notes has every notes metric
n/a with the reason. The matching settings (the similarity measure, its model and threshold) go
to scores.json ``settings.notes``.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from speechkit.io.notes import read_gold_notes, run_notes
from speechkit.io.run_folder import NOTES as NOTES_FILE
from speechkit.metrics.bootstrap import Ratio
from speechkit.metrics.catalog import FRACTION, Details, Metric, ratio_fields
from speechkit.metrics.family import MeetingFamily, ScoringRun
from speechkit.metrics.notes import score_notes, vocabulary
from speechkit.notes import GoldNotes, Notes
from speechkit.text_similarity import TextSimilarity, text_similarity

NOTES = "notes"
_NEEDS = ("gold notes", "run notes", "usable run notes")
_DETAIL = "meeting_notes"
_NO_MATCH = "no action item of the notes matched a gold one with an assignee"
NO_GOLD = "no gold notes for this meeting (a workspace's meetings/<id>/notes.json)"
NO_RUN_NOTES = f"the run has no notes for this meeting ({NOTES_FILE.pattern}, written by the summarize stage)"
FAILED = "the run's notes of this meeting came from no usable answer"


def _item_f1(details: Details) -> Ratio | None:
    """Action-item F1 as a ratio: 2 x matched / (predicted + gold), so that summed over meetings it is
    the harmonic mean of the pooled precision and recall."""
    d = details.get(_DETAIL)
    return Ratio(2 * d["matched_items"], d["predicted_items"] + d["gold_items"]) if d else None


def _metric(key: str, label: str, short: str, empty: str, numerator: str, denominator: str) -> Metric:
    return Metric(key, label, short, NOTES, "higher", FRACTION, _NEEDS, empty,
                  ratio_fields(_DETAIL, numerator, denominator))


#: The notes metrics, in the order of scores.json.
NOTES_METRICS: tuple[Metric, ...] = (
    _metric("assignee_accuracy", "assignee accuracy", "AsgnAcc", _NO_MATCH, "assignees_right", "assignees_scored"),
    _metric("assignee_accuracy_partial", "assignee acc. partial", "AsgnPart", _NO_MATCH, "assignee_credit",
            "assignees_scored"),
    _metric("action_item_precision", "action-item precision", "ItemP", "the notes have no action items",
            "matched_items", "predicted_items"),
    _metric("action_item_recall", "action-item recall", "ItemR", "the gold notes have no action items",
            "matched_items", "gold_items"),
    Metric("action_item_f1", "action-item F1", "ItemF1", NOTES, "higher", FRACTION, _NEEDS,
           "no action items, predicted or gold", _item_f1),
    _metric("decision_recall", "decision recall", "DecRecall", "the gold notes have no decisions",
            "decisions_found", "gold_decisions"),
    _metric("summary_fact_recall", "summary fact recall", "FactRecall", "the gold notes have no facts",
            "facts_stated", "gold_facts"),
    _metric("summary_entity_precision", "summary entity prec.", "EntityPrec",
            "the summary names no people, projects or terms", "summary_names_known", "summary_names"),
    _metric("summary_number_recall", "summary number recall", "SumNumRecall", "the gold notes state no numbers",
            "numbers_stated", "gold_numbers"),
)


def _read(run: ScoringRun, meeting: str) -> tuple[GoldNotes | None, Notes | None]:
    """The gold notes of ``meeting`` and the run's (None where there are none)."""
    found = run.workspace.meeting(meeting).notes if run.workspace is not None else None
    gold = read_gold_notes(found, meeting) if found is not None else None
    return gold, run_notes(run.folder.notes(meeting), meeting) if run.folder is not None else None


class NotesFamily(MeetingFamily):
    """The notes metrics of every meeting with the run's notes and gold notes."""

    name = NOTES
    metrics = NOTES_METRICS
    title = "Meeting notes"
    what = "notes"
    detail_numbers = {_DETAIL: ("predicted_items", "gold_items", "matched_items", "assignees_scored",
                                "assignees_right", "assignee_credit", "gold_decisions", "decisions_found",
                                "gold_facts", "facts_stated", "gold_numbers", "numbers_stated", "summary_names",
                                "summary_names_known")}

    def table_note(self, settings: Mapping[str, Any]) -> str:
        return (f"Action items matched by {settings.get('similarity')} similarity >= {settings.get('threshold')}; "
                f"F1 {settings.get('f1')}.")

    def score(self, run: ScoringRun) -> dict[str, Any]:
        known = frozenset(vocabulary(run.workspace)) if run.workspace is not None else frozenset()
        similarity: TextSimilarity | None = None
        for m in run.meetings:
            gold, predicted = _read(run, m.id)
            if gold is None:
                m.missing["gold notes"] = NO_GOLD
            if predicted is None:
                m.missing["run notes"] = NO_RUN_NOTES
            elif predicted.failed is not None:
                m.missing["usable run notes"] = f"{FAILED}: {predicted.failed}"
            m.mark_missing(self.metrics)
            if not all(m.applies(metric) for metric in self.metrics):
                continue
            similarity = similarity or text_similarity(run.options.similarity)
            result = score_notes(predicted, gold, known, similarity)
            for metric in self.metrics:
                m.set(metric, result.ratios[metric.key])
            m.details[_DETAIL] = result.details
        return {"similarity": similarity.name if similarity else None,
                "model": getattr(similarity, "model_name", None),
                "threshold": similarity.threshold if similarity else None,
                "requested": run.options.similarity,
                "matching": "action items one-to-one (Hungarian) on description similarity >= threshold; "
                            "decisions one-to-one where the prediction holds every content word of the gold choice",
                "f1": "pooled: 2 x matched items / (predicted + gold items), summed over meetings "
                      "(the harmonic mean of the pooled precision and recall)"}
