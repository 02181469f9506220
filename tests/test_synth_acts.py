"""Dialogue acts of synthetic meetings: phrasing families and their tuned / held-out split,
acts that are not what they look like, corrections, and gold notes and questions that follow the
final state. Most tests write meetings as text only (:func:`speechkit.synth.script.write_script`,
no TTS); one renders a tiny held-out workspace and checks its ``truth/`` records the same acts."""
from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter, defaultdict

import pytest

from speechkit.io.manifest import load_workspace
from speechkit.io.notes import read_gold_notes
from speechkit.io.questions import default_questions_path, read_questions
from speechkit.metrics.notes import score_notes, vocabulary
from speechkit.metrics.qa import score_answers
from speechkit.notes import Decision, Notes
from speechkit.synth import SynthOptions, synthesize_workspace
from speechkit.synth.acts import ACTS, LATER, SPLITS, FamilyCycle
from speechkit.synth.families import FAMILIES
from speechkit.synth.notes import gold_notes
from speechkit.synth.questions import gold_questions
from speechkit.synth.script import write_script
from speechkit.synth.voices import VOICES
from speechkit.text_similarity import LexicalSimilarity
from speechkit.workspace import Person

VOICE_IDS = [v.id for v in VOICES]
#: The surface forms the generator used for every request, decision and status before families.
OLD_FORMS = ("can you", "could you", "let's go with", "where are we on", "did you get a chance")


@pytest.fixture(scope="module")
def held_out() -> dict:
    """The latent state (as truth/state.json holds it) of ten held-out meetings of four minutes."""
    script = write_script(SynthOptions(seed=21, meetings=10, people=6, minutes=4, phrasing="held-out"), VOICE_IDS)
    return {"truth": json.loads(json.dumps(dataclasses.asdict(script.state), default=str)), "script": script}


def test_every_act_has_eight_families_split_both_ways_some_over_several_turns():
    for act in ACTS:
        fams = FAMILIES[act]
        assert len(fams) >= 8, act
        assert all(sum(f.split == s for f in fams) >= 4 for s in SPLITS), act
    every = [f for fams in FAMILIES.values() for f in fams]
    assert len({f.id for f in every}) == len(every)
    spread = [f for f in every if len({r.lstrip("~") for r, _ in f.lines if r}) >= 2 and len(f.lines) >= 3]
    assert len(spread) >= 25
    assert any(LATER in f.lines for f in FAMILIES["request"]) and any(LATER in f.lines for f in FAMILIES["decision"])
    assert any(f.owner != "who" for f in FAMILIES["request"])  # declined and given to someone else
    for act, field in (("request", "due"), ("decision", "choice"), ("number", "number")):
        assert {f.split for f in FAMILIES[act] if f.corrects == field} == set(SPLITS), act


def test_the_cycle_keeps_to_its_split_and_uses_every_family():
    import numpy as np
    cycle = FamilyCycle(FAMILIES, "tuned", np.random.default_rng(0))
    got = [cycle.next("closing", {"host", "who"}, {"h"}) for _ in range(8)]
    tuned = {f for f in FAMILIES["closing"] if f.split == "tuned"}
    assert set(got) == tuned and Counter(got).most_common(1)[0][1] == 2
    with pytest.raises(ValueError, match="phrasing"):
        FamilyCycle(FAMILIES, "heldout", np.random.default_rng(0))


def _opening(text: str, names: set[str]) -> str:
    words = re.sub(r"[^\w' ]", " ", text.lower()).split()
    while words and (words[0] in names or words[0].endswith("'s") and words[0][:-2] in names):
        words = words[1:]
    return " ".join(words[:2])


