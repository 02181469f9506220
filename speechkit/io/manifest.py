"""The workspace manifest (``workspace.yaml``): load with validation, and write.

The format is documented in docs/workspace-format.md. Every problem is reported as a
:class:`~speechkit.errors.ManifestError` naming the manifest file, the field (for example
``meetings[2].audio``) and what is wrong.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from speechkit.errors import ManifestError
from speechkit.io.atomic import write_text
from speechkit.workspace import ARTIFACT_KINDS, Artifact, Meeting, Person, TermSet, Workspace

MANIFEST_NAME = "workspace.yaml"
FORMAT_VERSION = "speechkit-workspace/1"
TOP_KEYS = {"format", "name", "people", "terms", "meetings", "artifacts", "metadata"}
PERSON_KEYS = {"id", "name", "nicknames", "role", "enrollment", "enrollments"}
MEETING_KEYS = {"id", "date", "title", "kind", "audio", "reference", "rttm", "canonical", "attendees", "terms"}
ARTIFACT_KEYS = {"id", "kind", "path", "date", "meeting", "title"}


class _Checker:
    """Validation helpers bound to one manifest file and its workspace folder."""

    def __init__(self, manifest: Path) -> None:
        self.manifest = manifest
        self.root = manifest.parent.resolve()

    def fail(self, field: str | None, problem: str) -> ManifestError:
        return ManifestError(self.manifest, problem, field=field)

    def mapping(self, value: Any, field: str, allowed: set[str]) -> dict:
        if not isinstance(value, dict):
            raise self.fail(field, f"expected a mapping, got {type(value).__name__}")
        unknown = sorted(set(map(str, value)) - allowed)
        if unknown:
            raise self.fail(field, f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}")
        return value

    def text(self, obj: dict, key: str, field: str, required: bool = True) -> str | None:
        value = obj.get(key)
        if value is None:
            if required:
                raise self.fail(f"{field}.{key}", "missing")
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{field}.{key}", f"expected a non-empty string, got {value!r}")
        return value.strip()

    def strings(self, obj: dict, key: str, field: str) -> tuple[str, ...]:
        value = obj.get(key) or []
        if not isinstance(value, list):
            raise self.fail(f"{field}.{key}", f"expected a list, got {type(value).__name__}")
        out = []
        for i, item in enumerate(value):
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                item = str(item)
            if not isinstance(item, str) or not item.strip():
                raise self.fail(f"{field}.{key}[{i}]", f"expected a non-empty string, got {item!r}")
            out.append(item.strip())
        return tuple(out)

    def path(self, value: Any, field: str, must_exist: bool = True) -> Path:
        """A path relative to the workspace folder that stays inside it (symlinks resolved)."""
        if not isinstance(value, str) or not value.strip():
            raise self.fail(field, f"expected a relative path, got {value!r}")
        rel = Path(value)
        if rel.is_absolute():
            raise self.fail(field, f"absolute path {value!r} not allowed; paths are relative to {self.root}")
        resolved = (self.root / rel).resolve()
        if resolved != self.root and self.root not in resolved.parents:
            raise self.fail(field, f"path {value!r} leaves the workspace folder {self.root}")
        if must_exist and not resolved.is_file():
            raise self.fail(field, f"file {value!r} not found in {self.root}")
        return resolved

    def date(self, value: Any, field: str, required: bool = True) -> dt.date | dt.datetime | None:
        if value is None and not required:
            return None
        if isinstance(value, (dt.date, dt.datetime)):
            return value
        if isinstance(value, str):
            for parse in (dt.date.fromisoformat, dt.datetime.fromisoformat):
                try:
                    return parse(value)
                except ValueError:
                    pass
        raise self.fail(field, f"expected an ISO date or date-time (2026-03-02 or 2026-03-02T09:30), got {value!r}")

    def terms(self, value: Any, field: str) -> TermSet:
        obj = self.mapping(value, field, {"numbers", "jargon"})
        return TermSet(numbers=self.strings(obj, "numbers", field), jargon=self.strings(obj, "jargon", field))

    def unique(self, ids: list[str], field: str) -> None:
        seen: set[str] = set()
        for i, item in enumerate(ids):
            if item in seen:
                raise self.fail(f"{field}[{i}].id", f"duplicate id {item!r}")
            seen.add(item)


def _sort_key(day: dt.date | dt.datetime) -> dt.datetime:
    return day if isinstance(day, dt.datetime) else dt.datetime.combine(day, dt.time())


def load_workspace(path: str | Path) -> Workspace:
    """Load and validate a workspace from its folder or its manifest file."""
    path = Path(path)
    manifest = path / MANIFEST_NAME if path.is_dir() else path
    if not manifest.is_file():
        raise ManifestError(manifest, "workspace manifest not found")
    c = _Checker(manifest)
    try:
        data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ManifestError(manifest, f"invalid YAML: {getattr(exc, 'problem', exc)}",
                            line=mark.line + 1 if mark else None) from None
    except UnicodeDecodeError:
        raise ManifestError(manifest, "not UTF-8 text") from None
    data = c.mapping(data, "(top level)", TOP_KEYS)
    version = data.get("format", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise c.fail("format", f"unsupported format {version!r}; this speechkit reads {FORMAT_VERSION!r}")
    name = c.text(data, "name", "workspace")

    raw_people = data.get("people")
    if not isinstance(raw_people, list) or not raw_people:
        raise c.fail("people", "expected a non-empty list of people")
    people = []
    for i, raw in enumerate(raw_people):
        f = f"people[{i}]"
        obj = c.mapping(raw, f, PERSON_KEYS)
        clips = c.strings(obj, "enrollments", f)
        if obj.get("enrollment") is not None:
            clips = (c.text(obj, "enrollment", f),) + clips
        enrollments = tuple(c.path(clip, f"{f}.enrollment") for clip in clips)
        people.append(Person(id=c.text(obj, "id", f), name=c.text(obj, "name", f),
                             nicknames=c.strings(obj, "nicknames", f), role=c.text(obj, "role", f, required=False),
                             enrollments=enrollments))
    c.unique([p.id for p in people], "people")
    person_ids = {p.id for p in people}

    terms = c.terms(data.get("terms") or {}, "terms")

    raw_meetings = data.get("meetings")
    if not isinstance(raw_meetings, list) or not raw_meetings:
        raise c.fail("meetings", "expected a non-empty list of meetings")
    meetings = []
    for i, raw in enumerate(raw_meetings):
        f = f"meetings[{i}]"
        obj = c.mapping(raw, f, MEETING_KEYS)
        attendees = c.strings(obj, "attendees", f)
        for j, pid in enumerate(attendees):
            if pid not in person_ids:
                raise c.fail(f"{f}.attendees[{j}]", f"unknown person id {pid!r}")
        optional = {key: c.path(obj[key], f"{f}.{key}") if obj.get(key) is not None else None
                    for key in ("reference", "rttm", "canonical")}
        meetings.append(Meeting(
            id=c.text(obj, "id", f), date=c.date(obj.get("date"), f"{f}.date"),
            audio=c.path(obj.get("audio"), f"{f}.audio"), title=c.text(obj, "title", f, required=False),
            kind=c.text(obj, "kind", f, required=False), attendees=attendees,
            terms=c.terms(obj["terms"], f"{f}.terms") if obj.get("terms") is not None else None,
            **optional))
    c.unique([m.id for m in meetings], "meetings")
    for i in range(1, len(meetings)):
        if _sort_key(meetings[i].date) < _sort_key(meetings[i - 1].date):
            raise c.fail(f"meetings[{i}].date", f"{meetings[i].date} is before the previous meeting's "
                                                f"{meetings[i - 1].date}; list meetings in calendar order")
    meeting_ids = {m.id for m in meetings}

    raw_artifacts = data.get("artifacts") or []
    if not isinstance(raw_artifacts, list):
        raise c.fail("artifacts", f"expected a list, got {type(raw_artifacts).__name__}")
    artifacts = []
    for i, raw in enumerate(raw_artifacts):
        f = f"artifacts[{i}]"
        obj = c.mapping(raw, f, ARTIFACT_KEYS)
        kind = c.text(obj, "kind", f)
        if kind not in ARTIFACT_KINDS:
            raise c.fail(f"{f}.kind", f"unknown kind {kind!r}; expected one of {', '.join(ARTIFACT_KINDS)}")
        meeting = c.text(obj, "meeting", f, required=False)
        if meeting is not None and meeting not in meeting_ids:
            raise c.fail(f"{f}.meeting", f"unknown meeting id {meeting!r}")
        day = c.date(obj.get("date"), f"{f}.date", required=False)
        artifacts.append(Artifact(id=c.text(obj, "id", f), kind=kind, path=c.path(obj.get("path"), f"{f}.path"),
                                  date=day.date() if isinstance(day, dt.datetime) else day, meeting=meeting,
                                  title=c.text(obj, "title", f, required=False)))
    c.unique([a.id for a in artifacts], "artifacts")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise c.fail("metadata", "expected a mapping")
    return Workspace(name=name, root=c.root, people=tuple(people), meetings=tuple(meetings), terms=terms,
                     artifacts=tuple(artifacts), metadata=metadata, manifest_path=manifest.resolve())


def _rel(path: Path | None, root: Path) -> str | None:
    return None if path is None else path.resolve().relative_to(root.resolve()).as_posix()


def _terms_dict(terms: TermSet) -> dict:
    return {"numbers": list(terms.numbers), "jargon": list(terms.jargon)}


def manifest_dict(ws: Workspace) -> dict:
    """The manifest mapping for ``ws`` (paths relative to ``ws.root``)."""
    root = ws.root

    def person(p: Person) -> dict:
        d: dict[str, Any] = {"id": p.id, "name": p.name}
        if p.nicknames:
            d["nicknames"] = list(p.nicknames)
        if p.role:
            d["role"] = p.role
        if p.enrollments:
            d["enrollments"] = [_rel(e, root) for e in p.enrollments]
        return d

    def meeting(m: Meeting) -> dict:
        d: dict[str, Any] = {"id": m.id, "date": m.date.isoformat()}
        for key in ("title", "kind"):
            if getattr(m, key):
                d[key] = getattr(m, key)
        d["audio"] = _rel(m.audio, root)
        for key in ("reference", "rttm", "canonical"):
            if getattr(m, key) is not None:
                d[key] = _rel(getattr(m, key), root)
        if m.attendees:
            d["attendees"] = list(m.attendees)
        if m.terms is not None:
            d["terms"] = _terms_dict(m.terms)
        return d

    def artifact(a: Artifact) -> dict:
        d: dict[str, Any] = {"id": a.id, "kind": a.kind, "path": _rel(a.path, root)}
        if a.date:
            d["date"] = a.date.isoformat()
        if a.meeting:
            d["meeting"] = a.meeting
        if a.title:
            d["title"] = a.title
        return d

    out: dict[str, Any] = {"format": FORMAT_VERSION, "name": ws.name, "people": [person(p) for p in ws.people],
                           "terms": _terms_dict(ws.terms), "meetings": [meeting(m) for m in ws.meetings]}
    if ws.artifacts:
        out["artifacts"] = [artifact(a) for a in ws.artifacts]
    if ws.metadata:
        out["metadata"] = ws.metadata
    return out


def write_manifest(ws: Workspace, path: str | Path | None = None) -> Path:
    """Write the manifest of ``ws`` atomically (default ``ws.root / workspace.yaml``)."""
    target = Path(path) if path else ws.root / MANIFEST_NAME
    write_text(target, yaml.safe_dump(manifest_dict(ws), sort_keys=False, allow_unicode=True, width=100))
    return target
