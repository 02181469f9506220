"""The summarize stage's report section: the notes metrics per meeting, and per meeting the gold
and predicted action items side by side and the decisions found and missed."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from speechkit.io.markdown import cell, per_meeting_table
from speechkit.io.run_view import RunView
from speechkit.io.scores import MeetingScores
from speechkit.stages.summarize.metrics import NOTES, NOTES_METRICS

_DETAIL = "meeting_notes"


def _assignee(match: Mapping[str, Any]) -> str:
    """The predicted assignee of a matched action item, marked ✓ (the gold person's canonical name) or
    ✗ (with the partial credit where it is not 0)."""
    name = cell(match["predicted"]["assignee"], "(none)")
    if match["assignee_right"] is None:  # the gold item has no assignee: not scored
        return name
    if match["assignee_right"]:
        return f"{name} ✓"
    credit = match["assignee_credit"]
    return f"{name} ✗" + (f" (partial {credit:.2f})" if credit else "")


def _meeting_notes(meeting: MeetingScores) -> list[str]:
    """One meeting's gold and predicted action items side by side and its decisions."""
    mid, notes = meeting.id, meeting.detail(_DETAIL)
    if not notes:
        return [f"### {mid}", "", f"Not applicable: {meeting.reason(NOTES_METRICS[0].key)}.", ""]
    lines = [f"### {mid}", "", f"Action items: {notes['matched_items']} of {notes['gold_items']} gold matched, "
             f"{notes['predicted_items']} predicted.", "",
             "| gold action item | gold assignee | predicted action item | predicted assignee | similarity |",
             "|---|---|---|---|---|"]
    for m in notes["matches"]:
        lines.append(f"| {cell(m['gold']['description'])} | {cell(m['gold']['assignee'], '(none)')} | "
                     f"{cell(m['predicted']['description'])} | {_assignee(m)} | {m['similarity']:.2f} |")
    lines += [f"| {cell(g['description'])} | {cell(g['assignee'], '(none)')} | (missed) | | |"
              for g in notes["missed_items"]]
    lines += [f"| (extra) | | {cell(p['description'])} | {cell(p['assignee'], '(none)')} | |"
              for p in notes["extra_items"]]
    decisions = notes["decisions"]
    lines += ["", f"Decisions: {notes['decisions_found']} of {len(decisions)} found." if decisions
              else "Decisions: none in the gold notes.", ""]
    if decisions:
        lines += [f"- ✓ {cell(d['topic'])}: {cell(d['choice'])} (notes: {cell(d['stated'])})" if d["found"]
                  else f"- ✗ missed: {cell(d['topic'])}: {cell(d['choice'])}" for d in decisions] + [""]
    if notes["facts_missed"]:
        lines += ["Gold facts the summary does not state: "
                  + "; ".join(cell(f).rstrip(".") for f in notes["facts_missed"]), ""]
    return lines


def meeting_notes(view: RunView) -> list[str]:
    """The notes metrics per meeting, then per meeting the gold and predicted action items side by
    side (matched pairs, missed gold items, extra predicted ones; each predicted assignee marked ✓
    right or ✗ wrong) and the gold decisions found and missed. Where no meeting has both the run's
    notes and gold notes, one line says why."""
    scores = view.scores
    lines = ["## Meeting notes", ""]
    if not any(_DETAIL in m.details for m in scores.meetings.values()):
        reasons = dict.fromkeys(scores.not_applicable(m.key) or "no meetings" for m in NOTES_METRICS)
        return lines + [f"Not applicable: {'; '.join(reasons)}.", ""]
    settings = scores.settings.get(NOTES) or {}
    model = f" ({settings['model']})" if settings.get("model") else ""
    lines += [f"Action items matched one-to-one by {settings.get('similarity')} similarity{model} >= "
              f"{settings.get('threshold')}. A predicted assignee is ✓ when written as the gold person's canonical "
              "name, else ✗ (partial credit: the share of the name's words it holds).", ""]
    lines += per_meeting_table(scores, NOTES_METRICS) + [""]
    for meeting in scores.meetings.values():
        lines += _meeting_notes(meeting)
    return lines