def test_held_out_phrasing_is_varied(held_out):
    truth = held_out["truth"]
    names = {w.lower() for p in truth["people"] for w in (p["name"].split()[0], p["nickname"] or "")} - {""}
    by_act = defaultdict(list)
    for record in truth["acts"]:
        assert record["split"] == "held-out" and record["family"].startswith(record["act"] + ".")
        by_act[record["act"]].append(record)
    assert set(by_act) == set(ACTS)
    for act, records in by_act.items():
        assert len({r["family"] for r in records}) >= 4, act
        texts = [" ".join(line["text"] for line in r["lines"]).lower() for r in records]
        for form in OLD_FORMS:
            assert sum(form in t for t in texts) <= len(texts) / 4, (act, form)
        openings = Counter(_opening(r["lines"][0]["text"], names) for r in records)
        assert openings.most_common(1)[0][1] <= len(records) / 4, (act, openings.most_common(3))


def test_tuned_and_held_out_share_no_family():
    tuned = write_script(SynthOptions(seed=21, meetings=4, people=5, minutes=3, phrasing="tuned"), VOICE_IDS)
    assert tuned.state.acts and {r.split for r in tuned.state.acts} == {"tuned"}
    every = write_script(SynthOptions(seed=21, meetings=6, people=5, minutes=3), VOICE_IDS)
    assert {r.split for r in every.state.acts} == set(SPLITS)


def test_corrections_are_recorded_with_the_final_state(held_out):
    truth = held_out["truth"]
    corrected = [r for r in truth["acts"] if r["correction"]]
    assert {r["correction"]["field"] for r in corrected} == {"due", "choice", "number"}
    items = {a["id"]: a for a in truth["action_items"]}
    decisions = {d["id"]: d for d in truth["decisions"]}
    for r in corrected:
        c = r["correction"]
        assert c["first"] != c["final"]
        text = " ".join(line["text"] for line in r["lines"])
        assert c["first"] in text and c["final"] in text
        assert text.rfind(c["final"]) > text.find(c["first"])  # the final version comes last
        if c["field"] == "due":
            assert items[r["target"]]["due"] == c["final"]
        elif c["field"] == "choice":
            assert decisions[r["target"]]["choice"] == c["final"]
        else:
            assert r["target"] == c["final"]


def test_asides_open_no_item_and_declined_requests_go_to_the_other_person(held_out):
    truth = held_out["truth"]
    asides = [r for r in truth["acts"] if r["act"] == "aside"]
    assert asides and all(r["target"] == "" for r in asides)
    declined = [r for r in truth["acts"] if r["family"] == "request.declined"]
    items = {a["id"]: a for a in truth["action_items"]}
    for r in declined:
        asked, taker = r["lines"][0]["speaker"], r["lines"][2]["speaker"]
        assert items[r["target"]]["assignee"] == taker != r["lines"][1]["speaker"]
        assert items[r["target"]]["requested_by"] == asked
    self_assigned = [r for r in truth["acts"] if r["family"] in ("volunteer.on-me", "volunteer.let-me")]
    assert all(items[r["target"]]["requested_by"] is None for r in self_assigned)


def _numbers(script, meeting: str) -> list[str]:
    kinds = {t.canonical: t.kind for t in script.state.terms()}
    return list(dict.fromkeys(p.term for t in script.turns[meeting] for p in t.pieces
                              if p.term and kinds[p.term] == "number"))


def _people(truth: dict) -> list[Person]:
    return [Person(id=p["id"], name=p["name"], nicknames=(p["nickname"],) if p["nickname"] else ())
            for p in truth["people"]]


