"""The workspace manifest (``workspace.yaml``): load with validation, and write.

The format is documented in docs/workspace-format.md. Every problem is reported as a
:class:`~speechkit.errors.ManifestError` naming the manifest file, the field (for example
``meetings[2].audio``) and what is wrong; values quoted in messages are cut short.

The YAML is read strictly (:mod:`speechkit.io.yamlfile`): a key given twice in one mapping is an
error (not a silent last wins), aliases may not expand the document beyond a million nodes (an
alias bomb is refused before it is built), values may not nest too deeply, ids and the workspace
name must be safe identifiers (:mod:`speechkit.io.names`), and a term must be a string: an
unquoted ``8:30``, ``1.50`` or ``010`` (which YAML reads as the numbers 510, 1.5 and 8) is an
error asking to quote it. Other text fields given as plain numbers keep their spelling in the
file (``id: 010`` is ``"010"``).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from speechkit.errors import ManifestError, brief
from speechkit.io._lines import present_input
from speechkit.io.atomic import write_text
from speechkit.io.names import id_problem
from speechkit.io.notes import default_notes_path, read_gold_notes
from speechkit.io.yamlfile import parse_yaml
from speechkit.language import ENGLISH, SpokenLanguage, parse_language
from speechkit.workspace import ARTIFACT_KINDS, Artifact, Meeting, Person, TermSet, Workspace

MANIFEST_NAME = "workspace.yaml"
FORMAT_VERSION = "speechkit-workspace/1"
TOP_KEYS = {"format", "name", "language", "languages", "people", "terms", "meetings", "artifacts", "metadata"}
PERSON_KEYS = {"id", "name", "nicknames", "role", "enrollment", "enrollments"}
MEETING_KEYS = {"id", "date", "title", "kind", "audio", "reference", "rttm", "canonical", "attendees", "terms",
                "enrollment_only", "notes", "language", "languages"}
ARTIFACT_KEYS = {"id", "kind", "path", "date", "meeting", "title"}
_STR_TAG = "tag:yaml.org,2002:str"


def _plain_sources(node: yaml.Node, where: str = "", out: dict | None = None) -> dict[str, tuple[str, int]]:
    """``{field: (text as written, line)}`` for every unquoted scalar that YAML did not read as a string.

    Fields are named as in error messages (``meetings[0].terms.numbers[2]``); ``metadata`` is
    free-form and skipped.
    """
    out = {} if out is None else out
    if isinstance(node, yaml.ScalarNode):
        if node.tag != _STR_TAG and node.style is None:
            out[where] = (node.value, node.start_mark.line + 1)
    elif isinstance(node, yaml.SequenceNode):
        for i, child in enumerate(node.value):
            _plain_sources(child, f"{where}[{i}]", out)
    elif isinstance(node, yaml.MappingNode):
        for key_node, child in node.value:
            if isinstance(key_node, yaml.ScalarNode) and not (where == "" and key_node.value == "metadata"):
                _plain_sources(child, f"{where}.{key_node.value}" if where else key_node.value, out)
    return out


def _read_yaml(manifest: Path) -> tuple[Any, dict[str, tuple[str, int]]]:
    """The manifest's data, and the spelling of its unquoted non-string scalars (see _plain_sources)."""
    try:
        text = manifest.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ManifestError(manifest, "not UTF-8 text") from None
    except OSError as exc:
        raise ManifestError(manifest, f"cannot read: {exc.strerror or type(exc).__name__}") from None
    data, node = parse_yaml(text, manifest, ManifestError)
    return data, _plain_sources(node) if node is not None else {}


