"""``speechkit synth --paraphrase``: turns rewritten through a stand-in LLM endpoint on 127.0.0.1
that answers with good rewrites, rewrites that drop an entity and rewrites that invent one; only
the good ones are kept, the latent state is untouched, the counts reach truth/state.json."""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from llm_helpers import Endpoint, Reply, completion

from speechkit.llm.client import LLMUnavailable
from speechkit.synth import SynthOptions, synthesize_workspace
from speechkit.synth.paraphrase import ParaphraseOptions, Paraphraser, _Mentions, entity_lexicon, rebuild, verdict
from speechkit.synth.script import write_script
from speechkit.synth.spoken import Piece, canonical_text, plain, verbatim_words
from speechkit.synth.voices import VOICES

REPO = Path(__file__).resolve().parents[1]


def _asked(request: dict) -> tuple[list[str], str]:
    """The KEEP list and the turn of a paraphrase request."""
    keep, turn = request["messages"][-1]["content"].split("\n", 1)
    return [k for k in keep.removeprefix("KEEP: ").split("; ") if k != "(nothing)"], turn.removeprefix("TURN: ")


def good(request: dict, call: int) -> Reply:
    return 200, completion(f"\"Well, {_asked(request)[1]}\""), 0.0


def dropping(request: dict, call: int) -> Reply:
    keep, turn = _asked(request)
    return 200, completion(turn.replace(keep[0], "that", 1) if keep else f"Well, {turn}"), 0.0


def inventing(request: dict, call: int) -> Reply:
    extra = (" Ask Zoltan about it.", " It takes three days.", " And the XR-7 thing.")[call % 3]
    return 200, completion(_asked(request)[1] + extra), 0.0


def broken(request: dict, call: int) -> Reply:
    return 500, json.dumps({"error": {"message": "overloaded"}}), 0.0


@pytest.fixture
def endpoint(monkeypatch) -> Iterator[Callable[[Callable[[dict, int], Reply]], Endpoint]]:
    monkeypatch.setenv("SPEECHKIT_LLM_MODEL", "test-model")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    started: list[Endpoint] = []

    def start(behaviour: Callable[[dict, int], Reply]) -> Endpoint:
        server = Endpoint(behaviour, models=["test-model"])
        monkeypatch.setenv("SPEECHKIT_LLM_BASE_URL", server.url)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


@pytest.fixture
def meeting():
    """A latent state of seed 5 and the template turns of its second meeting (a review)."""
    script = write_script(SynthOptions(seed=5, meetings=2, people=4, minutes=1.0), [v.id for v in VOICES])
    plan = script.state.meetings[1]
    return script.state, plan, script.turns[plan.id]


def _paraphrased(meeting, **options):
    state, plan, turns = meeting
    paraphraser = Paraphraser(ParaphraseOptions(timeout_s=5.0, max_retries=0, **options), state)
    paraphraser.check()
    return paraphraser, turns, paraphraser.meeting(plan, turns)


def test_good_rewrites_are_kept_with_their_term_pieces(endpoint, meeting):
    endpoint(good)
    paraphraser, before, after = _paraphrased(meeting)
    counts = paraphraser.summary()["total"]
    spoken = sum(not t.backchannel for t in before)
    assert counts["turns"] == counts["kept"] == spoken and counts["dropped"] == counts["invented"] == 0
    for old, new in zip(before, after):
        if old.backchannel:
            assert new is old
            continue
        assert canonical_text(new.pieces) == "Well, " + canonical_text(old.pieces)
        old_terms = [(p.term, p.words) for p in old.pieces if p.term]
        assert [(p.term, p.words) for p in new.pieces if p.term] == old_terms
        assert all(len(p.words) == len(p.say) for p in new.pieces)
    assert any(p.term for t in after for p in t.pieces)


def test_rewrites_that_drop_or_invent_an_entity_keep_the_template_turn(endpoint, meeting):
    endpoint(dropping)
    paraphraser, before, after = _paraphrased(meeting)
    counts = paraphraser.summary()["total"]
    assert counts["dropped"] > 0 and counts["invented"] == 0
    assert counts["dropped"] + counts["kept"] == counts["turns"]
    dropped = [a for b, a in zip(before, after) if a is b and not b.backchannel]
    assert len(dropped) == counts["dropped"]

    endpoint(inventing)
    paraphraser, before, after = _paraphrased(meeting)
    counts = paraphraser.summary()["total"]
    assert counts["invented"] == counts["turns"] > 0 and counts["kept"] == 0
    assert all(a is b for a, b in zip(before, after))


def test_failed_requests_keep_the_template_or_stop_the_generation(endpoint, meeting):
    endpoint(broken)
    paraphraser, before, after = _paraphrased(meeting, failures="allow", backoff_s=0.0)
    assert paraphraser.summary()["total"]["failed"] == paraphraser.summary()["total"]["turns"] > 0
    assert all(a is b for a, b in zip(before, after))
    with pytest.raises(LLMUnavailable, match="overloaded"):
        _paraphrased(meeting, backoff_s=0.0)