def test_the_first_version_of_a_corrected_act_scores_wrong(held_out):
    truth, script = held_out["truth"], held_out["script"]
    people = _people(truth)
    seen = set()
    for r in (r for r in truth["acts"] if r["correction"]):
        field, first, final = r["correction"]["field"], r["correction"]["first"], r["correction"]["final"]
        gold = gold_notes(truth, r["meeting"], _numbers(script, r["meeting"]))
        questions = gold_questions(truth, r["meeting"], _numbers(script, r["meeting"]))
        answers = {q.id: q.answer for q in questions.questions}
        right = score_notes(gold, gold, (), LexicalSimilarity()).values()
        assert right["decision_recall"] in (1.0, None) and right["summary_fact_recall"] == 1.0
        assert all(score_answers(questions, answers, people).right.values())
        if field == "choice":
            decision = next(d for d in truth["decisions"] if d["id"] == r["target"])
            said = [Decision(d.topic, first if d.id == r["target"] else d.choice) for d in gold.decisions]
            wrong = Notes(summary=gold.summary.replace(f": {final}.", f": {first}."), decisions=tuple(said))
            asked = [q for q in questions.questions if q.type == "decision" and decision["question"] in q.question]
        elif field == "due":
            item = next(a for a in truth["action_items"] if a["id"] == r["target"])
            wrong = Notes(summary=gold.summary.replace(f"by {final}.", f"by {first}."), decisions=gold.decisions)
            asked = [q for q in questions.questions if q.type == "due" and item["description"] in q.question]
        else:
            wrong = Notes(summary=re.sub(rf"is {re.escape(final)}(?![\d,])", f"is {first}", gold.summary),
                          decisions=gold.decisions)
            asked = [q for q in questions.questions if q.type == "number" and final in q.answer]
        scores = score_notes(wrong, gold, (), LexicalSimilarity()).values()
        key = "decision_recall" if field == "choice" else "summary_fact_recall"
        assert scores[key] < 1.0, (field, first, final)
        assert asked, (field, r["family"])
        marks = score_answers(questions, {**answers, **{q.id: q.answer.replace(final, first) for q in asked}},
                              people).right
        assert not any(marks[q.id] for q in asked), (field, first, final)
        seen.add(field)
    assert seen == {"due", "choice", "number"}


@pytest.fixture(scope="module")
def tiny_held_out(tmp_path_factory):
    options = SynthOptions(seed=5, meetings=2, people=3, minutes=0.4, phrasing="held-out", check_voices=False)
    root = tmp_path_factory.mktemp("held-out") / "ws"
    synthesize_workspace(root, options)
    return root, options


def test_a_held_out_workspace_records_its_acts_and_scores_its_gold_perfectly(tiny_held_out):
    root, options = tiny_held_out
    truth = json.loads((root / "truth" / "state.json").read_text())
    script = write_script(options, VOICE_IDS)
    assert truth["phrasing"] == "held-out"
    assert truth["acts"] == json.loads(json.dumps([dataclasses.asdict(a) for a in script.state.acts]))
    ws = load_workspace(root)
    assert ws.metadata["options"]["phrasing"] == "held-out" and "--phrasing held-out" in ws.metadata["regenerate"]
    names = {p.id: p.name for p in ws.people}
    asked = 0
    for m in ws.meetings:
        gold = read_gold_notes(m.notes, m.id, names)
        values = score_notes(gold, gold, vocabulary(ws), LexicalSimilarity()).values()
        assert all(v in (1.0, None) for v in values.values()), (m.id, values)
        questions = read_questions(root / default_questions_path(m.id), m.id, names)
        marks = score_answers(questions, {q.id: q.answer for q in questions.questions}, list(ws.people))
        assert all(marks.right.values()) and all(marks.lenient.values())
        asked += len(questions.questions)
    assert asked


def test_the_command_line_takes_phrasing_and_length_presets(capsys):
    from speechkit.cli import main
    from speechkit.cli.synth import PHRASINGS as CLI_PHRASINGS
    from speechkit.synth.acts import PHRASINGS
    from speechkit.synth.options import LENGTH_PRESETS

    assert CLI_PHRASINGS == PHRASINGS
    paper = SynthOptions(minutes="paper")
    lengths = [paper.minutes_of(kind) for kind in ("standup", "review", "1:1")]
    assert lengths == [LENGTH_PRESETS["paper"][k] for k in ("standup", "review", "1:1")]
    assert 15 <= sum(lengths) / 3 <= 17 and max(lengths) <= 30  # the paper's 16.1 minutes on average
    for bad in (["--minutes", "31"], ["--minutes", "short"], ["--phrasing", "heldout"]):
        with pytest.raises(SystemExit) as exit_:
            main(["synth", "--out", "unused", *bad])
        assert exit_.value.code != 0
        err = capsys.readouterr().err
        assert "Traceback" not in err and bad[0] in err
    with pytest.raises(ValueError, match="minutes"):
        SynthOptions(minutes=45)


