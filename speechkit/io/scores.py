"""A ``scores.json`` read back: bounded, checked before anything uses it, and typed (:class:`Scores`).

A scores.json may have been edited by hand or damaged. :func:`read_scores` reads it through the
bounded JSON reader (:mod:`speechkit.io.jsonfile`: a regular file of bounded size, nesting and
number length, no NaN or infinity) and checks every field that a comparison reads: objects where
objects belong, lists where lists belong, and every count, total and value a finite number >= 0.
Every problem is a :class:`~speechkit.errors.FormatError` naming the file and the field
(``meetings.m1.details.wer.errors: expected a number >= 0, got 'x'``).
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
# Keys an object at a path must have (a total without its numerator cannot be checked). A person
# named by speech time (``speakers.basis`` "seconds": the reference has no words) has no word counts.
_REQUIRED = {"totals.*": ("numerator", "denominator"),
             "meetings.*.details.speakers.consistency": ("same_name_pairs", "pairs")}
_PERSON_WORDS = ("correctly_named_words", "words")
_DETAIL_KEYS = {"wer": ("errors", "reference_words"), "number_recall": ("found", "spoken"),
                "term_recall": ("found", "spoken"), "cpwer": ("errors", "length"), "tcpwer": ("errors", "length"),
                "diarization": ("confusion_s", "missed_detection_s", "false_alarm_s", "total_s", "jer")}
_REQUIRED.update({f"meetings.*.details.{metric}": keys for metric, keys in _DETAIL_KEYS.items()})
FIELDS.update({f"meetings.*.details.{metric}": MAPPING for metric in _DETAIL_KEYS})


@dataclass(frozen=True)
class MeetingScores:
    """One meeting's entry of a scores.json: each metric's value, its details and n/a reasons."""

    id: str
    data: Mapping[str, Any]

    def meeting_mean(self, key: str) -> Mapping[str, Any]:
        """Metric ``key``'s mean over the meetings' own values (``value``, ``ci_low``, ``ci_high``,
        ``meetings``; {}: not in the file, as in scores written before it was)."""
        return (self.data.get("meeting_mean") or {}).get(key) or {}

    def value(self, key: str) -> float | None:
        """The meeting's value of metric ``key`` (None: not applicable)."""
        return (self.data.get(key) or {}).get("value")

    @property
    def details(self) -> Mapping[str, Any]:
        """What the meeting's metrics were computed from (``details``)."""
        return self.data.get("details") or {}

    def detail(self, key: str) -> Any:
        """``details.<key>`` (None where it was not computed)."""
        return self.details.get(key)

    def reason(self, key: str, default: str = "not scored") -> str:
        """Why metric ``key`` is not applicable in this meeting."""
        return (self.details.get("not_applicable") or {}).get(key, default)


@dataclass(frozen=True)
class Scores:
    """A scores.json (docs/scores-schema.md) as reports and comparisons read it; ``data`` is the
    mapping as written."""

    data: Mapping[str, Any]

    @property
    def meetings(self) -> dict[str, MeetingScores]:
        """Each meeting's entry, in the order of the file."""
        return {mid: MeetingScores(mid, entry) for mid, entry in (self.data.get("meetings") or {}).items()}

    def aggregate(self, key: str) -> Mapping[str, Any]:
        """Metric ``key`` over the meetings: ``value``, ``ci_low``, ``ci_high`` ({}: not in the file)."""
        return (self.data.get("aggregate") or {}).get(key) or {}

    def meeting_mean(self, key: str) -> Mapping[str, Any]:
        """Metric ``key``'s mean over the meetings' own values (``value``, ``ci_low``, ``ci_high``,
        ``meetings``; {}: not in the file, as in scores written before it was)."""
        return (self.data.get("meeting_mean") or {}).get(key) or {}

    def value(self, key: str) -> float | None:
        """The aggregate value of metric ``key`` (None: not applicable)."""
        return self.aggregate(key).get("value")

    def total(self, key: str) -> Mapping[str, Any] | None:
        """Metric ``key``'s ``totals`` entry (numerator, denominator, meetings)."""
        return (self.data.get("totals") or {}).get(key)

    def not_applicable(self, key: str) -> str | None:
        """Why metric ``key`` has no aggregate value (None: it has one)."""
        return (self.data.get("not_applicable") or {}).get(key)

    @property
    def settings(self) -> Mapping[str, Any]:
        return self.data.get("settings") or {}

    @property
    def baselines(self) -> Mapping[str, Any]:
        """The trivial systems' aggregates (``baselines``: baseline -> metric -> estimate)."""
        return self.data.get("baselines") or {}

    @property
    def components(self) -> Mapping[str, Any]:
        """The error counts summed over meetings (``components``: metric -> counts)."""
        return self.data.get("components") or {}

    @property
    def workspace(self) -> str | None:
        """The workspace the run was scored against (``source.workspace``)."""
        return (self.data.get("source") or {}).get("workspace")


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


