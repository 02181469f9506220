"""The summarize stage through a shipped recipe on real speech and on the small synthetic
workspace: notes written per meeting (``notes/<meeting>.json``), keyed per meeting and level,
served from the stage cache on a rerun, and handed to the L2 context of the later meetings."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from speechkit.context import PriorMeeting, cut_utf8, notes_digest
from speechkit.io.manifest import load_workspace
from speechkit.notes import Notes
from speechkit.recipe import load_recipe
from speechkit.runner import run_workspace
from speechkit.transcript import Transcript


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory, make_real_workspace) -> tuple[Path, object]:
    """The real-speech workspace at L3, again at L3 into another folder, then at L2; one cache."""
    ws = load_workspace(make_real_workspace(tmp_path_factory.mktemp("ws")))
    root = tmp_path_factory.mktemp("runs")
    for name, level in (("l3", 3), ("l3-again", 3), ("l2", 2)):
        run_workspace(load_recipe(f"l{level}"), ws, root / name, progress=False, cache_dir=root / "cache")
    return root, ws


def _notes(run: Path) -> dict[str, Notes]:
    out = {}
    for path in sorted((run / "notes").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["format"] == "speechkit-notes/1" and data["meeting"] == path.stem
        out[path.stem] = Notes.from_dict(data)
    return out


def _run_json(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())


@pytest.mark.decodes
def test_every_meeting_gets_its_notes_file_and_run_json_entry(real_runs, real_meetings):
    root, _ = real_runs
    for run in ("l3", "l2"):
        assert set(_notes(root / run)) == set(real_meetings)
        stages = _run_json(root / run)["stages"]["summarize"]
        assert set(stages) == set(real_meetings)
        assert all(s["backend"] == "extractive" for s in stages.values())
    assert all(s["roster"] == 2 for s in _run_json(root / "l3")["stages"]["summarize"].values())
    assert _run_json(root / "l3")["recipe"]["stages"]["summarize"]["backend"] == "extractive"


@pytest.mark.decodes
def test_results_are_keyed_per_meeting_and_level_and_a_rerun_hits_the_cache(real_runs, real_meetings):
    root, _ = real_runs
    n = len(real_meetings)
    first, again, l2 = (_run_json(root / run)["cache"] for run in ("l3", "l3-again", "l2"))
    assert first["misses"]["summarize"] == n and "summarize" not in first["hits"]
    assert again["hits"]["summarize"] == n and "summarize" not in again["misses"]
    assert l2["misses"]["summarize"] == n  # another context: other keys
    assert len(list((root / "cache" / "summarize").glob("*.json"))) == 2 * n
    for path in (root / "l3" / "notes").iterdir():
        assert path.read_bytes() == (root / "l3-again" / "notes" / path.name).read_bytes()


@pytest.mark.decodes
def test_the_notes_of_earlier_meetings_are_the_l2_context_of_later_ones(real_runs):
    root, ws = real_runs
    first, second = (m.id for m in ws.scored_meetings)
    contexts = {m: json.loads((root / "l2" / "context" / f"{m}.json").read_text())["notes_context"]
                for m in (first, second)}
    assert contexts[first] == {"earlier_notes": "", "roster": [], "emails": "", "agenda": ""}
    notes = _notes(root / "l2")[first]
    expected = cut_utf8(notes_digest(PriorMeeting(first, Transcript(first, []), {}, notes=notes)),
                        load_recipe("l2").context.notes_prior_bytes)
    assert contexts[second]["earlier_notes"] == expected and expected.startswith(f"{first}:")
    l3 = json.loads((root / "l3" / "context" / f"{second}.json").read_text())["notes_context"]
    assert l3["roster"] == ["Diane Doe", "Sheila Doe"] and l3["earlier_notes"].startswith(f"{first}:")


@pytest.mark.decodes
def test_the_synthetic_workspace_gets_notes_per_meeting(small_synth_workspace, tmp_path):
    ws = load_workspace(small_synth_workspace)
    result = run_workspace(load_recipe("l3"), ws, tmp_path / "run", progress=False)
    notes = _notes(result.out)
    assert set(notes) == {m.id for m in ws.scored_meetings}
    people = {p.name for p in ws.people}
    context = json.loads((result.out / "context" / f"{ws.scored_meetings[-1].id}.json").read_text())["notes_context"]
    assert [line.split(" (")[0] for line in context["roster"]] == [p.name for p in ws.people]
    assert context["earlier_notes"].startswith(f"{ws.scored_meetings[0].id}:") and context["agenda"]
    # at L3 the extractive backend writes an assignee it resolved as the canonical name
    for meeting in notes.values():
        for item in meeting.action_items:
            assert item.assignee_id is None or item.assignee in people
    keys = list((result.out / "cache" / "summarize").glob("*.json"))
    assert len(keys) == len(notes)