def test_a_thirty_minute_meeting_is_written_to_length():
    script = write_script(SynthOptions(seed=2, meetings=1, people=4, minutes=30), VOICE_IDS)
    words = sum(len(t.words) for t in script.turns["m01"])
    assert 30 * 140 <= words <= 30 * 140 + 200
    assert sum(t.overlaps for t in script.turns["m01"]) >= 3  # written interruptions
    assert any(t.backchannel for t in script.turns["m01"])


def test_a_written_interruption_overlaps_the_turn_it_cuts_into():
    import numpy as np

    from speechkit.synth.dialogue import Turn
    from speechkit.synth.mix import overlap_share, place
    from speechkit.synth.spoken import plain
    from speechkit.synth.voices import SAMPLE_RATE, Utterance

    def utt(n: int) -> Utterance:
        spans = tuple((round(i * 0.3, 3), round(i * 0.3 + 0.25, 3)) for i in range(n))
        return Utterance(np.full(int(n * 0.3 * SAMPLE_RATE), 0.1, np.float32), spans)

    turns = [Turn("A", plain("we still have nobody on the load test and it is blocking the")),
             Turn("B", plain("I will take it by Friday"), overlaps=True), Turn("A", plain("even better"))]
    placed = place(turns, [utt(13), utt(6), utt(2)], np.random.default_rng(0))
    first, second = placed[0], placed[1]
    assert not first.truncated and len(first.words) == 13  # every word said and in the reference
    overlapped = [s for s in first.spans if s[1] > second.start]
    assert 2 <= len(overlapped) <= 3
    assert placed[2].start >= second.end  # A waits for B
    assert overlap_share(placed) > 0.05
    assert overlap_share([first]) == 0.0


def test_the_reference_flags_backchannels_and_the_metadata_has_the_overlap_share(tiny_held_out):
    from speechkit.io.seglst import read_seglst

    root, _ = tiny_held_out
    ws = load_workspace(root)
    flagged = 0
    for m in ws.meetings:
        ref = next(iter(read_seglst(m.reference).values()))
        marked = [s for s in ref.segments if s.backchannel]
        assert len(marked) == ws.metadata["meetings"][m.id]["backchannels"]
        assert all(len(s.words) <= 2 for s in marked)
        flagged += len(marked)
        assert 0 <= ws.metadata["meetings"][m.id]["overlap_share"] < 0.5
    assert flagged


def test_the_two_phrasings_of_one_seed_share_people_calendar_and_channels(tiny_held_out, tmp_path):
    root, options = tiny_held_out
    tuned = synthesize_workspace(tmp_path / "tuned", dataclasses.replace(options, phrasing="tuned"))
    held_out = load_workspace(root)
    assert [(p.id, p.name) for p in tuned.people] == [(p.id, p.name) for p in held_out.people]
    assert [(m.id, m.date, m.attendees) for m in tuned.meetings] == [(m.id, m.date, m.attendees)
                                                                    for m in held_out.meetings]
    for m in tuned.meetings:
        assert (tuned.metadata["meetings"][m.id]["condition"]
                == held_out.metadata["meetings"][m.id]["condition"])
    said = [json.loads((r / "truth" / "state.json").read_text())["acts"] for r in (tmp_path / "tuned", root)]
    assert {a["split"] for a in said[0]} == {"tuned"} and said[0] != said[1]