def check_scores(scores: Any, path: str | Path, details: Mapping[str, tuple[str, ...]] | None = None,
                 ) -> dict[str, Any]:
    """``scores`` (a parsed scores.json) if every field a comparison reads holds what it should;
    ``details``: the numbers of more ``details.<key>`` entries to check, as :data:`FIELDS`' are."""
    fields, required = dict(FIELDS), dict(_REQUIRED)
    for detail, keys in (details or {}).items():
        fields[f"meetings.*.details.{detail}"] = MAPPING
        fields.update({f"meetings.*.details.{detail}.{key}": NUMBER for key in keys})
        required[f"meetings.*.details.{detail}"] = keys
    if not isinstance(scores, dict) or not str(scores.get("schema", "")).startswith(SCHEMA_PREFIX) \
            or not isinstance(scores.get("meetings"), dict):
        raise FormatError(path, f"not a speechkit scores.json (schema {SCHEMA_PREFIX}1)")
    for pattern, kind in fields.items():
        for field, value in _at(scores, pattern):
            if value is not None and not _holds(value, kind):
                raise FormatError(path, f"expected {kind}, got {brief(value)}", field=field)
    for pattern, keys in required.items():
        for field, value in _at(scores, pattern):
            _require(value, keys, field, path, pattern.endswith("diarization"))
    for mid, entry in scores["meetings"].items():
        speakers = ((entry or {}).get("details") or {}).get("speakers") or {}
        if (speakers.get("basis") or "words") == "words":
            for pid, person in (speakers.get("persons") or {}).items():
                _require(person, _PERSON_WORDS, f"meetings.{mid}.details.speakers.persons.{pid}", path)
    return scores


def _require(value: Any, keys: tuple[str, ...], field: str, path: str | Path, jer: bool = False) -> None:
    """Raise unless ``value`` (None: absent, allowed) holds every one of ``keys``; ``jer``: a
    diarization detail may lack its JER."""
    missing = [k for k in keys if not isinstance(value, dict) or value.get(k) is None] if value is not None else []
    if missing and not (jer and missing == ["jer"]):
        raise FormatError(path, f"missing {', '.join(missing)}", field=field)


def read_scores(path: str | Path, error: type[FormatError] = FormatError,
                details: Mapping[str, tuple[str, ...]] | None = None) -> Scores:
    """The checked contents of a scores.json (see the module docstring); problems raise ``error``.
    ``details``: the numbers of ``details.<key>`` that more metric families read back (each must
    be a number >= 0 where the detail is there)."""
    try:
        return Scores(check_scores(read_json(path), path, details))
    except FormatError as exc:
        problem = exc.problem
        if problem == "file not found":
            problem = "no scores.json: give a run folder (speechkit run/recipe) or its scores.json"
        raise error(exc.path, problem, line=exc.line, field=exc.field) from None
