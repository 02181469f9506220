"""A run's answers to the gold questions: ``RUN/qa.json`` (``speechkit.qa/1``), written by
``speechkit qa RUN`` or a recipe's ``qa`` step, read back by scoring.

Layout (docs/scores-schema.md, its qa.json section)::

    {"schema": "speechkit.qa/1", "backend": {"backend": "extractive", ...its options},
     "workspace": ROOT,
     "meetings": {"m01": {"level": 3, "answers": [{"id": "m01-q01", "type": "who_owns",
                  "question": "...", "answer": "...", "gold": "...", "right": true,
                  "right_lenient": true}], "stats": {...}}},
     "not_applicable": {"m04": "why the meeting has no answers"},
     "settings": {"bootstrap": {...}}, "scores": {"qa_accuracy": {"value": ..., "ci_low": ...}, ...}}
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from speechkit.errors import FormatError
from speechkit.io.jsonfile import read_json

QA_SCHEMA = "speechkit.qa/1"


def read_answers(path: str | Path) -> dict[str, dict[str, str] | None]:
    """The answers of a ``qa.json``: meeting id -> question id -> answer text; None for a meeting
    the file lists as not applicable (its QA backend got no usable answer)."""
    data = read_json(path)
    if not isinstance(data, dict) or data.get("schema") != QA_SCHEMA:
        raise FormatError(path, f"not a {QA_SCHEMA} file (written by speechkit qa)", field="schema")
    meetings = data.get("meetings")
    if not isinstance(meetings, dict):
        raise FormatError(path, "expected an object of meetings", field="meetings")
    not_applicable = data.get("not_applicable", {})
    if not isinstance(not_applicable, dict) or not all(isinstance(r, str) for r in not_applicable.values()):
        raise FormatError(path, "expected an object of meeting ids and reasons", field="not_applicable")
    out: dict[str, dict[str, str] | None] = {}
    for mid, entry in meetings.items():
        answers = entry.get("answers") if isinstance(entry, dict) else None
        if not isinstance(answers, list):
            raise FormatError(path, "expected a list of answers", field=f"meetings.{mid}.answers")
        found: dict[str, str] = {}
        for i, a in enumerate(answers):
            if not (isinstance(a, dict) and isinstance(a.get("id"), str) and isinstance(a.get("answer"), str)):
                raise FormatError(path, "expected an object with the strings id and answer",
                                  field=f"meetings.{mid}.answers[{i}]")
            if a["id"] in found:
                raise FormatError(path, f"a second answer to question {a['id'][:80]!r}",
                                  field=f"meetings.{mid}.answers[{i}]")
            found[a["id"]] = a["answer"]
        out[mid] = None if mid in not_applicable else found
    return out


def answers_document(backend: dict[str, Any], workspace: str, meetings: dict[str, Any],
                     not_applicable: dict[str, str], settings: dict[str, Any],
                     scores: dict[str, Any]) -> dict[str, Any]:
    """The ``qa.json`` mapping (the module docstring's layout)."""
    return {"schema": QA_SCHEMA, "backend": backend, "workspace": workspace, "meetings": meetings,
            "not_applicable": not_applicable, "settings": settings, "scores": scores}
