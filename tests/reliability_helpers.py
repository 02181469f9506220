"""Helpers of the hostile-input tests (test_reliability_paths, test_reliability_scores, test_cli_catalogue,
test_reliability_notes, test_reliability_llm): a tiny valid workspace with a perfect run folder, the same
with gold notes and questions and a run folder as a run writes it, manifest variants, snapshots of a
folder tree, and the one error line a command wrote."""
from __future__ import annotations

import copy
import hashlib
import os
import stat
import wave
from pathlib import Path

import yaml

from speechkit.io import write_seglst
from speechkit.transcript import Segment, Transcript, Word


def seg(speaker: str, start: float, text: str, name: str | None = None, step: float = 0.5) -> Segment:
    words = [Word(w, start + i * step, start + (i + 1) * step) for i, w in enumerate(text.split())]
    return Segment.from_words(words, speaker=speaker, speaker_name=name)


PEOPLE = [{"id": "p1", "name": "Robert Smith", "nicknames": ["Bob"]}, {"id": "p2", "name": "Alice Jones"}]
REFERENCES = {
    "m1": [seg("p1", 0.0, "our p ninety nine latency rose twelve percent", "Robert Smith"),
           seg("p2", 5.0, "we should move pacs.008 to kubernetes", "Alice Jones")],
    "m2": [seg("p1", 0.0, "kubernetes costs went up twelve percent", "Robert Smith"),
           seg("p2", 3.5, "thanks bob", "Alice Jones")],
}


def manifest(**overrides) -> dict:
    """The manifest of :func:`make_workspace`, a fresh copy that a test may change;
    ``overrides`` replace top-level keys."""
    data = copy.deepcopy({
        "format": "speechkit-workspace/1", "name": "tiny", "people": PEOPLE,
        "terms": {"numbers": ["12%", "P99"], "jargon": ["pacs.008", "Kubernetes"]},
        "meetings": [{"id": "m1", "date": "2026-03-02", "audio": "audio.wav", "reference": "m1.ref.json"},
                     {"id": "m2", "date": "2026-03-04", "audio": "audio.wav", "reference": "m2.ref.json"}],
    })
    data.update(overrides)
    return data


def error_line(capsys) -> str:
    """The one ``error:`` line the command wrote to stderr, with no traceback there."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0]


def refused(root: Path, argv: list, capsys, expect: str) -> str:
    """Run ``speechkit argv`` in-process: exit code 1 or 2, one ``error:`` line holding ``expect``, no
    traceback, and nothing under ``root`` created, changed or removed. Returns the error line."""
    from speechkit.cli import main

    before = snapshot(root)
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse
        rc = exc.code
    assert snapshot(root) == before
    line = error_line(capsys)
    assert rc in (1, 2) and expect in line, (rc, line)
    return line


def write_manifest_text(ws: Path, text: str) -> Path:
    (ws / "workspace.yaml").write_text(text, encoding="utf-8")
    return ws


def make_workspace(root: Path, **overrides) -> tuple[Path, Path]:
    """A tiny valid workspace ``root/ws`` (two meetings, SegLST references) and a run folder
    ``root/run`` holding a perfect hypothesis per meeting (the references themselves)."""
    ws, run = root / "ws", root / "run"
    ws.mkdir(parents=True, exist_ok=True)
    with wave.open(str(ws / "audio.wav"), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes(b"\0\0" * 16000)
    for mid, segs in REFERENCES.items():
        write_seglst(ws / f"{mid}.ref.json", [Transcript(mid, segs)])
        write_seglst(run / f"{mid}.json", [Transcript(mid, segs)])
    write_manifest_text(ws, yaml.safe_dump(manifest(**overrides), sort_keys=False))
    return ws, run


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root`` (links not followed): its type, permission bits and content hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = os.lstat(path)
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else None
            out[path.relative_to(root).as_posix()] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), digest)
    return out


GOLD_NOTES = {
    "m1": {"format": "speechkit-notes/1", "meeting": "m1",
           "summary": "Robert Smith said the P99 latency rose 12%. Alice Jones will move pacs.008 to Kubernetes.",
           "action_items": [{"description": "move pacs.008 to Kubernetes", "assignee": "Alice Jones",
                             "assignee_id": "p2"}],
           "facts": [{"kind": "number", "text": "The P99 latency rose 12%.", "entities": ["12%"]}]},
    "m2": {"format": "speechkit-notes/1", "meeting": "m2",
           "summary": "Robert Smith said the Kubernetes costs went up 12%.",
           "action_items": [{"description": "check the Kubernetes costs", "assignee": "Robert Smith",
                             "assignee_id": "p1"}],
           "facts": [{"kind": "number", "text": "The Kubernetes costs went up 12%.", "entities": ["12%"]}]},
}
QUESTIONS = {
    mid: {"version": 1, "meeting": mid, "questions": [
        {"id": f"{mid}-q1", "type": "who_owns", "question": f"Who owns the action item to {item['description']}?",
         "answer": item["assignee"], "entities": [{"kind": "person", "id": item["assignee_id"],
                                                   "canonical": item["assignee"]}]}]}
    for mid, item in ((mid, notes["action_items"][0]) for mid, notes in GOLD_NOTES.items())}


def make_notes_run(root: Path) -> tuple[Path, Path]:
    """The tiny workspace ``root/ws`` (:func:`make_workspace`) with gold notes and gold questions
    per meeting, and a finished run of it ``root/out`` as a run writes one: run.json naming the
    level (3) and the workspace, ``transcripts/<id>.json`` (the references), ``notes/<id>.json`` (the gold notes'
    summary and action items)."""
    import json

    from speechkit.io.notes import write_notes
    from speechkit.notes import Notes

    ws, _ = make_workspace(root)
    out = root / "out"
    (out / "transcripts").mkdir(parents=True)
    (out / "run.json").write_text(json.dumps({"recipe": {"level": 3}, "workspace": {"name": "tiny", "root": str(ws)}}))
    for mid, segs in REFERENCES.items():
        (ws / "meetings" / mid).mkdir(parents=True)
        (ws / "meetings" / mid / "notes.json").write_text(json.dumps(GOLD_NOTES[mid]))
        (ws / "meetings" / mid / "questions.json").write_text(json.dumps(QUESTIONS[mid]))
        write_seglst(out / "transcripts" / f"{mid}.json", [Transcript(mid, segs)])
        gold = Notes.from_dict({k: v for k, v in GOLD_NOTES[mid].items() if k != "facts"})
        write_notes(out / "notes" / f"{mid}.json", gold, mid)
    return ws, out
