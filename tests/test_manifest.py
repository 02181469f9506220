"""Workspace manifest: loading, validation errors naming file and field, round trip."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from speechkit.errors import ManifestError
from speechkit.io.manifest import load_workspace, write_manifest


def make_workspace(root: Path, **overrides) -> Path:
    """A small valid workspace in ``root``; ``overrides`` replace top-level manifest keys."""
    (root / "audio").mkdir(parents=True, exist_ok=True)
    for name in ("m1.wav", "m2.wav", "enroll-ada.wav"):
        (root / "audio" / name).write_bytes(b"RIFF")
    (root / "agenda-m1.md").write_text("# Agenda\n- pacs.008 migration\n")
    manifest = {
        "format": "speechkit-workspace/1",
        "name": "tiny",
        "people": [{"id": "p1", "name": "Ada Byron", "nicknames": ["Addy"], "role": "lead",
                    "enrollment": "audio/enroll-ada.wav"},
                   {"id": "p2", "name": "Alan Turing"}],
        "terms": {"numbers": ["42"], "jargon": ["pacs.008", "P99"]},
        "meetings": [{"id": "m1", "date": "2026-03-02", "audio": "audio/m1.wav", "attendees": ["p1", "p2"]},
                     {"id": "m2", "date": "2026-03-03T09:30", "audio": "audio/m2.wav", "attendees": ["p1"],
                      "terms": {"jargon": ["P99"]}}],
        "artifacts": [{"id": "a1", "kind": "agenda", "path": "agenda-m1.md", "meeting": "m1", "date": "2026-03-01"}],
    }
    manifest.update(overrides)
    (root / "workspace.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def test_valid_workspace_loads(tmp_path):
    ws = load_workspace(make_workspace(tmp_path))
    assert [m.id for m in ws.meetings] == ["m1", "m2"]
    assert ws.person("p1").enrollments == (tmp_path.resolve() / "audio" / "enroll-ada.wav",)
    assert ws.meetings[1].terms.jargon == ("P99",) and ws.meetings[0].terms is None
    assert ws.artifacts_for("m1")[0].read_text().startswith("# Agenda")
    assert ws.person("p1").answers_to("addy") and ws.person("p1").answers_to("Ada")
    assert not ws.person("p2").answers_to("Ada Byron")


def test_round_trip(tmp_path):
    ws = load_workspace(make_workspace(tmp_path))
    (tmp_path / "workspace.yaml").unlink()
    write_manifest(ws)
    again = load_workspace(tmp_path)
    assert again.people == ws.people and again.meetings == ws.meetings and again.artifacts == ws.artifacts


def _meetings(**m1_changes):
    m1 = {"id": "m1", "date": "2026-03-02", "audio": "audio/m1.wav", "attendees": ["p1"]}
    m1.update(m1_changes)
    return [m1, {"id": "m2", "date": "2026-03-04", "audio": "audio/m2.wav"}]


@pytest.mark.parametrize("overrides, pattern", [
    ({"meetings": _meetings(audio="audio/missing.wav")}, r"meetings\[0\]\.audio: file 'audio/missing.wav' not found"),
    ({"meetings": _meetings(attendees=["p9"])}, r"meetings\[0\]\.attendees\[0\]: unknown person id 'p9'"),
    ({"meetings": _meetings(id="m2")}, r"meetings\[1\]\.id: duplicate id 'm2'"),
    ({"meetings": _meetings(date="2026-03-09")}, r"meetings\[1\]\.date: .* calendar order"),
    ({"meetings": _meetings(date="yesterday")}, r"meetings\[0\]\.date: expected an ISO date"),
    ({"meetings": _meetings(audio="../../etc/passwd")}, r"meetings\[0\]\.audio: path '../../etc/passwd' leaves"),
    ({"meetings": _meetings(audio="/etc/passwd")}, r"meetings\[0\]\.audio: absolute path '/etc/passwd' not allowed"),
    ({"meetings": _meetings(speaker="x")}, r"meetings\[0\]: unknown key\(s\) speaker"),
    ({"meetings": []}, r"meetings: expected a non-empty list"),
    ({"people": [{"id": "p1"}]}, r"people\[0\]\.name: missing"),
    ({"people": [{"id": "p1", "name": "A"}, {"id": "p1", "name": "B"}]}, r"people\[1\]\.id: duplicate id 'p1'"),
    ({"terms": {"jargon": "P99"}}, r"terms\.jargon: expected a list"),
    ({"artifacts": [{"id": "a", "kind": "memo", "path": "agenda-m1.md"}]},
     r"artifacts\[0\]\.kind: unknown kind 'memo'"),
    ({"artifacts": [{"id": "a", "kind": "email", "path": "agenda-m1.md", "meeting": "m7"}]},
     r"artifacts\[0\]\.meeting: unknown meeting id 'm7'"),
    ({"format": "other/2"}, r"format: unsupported format"),
])
def test_errors_name_file_and_field(tmp_path, overrides, pattern):
    root = make_workspace(tmp_path, **overrides)
    with pytest.raises(ManifestError, match=pattern) as info:
        load_workspace(root)
    assert str(root / "workspace.yaml") in str(info.value)


def test_symlink_escaping_the_workspace_is_rejected(tmp_path):
    outside = tmp_path / "outside.wav"
    outside.write_bytes(b"RIFF")
    root = tmp_path / "ws"
    make_workspace(root)
    os.symlink(outside, root / "audio" / "link.wav")
    manifest = root / "workspace.yaml"
    manifest.write_text(manifest.read_text().replace("audio/m1.wav", "audio/link.wav"))
    with pytest.raises(ManifestError, match=r"meetings\[0\]\.audio: path 'audio/link.wav' leaves"):
        load_workspace(root)


def test_invalid_yaml_and_missing_manifest(tmp_path):
    with pytest.raises(ManifestError, match="workspace manifest not found"):
        load_workspace(tmp_path)
    (tmp_path / "workspace.yaml").write_text("name: [unclosed\n")
    with pytest.raises(ManifestError, match=r"workspace\.yaml:\d+: invalid YAML"):
        load_workspace(tmp_path)
    (tmp_path / "workspace.yaml").write_text("")
    with pytest.raises(ManifestError, match=r"\(top level\): expected a mapping"):
        load_workspace(tmp_path)
