"""Reading a ``scores.json`` back (``speechkit compare``): bounded, and checked before anything uses it.

A scores.json may have been edited by hand or damaged. :func:`read_scores` reads it through the
bounded JSON reader (:mod:`speechkit.io.jsonfile`: a regular file of bounded size, nesting and
number length, no NaN or infinity) and checks every field that a comparison reads: objects where
objects belong, lists where lists belong, and every count, total and value a finite number >= 0.
Every problem is a :class:`~speechkit.errors.FormatError` naming the file and the field
(``meetings.m1.details.wer.errors: expected a number >= 0, got 'x'``).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterator

from speechkit.errors import FormatError, brief
from speechkit.io.jsonfile import read_json

SCHEMA_PREFIX = "speechkit.scores/"

NUMBER, TEXT, MAPPING, LIST = "a number >= 0", "a string", "an object", "a list"
# The fields a comparison reads: a path ('*' matches every key of an object) -> what it must hold
# when present (None is allowed everywhere but where a key is listed in _REQUIRED).
FIELDS: dict[str, str] = {
    "source": MAPPING, "totals": MAPPING, "aggregate": MAPPING, "meetings": MAPPING,
    "totals.*": MAPPING, "totals.*.numerator": NUMBER, "totals.*.denominator": NUMBER,
    "aggregate.*": MAPPING, "aggregate.*.value": NUMBER, "aggregate.*.ci_low": NUMBER, "aggregate.*.ci_high": NUMBER,
    "meetings.*": MAPPING, "meetings.*.*": MAPPING, "meetings.*.*.value": NUMBER,
    "meetings.*.details": MAPPING, "meetings.*.details.speakers": MAPPING,
    "meetings.*.details.wer.errors": NUMBER, "meetings.*.details.wer.reference_words": NUMBER,
    "meetings.*.details.number_recall.found": LIST, "meetings.*.details.number_recall.spoken": LIST,
    "meetings.*.details.term_recall.found": LIST, "meetings.*.details.term_recall.spoken": LIST,
    "meetings.*.details.speakers.basis": TEXT, "meetings.*.details.speakers.consistency": MAPPING,
    "meetings.*.details.speakers.consistency.same_name_pairs": NUMBER,
    "meetings.*.details.speakers.consistency.pairs": NUMBER,
    "meetings.*.details.speakers.persons": MAPPING, "meetings.*.details.speakers.persons.*": MAPPING,
    "meetings.*.details.speakers.persons.*.correctly_named_words": NUMBER,
    "meetings.*.details.speakers.persons.*.words": NUMBER,
    "meetings.*.details.cpwer.errors": NUMBER, "meetings.*.details.cpwer.length": NUMBER,
    "meetings.*.details.tcpwer.errors": NUMBER, "meetings.*.details.tcpwer.length": NUMBER,
    "meetings.*.details.diarization.confusion_s": NUMBER, "meetings.*.details.diarization.missed_detection_s": NUMBER,
    "meetings.*.details.diarization.false_alarm_s": NUMBER, "meetings.*.details.diarization.total_s": NUMBER,
    "meetings.*.details.diarization.jer": NUMBER,
}
# Keys an object at a path must have (a total without its numerator cannot be checked).
_REQUIRED = {"totals.*": ("numerator", "denominator"),
             "meetings.*.details.speakers.consistency": ("same_name_pairs", "pairs"),
             "meetings.*.details.speakers.persons.*": ("correctly_named_words", "words")}
_DETAIL_KEYS = {"wer": ("errors", "reference_words"), "number_recall": ("found", "spoken"),
                "term_recall": ("found", "spoken"), "cpwer": ("errors", "length"), "tcpwer": ("errors", "length"),
                "diarization": ("confusion_s", "missed_detection_s", "false_alarm_s", "total_s", "jer")}
# The counts the notes metrics are read back from (speechkit.metrics.notes).
_DETAIL_KEYS["meeting_notes"] = ("predicted_items", "gold_items", "matched_items", "assignees_scored",
                                 "assignees_right", "assignee_credit", "gold_decisions", "decisions_found",
                                 "gold_facts", "facts_stated", "gold_numbers", "numbers_stated", "summary_names",
                                 "summary_names_known")
FIELDS.update({f"meetings.*.details.meeting_notes.{key}": NUMBER for key in _DETAIL_KEYS["meeting_notes"]})
_REQUIRED.update({f"meetings.*.details.{metric}": keys for metric, keys in _DETAIL_KEYS.items()})
FIELDS.update({f"meetings.*.details.{metric}": MAPPING for metric in _DETAIL_KEYS})


def _at(data: Any, pattern: str) -> Iterator[tuple[str, Any]]:
    """``(field, value)`` for every present field that ``pattern`` matches."""
    found = [("", data)]
    for part in pattern.split("."):
        step = []
        for where, value in found:
            if not isinstance(value, dict):
                continue
            keys = value.keys() if part == "*" else [part] if part in value else []
            step += [(f"{where}.{key}" if where else str(key), value[key]) for key in keys]
        found = step
    return iter(found)


def _holds(value: Any, kind: str) -> bool:
    if kind == NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return isinstance(value, {TEXT: str, MAPPING: dict, LIST: list}[kind])


def check_scores(scores: Any, path: str | Path) -> dict[str, Any]:
    """``scores`` (a parsed scores.json) if every field a comparison reads holds what it should."""
    if not isinstance(scores, dict) or not str(scores.get("schema", "")).startswith(SCHEMA_PREFIX) \
            or not isinstance(scores.get("meetings"), dict):
        raise FormatError(path, f"not a speechkit scores.json (schema {SCHEMA_PREFIX}1)")
    for pattern, kind in FIELDS.items():
        for field, value in _at(scores, pattern):
            if value is not None and not _holds(value, kind):
                raise FormatError(path, f"expected {kind}, got {brief(value)}", field=field)
    for pattern, keys in _REQUIRED.items():
        for field, value in _at(scores, pattern):
            missing = [k for k in keys if not isinstance(value, dict) or value.get(k) is None] \
                if value is not None else []
            if missing and not (pattern.endswith("diarization") and missing == ["jer"]):
                raise FormatError(path, f"missing {', '.join(missing)}", field=field)
    return scores


def read_scores(path: str | Path, error: type[FormatError] = FormatError) -> dict[str, Any]:
    """The checked contents of a scores.json (see the module docstring); problems raise ``error``."""
    try:
        return check_scores(read_json(path), path)
    except FormatError as exc:
        problem = exc.problem
        if problem == "file not found":
            problem = "no scores.json: give a run folder (speechkit run/recipe) or its scores.json"
        raise error(exc.path, problem, line=exc.line, field=exc.field) from None