def _cut(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _join(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key


class _Checker:
    """Validation helpers bound to one manifest file and its workspace folder."""

    def __init__(self, manifest: Path, sources: dict[str, tuple[str, int]] | None = None) -> None:
        self.manifest = manifest
        self.root = manifest.parent.resolve()
        self.sources = sources or {}

    def fail(self, field: str | None, problem: str) -> ManifestError:
        return ManifestError(self.manifest, problem, field=field)

    def mapping(self, value: Any, field: str, allowed: set[str]) -> dict:
        if not isinstance(value, dict):
            raise self.fail(field, f"expected a mapping, got {type(value).__name__}")
        unknown = sorted(set(map(str, value)) - allowed)
        if unknown:
            raise self.fail(field, f"unknown key(s) {_cut(', '.join(unknown), 200)}; "
                                   f"allowed: {', '.join(sorted(allowed))}")
        return value

    def _as_written(self, value: Any, where: str) -> Any:
        """A plain number as it is spelled in the file (``010`` stays ``"010"``, not 8)."""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self.sources.get(where, (str(value), 0))[0]
        return value

    def text(self, obj: dict, key: str, field: str, required: bool = True) -> str | None:
        where = _join(field, key)
        value = obj.get(key)
        if value is None:
            if required:
                raise self.fail(where, "missing")
            return None
        value = self._as_written(value, where)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"expected a non-empty string, got {brief(value)}")
        return value.strip()

    def ident(self, obj: dict, key: str, field: str) -> str:
        """A required safe identifier (it becomes a file name: see speechkit.io.names)."""
        value = self.text(obj, key, field)
        problem = id_problem(value)
        if problem:
            raise self.fail(_join(field, key), problem)
        return value

    def strings(self, obj: dict, key: str, field: str, strict: bool = False) -> tuple[str, ...]:
        """A list of non-empty strings; with ``strict``, an unquoted number, boolean or date is an error."""
        value = obj.get(key) or []
        if not isinstance(value, list):
            raise self.fail(f"{field}.{key}", f"expected a list, got {type(value).__name__}")
        out = []
        for i, item in enumerate(value):
            where = f"{field}.{key}[{i}]"
            if strict and item is not None and not isinstance(item, str) and not isinstance(item, (list, dict)):
                written = _cut(self.sources.get(where, (str(item), 0))[0])
                kind = ("boolean" if isinstance(item, bool) else "number" if isinstance(item, (int, float))
                        else "date" if isinstance(item, dt.date) else type(item).__name__)
                raise self.fail(where, f"expected a string, got the {kind} {_cut(str(item))}: YAML reads the "
                                       f"unquoted {written} as a {kind}; quote the term: \"{written}\"")
            item = self._as_written(item, where)
            if not isinstance(item, str) or not item.strip():
                raise self.fail(where, f"expected a non-empty string, got {brief(item)}")
            out.append(item.strip())
        return tuple(out)

    def path(self, value: Any, field: str, must_exist: bool = True) -> Path:
        """A path relative to the workspace folder that stays inside it (symlinks resolved)."""
        if not isinstance(value, str) or not value.strip() or "\0" in value:
            raise self.fail(field, f"expected a relative path, got {brief(value)}")
        rel = Path(value)
        if rel.is_absolute():
            raise self.fail(field, f"absolute path {brief(value)} not allowed; paths are relative to {self.root}")
        try:
            resolved = (self.root / rel).resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long
            raise self.fail(field, f"path {brief(value)} cannot be resolved: {exc}") from None
        if resolved != self.root and self.root not in resolved.parents:
            raise self.fail(field, f"path {brief(value)} leaves the workspace folder {self.root}")
        if must_exist and not resolved.is_file():
            raise self.fail(field, f"file {brief(value)} not found in {self.root}")
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
        raise self.fail(field, f"expected an ISO date or date-time (2026-03-02 or 2026-03-02T09:30), "
                               f"got {brief(value)}")

    def language(self, obj: dict, field: str, default: SpokenLanguage | None = None) -> SpokenLanguage | None:
        """``obj``'s ``language`` (and ``languages`` for ``mixed``), ``default`` when it names none."""
        if obj.get("language") is None:
            if obj.get("languages") is not None:
                raise self.fail(_join(field, "languages"), "languages given without language: mixed")
            return default
        try:
            return parse_language(obj["language"], obj.get("languages"))
        except ValueError as e:
            raise self.fail(_join(field, "language"), str(e)) from None

    def terms(self, value: Any, field: str) -> TermSet:
        obj = self.mapping(value, field, {"numbers", "jargon"})
        return TermSet(numbers=self.strings(obj, "numbers", field, strict=True),
                       jargon=self.strings(obj, "jargon", field, strict=True))

    def unique(self, ids: list[str], field: str) -> None:
        seen: set[str] = set()
        for i, item in enumerate(ids):
            if item in seen:
                raise self.fail(f"{field}[{i}].id", f"duplicate id {brief(item)}")
            seen.add(item)


def _sort_key(day: dt.date | dt.datetime) -> dt.datetime:
    return day if isinstance(day, dt.datetime) else dt.datetime.combine(day, dt.time())


def _has_zone(day: dt.date | dt.datetime) -> bool:
    return isinstance(day, dt.datetime) and day.utcoffset() is not None


def _with_notes(meeting: Meeting, c: _Checker, field: str, names: dict[str, str]) -> Meeting:
    """The meeting with its gold notes file, validated: the one the manifest names, else
    ``meetings/<id>/notes.json`` when something is there (docs/workspace-format.md)."""
    path = meeting.notes
    if path is None and present_input(c.root / default_notes_path(meeting.id), c.root, "the workspace folder"):
        path = c.path(default_notes_path(meeting.id), field)
    if path is not None:
        read_gold_notes(path, meeting.id, names)
    return replace(meeting, notes=path)


def load_workspace(path: str | Path) -> Workspace:
    """Load and validate a workspace from its folder or its manifest file."""
    path = Path(path)
    manifest = path / MANIFEST_NAME if path.is_dir() else path
    if not manifest.is_file():
        raise ManifestError(manifest, "workspace manifest not found")
    present_input(manifest, manifest.parent, "the workspace folder")  # a link out of it is another's manifest
    data, sources = _read_yaml(manifest)
    c = _Checker(manifest, sources)
    data = c.mapping(data, "(top level)", TOP_KEYS)
    version = data.get("format", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise c.fail("format", f"unsupported format {brief(version)}; this speechkit reads {FORMAT_VERSION!r}")
    name = c.ident(data, "name", "")
    language = c.language(data, "")

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
        people.append(Person(id=c.ident(obj, "id", f), name=c.text(obj, "name", f),
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
                raise c.fail(f"{f}.attendees[{j}]", f"unknown person id {brief(pid)}")
        optional = {key: c.path(obj[key], f"{f}.{key}") if obj.get(key) is not None else None
                    for key in ("reference", "rttm", "canonical", "notes")}
        enrollment_only = obj.get("enrollment_only", False)
        if not isinstance(enrollment_only, bool):
            raise c.fail(f"{f}.enrollment_only", f"expected true or false, got {brief(enrollment_only)}")
        spoken = c.language(obj, f, default=language) or ENGLISH
        if language is not None and not language.admits(spoken):
            raise c.fail(f"{f}.language", f"{spoken} is not a language of the workspace ({language}); "
                                          f"give the workspace language: mixed with both listed, or fix the meeting")
        meetings.append(Meeting(
            language=spoken, id=c.ident(obj, "id", f), date=c.date(obj.get("date"), f"{f}.date"),
            audio=c.path(obj.get("audio"), f"{f}.audio"), title=c.text(obj, "title", f, required=False),
            kind=c.text(obj, "kind", f, required=False), attendees=attendees,
            terms=c.terms(obj["terms"], f"{f}.terms") if obj.get("terms") is not None else None,
            enrollment_only=enrollment_only, **optional))
    c.unique([m.id for m in meetings], "meetings")
    names = {p.id: p.name for p in people}
    meetings = [_with_notes(m, c, f"meetings[{i}].notes", names) for i, m in enumerate(meetings)]
    if all(m.enrollment_only for m in meetings):
        raise c.fail("meetings", "every meeting is enrollment_only; at least one must be left to run and score")
    for i, m in enumerate(meetings):
        if _has_zone(m.date) != _has_zone(meetings[0].date):
            zoned, plain = (i, 0) if _has_zone(m.date) else (0, i)
            raise c.fail(f"meetings[{i}].date", f"meetings[{zoned}].date ({meetings[zoned].date.isoformat()}) has a "
                                                f"time zone and meetings[{plain}].date "
                                                f"({meetings[plain].date.isoformat()}) has none, so they cannot be "
                                                f"ordered; give every meeting date a time zone or none")
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
            raise c.fail(f"{f}.kind", f"unknown kind {brief(kind)}; expected one of {', '.join(ARTIFACT_KINDS)}")
        meeting = c.text(obj, "meeting", f, required=False)
        if meeting is not None and meeting not in meeting_ids:
            raise c.fail(f"{f}.meeting", f"unknown meeting id {brief(meeting)}")
        day = c.date(obj.get("date"), f"{f}.date", required=False)
        artifacts.append(Artifact(id=c.ident(obj, "id", f), kind=kind, path=c.path(obj.get("path"), f"{f}.path"),
                                  date=day.date() if isinstance(day, dt.datetime) else day, meeting=meeting,
                                  title=c.text(obj, "title", f, required=False)))
    c.unique([a.id for a in artifacts], "artifacts")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise c.fail("metadata", "expected a mapping")
    if language is None:  # a workspace that names none is in the one language its meetings share
        spoken = {m.language for m in meetings}
        language = spoken.pop() if len(spoken) == 1 else None
        if language is None:
            raise c.fail("language", "the meetings are in different languages and the workspace names none; "
                                     "give language: mixed with the languages listed")
    return Workspace(name=name, root=c.root, people=tuple(people), meetings=tuple(meetings), terms=terms,
                     artifacts=tuple(artifacts), metadata=metadata, manifest_path=manifest.resolve(),
                     language=language)


def _rel(path: Path | None, root: Path) -> str | None:
    return None if path is None else path.resolve().relative_to(root.resolve()).as_posix()


def _terms_dict(terms: TermSet) -> dict:
    return {"numbers": list(terms.numbers), "jargon": list(terms.jargon)}


def _language_dict(language: SpokenLanguage) -> dict:
    return {"language": language.code, **({"languages": list(language.languages)} if language.is_mixed else {})}


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
        if m.notes is not None and _rel(m.notes, root) != default_notes_path(m.id):
            d["notes"] = _rel(m.notes, root)
        if m.attendees:
            d["attendees"] = list(m.attendees)
        if m.terms is not None:
            d["terms"] = _terms_dict(m.terms)
        if m.enrollment_only:
            d["enrollment_only"] = True
        if m.language != ws.language:
            d.update(_language_dict(m.language))
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

    out: dict[str, Any] = {"format": FORMAT_VERSION, "name": ws.name,
                           **(_language_dict(ws.language) if not ws.language.is_english else {}),
                           "people": [person(p) for p in ws.people], "terms": _terms_dict(ws.terms),
                           "meetings": [meeting(m) for m in ws.meetings]}
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