def test_the_verdict_compares_entities_as_written(meeting):
    state = meeting[0]
    mentions = _Mentions(entity_lexicon(state))
    name, day = state.people[0].first_name, "Friday"
    term = state.projects[0].jargon[0].canonical
    turn = f"{name}, can you check the {term} samples by {day}?"
    assert verdict(turn, f"By {day}, could {name} check the {term} samples?", mentions) == "kept"
    assert verdict(turn, f"{name},  can you check the {term} samples by {day}?", mentions) == "unchanged"
    assert verdict(turn, f"{name}, can you check the samples by {day}?", mentions) == "dropped"
    assert verdict(turn, f"{name.lower()}, can you check the {term} samples by {day}?", mentions) == "dropped"
    assert verdict(turn, f"{name}, can you check the {term} samples by Monday?", mentions) == "dropped"
    assert verdict(turn, f"{name}, can you check the {term} samples by {day}, {day}?", mentions) == "invented"
    assert verdict(turn, f"{name}, can you check the {term} samples by {day} with Zoltan?", mentions) == "invented"
    assert verdict(turn, f"{name}, can you check the two {term} samples by {day}?", mentions) == "invented"
    assert verdict(turn, f"{name}, can you check the {term} v2 samples by {day}?", mentions) == "invented"
    assert verdict(turn, f"{name}, can you check the one {term} sample by {day}?", mentions) == "kept"
    assert verdict("Thanks, bye.", " ... ", mentions) == "dropped"  # nothing left to say
    # what the packaged SmolLM2 answered: the entities kept, the turn not said
    assert verdict(f"{name}, where are we on {term}?", f"KEEP: {name}; {term}", mentions) == "drifted"
    assert verdict("Alright, I think we have everyone. Let's start.",
                   "I'm glad to see that you're all excited about the new product.", mentions) == "drifted"
    assert verdict("Sounds good.", "Sounds good to me, here's a rewritten version.", mentions) == "drifted"
    assert verdict(turn, f"{name}, could you check the {term} samples by {day}? " + "Thanks a lot. " * 8,
                   mentions) == "drifted"
    assert verdict("Alright, I think we have everyone. Let's start.", "Okay, everyone's here, so let's start.",
                   mentions) == "kept"


def test_a_kept_rewrite_takes_the_punctuation_it_has():
    term = Piece("pacs.008,", ("pacs", "dot", "zero", "zero", "eight"),
                 ("packs", "dot", "zero", "zero", "eight,"), term="pacs.008")
    template = [*plain("So"), term, *plain("is done.")]
    pieces = rebuild("Is pacs.008? Done, yes.", template)
    assert canonical_text(pieces) == "Is pacs.008? Done, yes."
    assert pieces[1].say[-1] == "eight?" and pieces[1].words == term.words
    assert verbatim_words(pieces) == ["Is", "pacs", "dot", "zero", "zero", "eight", "Done", "yes"]
    slip = Piece("2,500,", ("twenty", "five", "hundred"), ("twenty", "five", "hundred,"))  # said, then corrected
    pieces = rebuild("It was 2,500. Sorry.", [*plain("It's"), slip, *plain("sorry.")])
    assert verbatim_words(pieces) == ["It", "was", "twenty", "five", "hundred", "Sorry"]
    assert canonical_text(pieces) == "It was 2,500. Sorry." and pieces[2].say[-1] == "hundred."


def test_synth_paraphrase_writes_counts_and_leaves_the_state(endpoint, tmp_path):
    endpoint(good)
    options = SynthOptions(seed=11, meetings=1, people=2, minutes=0.25, check_voices=False,
                           paraphrase=ParaphraseOptions(timeout_s=5.0))
    ws = synthesize_workspace(tmp_path / "ws", options)
    truth = json.loads((ws.root / "truth" / "state.json").read_text())
    counts = truth["paraphrase"]["total"]
    assert counts["kept"] == counts["turns"] > 0
    script = write_script(SynthOptions(seed=11, meetings=1, people=2, minutes=0.25), [v.id for v in VOICES])
    assert truth["action_items"] == json.loads(json.dumps(script.state.to_dict()["action_items"]))
    assert truth["acts"] == json.loads(json.dumps(script.state.to_dict()["acts"]))
    said = json.loads((ws.root / "meetings" / "m01" / "reference.json").read_text())
    assert sum(seg["words"].split()[0] == "Well" for seg in said) == counts["kept"]
    assert "--paraphrase" in ws.metadata["regenerate"]


def test_cli_stops_at_an_unreachable_endpoint_with_one_line(endpoint, tmp_path):
    endpoint(good).close()
    done = subprocess.run([sys.executable, "-m", "speechkit", "synth", "--out", str(tmp_path / "ws"), "--seed", "1",
                           "--meetings", "1", "--people", "2", "--minutes", "0.25", "--no-voice-check",
                           "--paraphrase"], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("speechkit synth: error: http://127.0.0.1:") and "Traceback" not in done.stderr
    assert not (tmp_path / "ws").exists()  # nothing written: the folder it made is removed again
