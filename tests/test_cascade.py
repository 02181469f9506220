"""The stage contract on real speech: every stage's key comes from what it declares it reads, no
key is None, two meetings never share one, results are stored by stage name and round-trip
through their own JSON form, and a stage gets the stages it reads at build time."""
from __future__ import annotations

import pickle

import pytest

from speechkit.cache import StageCache
from speechkit.cascade import Cascade
from speechkit.context import build_context
from speechkit.core.record import TRANSCRIPT, TURNS, VOICES, MeetingRecord
from speechkit.core.stage import stage_key
from speechkit.io.manifest import load_workspace
from speechkit.recipe import load_recipe
from speechkit.stages import build_stage, parse_stage


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, make_real_workspace):
    return load_workspace(make_real_workspace(tmp_path_factory.mktemp("ws")))


@pytest.fixture(scope="module")
def cascade() -> Cascade:
    return Cascade(load_recipe("l3"))


@pytest.fixture(scope="module")
def records(workspace, cascade, tmp_path_factory) -> dict[str, MeetingRecord]:
    """Each meeting of the real workspace run through every stage at L3 (with its enrollments and
    vocabulary; no earlier meetings, so each meeting's context is its own)."""
    cache = StageCache(tmp_path_factory.mktemp("cache"))
    out = {}
    for meeting in workspace.scored_meetings:
        context = build_context(workspace, meeting, 3, [], cascade.recipe.context)
        record = cascade.record(meeting.audio, context, cache, session_id=meeting.id)
        for name in cascade.stage_names:
            cascade.run_stage(name, record)
        out[meeting.id] = record
    return out


@pytest.mark.decodes
def test_every_stage_is_keyed_and_two_meetings_never_share_a_key(records, cascade):
    first, second = records.values()
    assert {"vad", "asr", "diarize", "attribute", "identify", "correct"} <= set(cascade.stage_names)
    for name in cascade.stage_names:
        assert isinstance(first.keys[name], str) and isinstance(second.keys[name], str), name
        assert first.keys[name] != second.keys[name], name
    # the stages that are not stored are keyed too, and the same inputs give the same key
    for name in ("attribute", "identify", "correct"):
        stage = cascade.stage(name)
        assert not stage.stored and stage_key(stage, first) == first.keys[name]


@pytest.mark.decodes
def test_a_key_follows_what_the_stage_reads(records, cascade):
    record = next(iter(records.values()))
    correct, identify = cascade.stage("correct"), record.keys["identify"]
    before = stage_key(correct, record)
    record.keys["identify"] = "another identification"
    try:
        assert stage_key(correct, record) != before  # a downstream key moves with its input's key
        assert stage_key(cascade.stage("asr"), record) == record.keys["asr"]  # asr reads no identify
    finally:
        record.keys["identify"] = identify
    terms = record.context.terms
    record.context.terms = terms + ["a term no meeting has"]
    try:
        assert stage_key(correct, record) != before  # and with its extra inputs (the vocabulary)
    finally:
        record.context.terms = terms


@pytest.mark.decodes
def test_results_are_held_by_stage_name_and_round_trip(records, cascade):
    record = next(iter(records.values()))
    assert list(record.results) == cascade.stage_names
    names = record.result("identify")
    assert names and set(names) == set(record.result("diarize").centroids)
    outputs = record.outputs()
    assert any(seg.speaker_name for seg in outputs[TRANSCRIPT].segments)  # L3 enrollments name voices
    assert {seg.speaker_name for seg in outputs[TURNS].segments} == set(names.values())
    assert set(outputs[VOICES]) == {names[label] or label for label in names}
    for name in ("vad", "asr", "diarize"):
        stage = cascade.stage(name)
        result = record.results[name]
        again = stage.result_type.from_dict(result.to_dict())
        assert again.to_dict() == result.to_dict(), name
    assert record.result("asr").stats.windows >= 1 and record.result("asr").summary()["windows"] >= 1


@pytest.mark.decodes
def test_a_result_pickles_without_the_stages_models(records, cascade):
    """A Ray worker pickles each meeting's result for the driver: the stages (loaded models) stay behind."""
    from speechkit.cascade import CascadeResult
    record = next(iter(records.values()))
    result = CascadeResult.from_record(record)
    again = pickle.loads(pickle.dumps(result))
    assert again.transcript == result.transcript and again.outputs.keys() == result.outputs.keys()
    assert again.record.results.keys() == record.results.keys() and record.stages
    with pytest.raises(RuntimeError, match="no stages"):
        again.record.outputs()


@pytest.mark.decodes
def test_stored_results_are_served_from_the_cache_on_a_second_record(workspace, records, cascade):
    meeting = workspace.scored_meetings[0]
    first = records[meeting.id]
    record = cascade.record(meeting.audio, first.context, first.cache, session_id=meeting.id)
    hits = dict(first.cache.hits)
    for name in cascade.stage_names:
        cascade.run_stage(name, record)
    assert record.keys == first.keys
    for name in ("vad", "asr", "diarize"):
        assert first.cache.hits.get(name, 0) == hits.get(name, 0) + 1, name
    assert record.transcript() == first.transcript()


def test_identify_gets_the_diarization_stage_it_reads(cascade):
    identify = cascade.stage("identify")
    assert identify.reads == ("diarize",) and identify.inputs == {"diarize": cascade.stage("diarize")}


def test_a_stage_whose_input_stage_is_missing_is_refused():
    with pytest.raises(ValueError, match="reads diarize, which does not run before it"):
        build_stage(parse_stage("identify", None), "cpu", {})


def test_diarization_and_identification_run_beside_the_asr_and_nothing_else_does(cascade):
    later = cascade.stage_names[1:]
    assert cascade.beside("vad", later) == []  # every stage reads the speech regions
    assert cascade.beside("asr", later[1:]) == ["diarize", "identify"]
    assert cascade.beside("diarize", ["attribute", "identify", "correct"]) == []


@pytest.mark.decodes
def test_stages_run_side_by_side_give_the_results_of_running_them_in_order(workspace, records, cascade):
    """The ASR runs on this thread while diarization and identification run on a helper thread;
    every result and key equals the one-after-another run's (fresh computation, no cache)."""
    import threading

    meeting = workspace.scored_meetings[0]
    first = records[meeting.id]
    threads: dict[str, str] = {}
    run_stage = cascade.run_stage

    def spy(name, record):
        threads[name] = threading.current_thread().name
        return run_stage(name, record)

    cascade.run_stage = spy
    try:
        record = cascade.record(meeting.audio, first.context, StageCache(None), session_id=meeting.id)
        cascade.run_stages(record)
    finally:
        del cascade.run_stage
    assert record.keys == first.keys and record.transcript() == first.transcript()
    assert record.result("diarize").turns == first.result("diarize").turns
    assert record.result("identify") == first.result("identify")
    main = threading.current_thread().name
    assert {n for n, t in threads.items() if t != main} == {"diarize", "identify"}, threads
    assert set(record.timings) >= set(cascade.stage_names) | {"audio"}


@pytest.mark.decodes
def test_an_error_of_a_stage_run_beside_another_is_raised_by_the_run(workspace, cascade, monkeypatch):
    meeting = workspace.scored_meetings[0]
    diarize = cascade.stage("diarize")

    def broken(record):
        raise ValueError("the diarizer failed")

    monkeypatch.setattr(diarize, "run", broken)
    record = cascade.record(meeting.audio, None, StageCache(None), session_id=meeting.id)
    with pytest.raises(ValueError, match="the diarizer failed"):
        cascade.run_stages(record)
    assert "diarize" not in record.results and "attribute" not in record.results
