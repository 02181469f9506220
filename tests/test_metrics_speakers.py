"""Speaker-identity consistency and named-speaker accuracy: hand-computed cases."""
from __future__ import annotations

import pytest

from speechkit.io import read_stm
from speechkit.metrics.bootstrap import micro
from speechkit.metrics.speakers import attribute_speakers, route_words, speaker_consistency, wrong_names
from speechkit.transcript import Segment, Transcript, Word
from speechkit.workspace import Person

PEOPLE = {"p1": Person("p1", "Robert Smith", nicknames=("Bob",)), "p2": Person("p2", "Alice Jones")}


def ref_segment(person: str, start: float, n: int) -> Segment:
    """``n`` one-second words spoken by ``person`` from ``start``."""
    return Segment.from_words([Word(f"w{i}", start + i, start + i + 1) for i in range(n)], speaker=person)


def reference(meeting: str) -> Transcript:
    """p1 speaks 0-4 s (4 words), p2 speaks 5-7 s (2 words)."""
    return Transcript(meeting, [ref_segment("p1", 0, 4), ref_segment("p2", 5, 2)])


def hypothesis(meeting: str, first: tuple[str, str | None], second: tuple[str, str | None]) -> Transcript:
    return Transcript(meeting, [Segment(0, 4.2, first[0], speaker_name=first[1]),
                                Segment(4.8, 7.1, second[0], speaker_name=second[1])])


def names(**hyps: Transcript) -> dict[str, dict[str, str | None]]:
    return {m: attribute_speakers(m, reference(m), h, PEOPLE).names for m, h in hyps.items()}


def test_bare_labels_are_meeting_local_so_inconsistent():
    """The same person labelled SPEAKER_00 in two meetings does not count as the same name."""
    got = names(m1=hypothesis("m1", ("SPEAKER_00", None), ("SPEAKER_01", None)),
                m2=hypothesis("m2", ("SPEAKER_00", None), ("SPEAKER_01", None)))
    assert got["m1"] == {"p1": "m1:SPEAKER_00", "p2": "m1:SPEAKER_01"}
    per_meeting = speaker_consistency(got)
    assert (per_meeting["m1"].num, per_meeting["m1"].den) == (0, 2)
    assert micro(list(per_meeting.values())).value == 0.0


def test_same_name_everywhere_is_consistent():
    got = names(m1=hypothesis("m1", ("SPEAKER_00", "Bob"), ("SPEAKER_01", "Alice")),
                m2=hypothesis("m2", ("SPEAKER_03", "Bob"), ("SPEAKER_00", "Alice")),
                m3=hypothesis("m3", ("spk", "Bob"), ("other", "Alice")))
    per_meeting = speaker_consistency(got)
    assert micro(list(per_meeting.values())).value == 1.0
    assert (per_meeting["m2"].num, per_meeting["m2"].den) == (4, 4)


def test_consistency_counts_ordered_meeting_pairs():
    """p1 is named A, A, B in three meetings: 2 of 6 ordered pairs agree. p2 is only in m1."""
    got = {"m1": {"p1": "A", "p2": "X"}, "m2": {"p1": "A"}, "m3": {"p1": "B"}}
    per_meeting = speaker_consistency(got)
    assert [(per_meeting[m].num, per_meeting[m].den) for m in ("m1", "m2", "m3")] == [(1, 2), (1, 2), (0, 2)]
    assert micro(list(per_meeting.values())).value == pytest.approx(2 / 6)
    # a person nobody was routed to (None) never matches, not even another None
    assert speaker_consistency({"a": {"p1": None}, "b": {"p1": None}})["a"].num == 0
    # people in one meeting only contribute nothing
    assert speaker_consistency({"a": {"p1": "A"}, "b": {"p2": "A"}})["a"].den == 0


def test_each_person_meeting_cell_says_whether_the_name_is_right():
    details = attribute_speakers("m", reference("m"), hypothesis("m", ("S0", "Bob"), ("S1", "Robert Smith")),
                                 PEOPLE).details()["persons"]
    assert (details["p1"]["name"], details["p1"]["name_right"]) == ("Bob", True)
    assert (details["p2"]["name"], details["p2"]["name_right"]) == ("Robert Smith", False)  # p1's name


def test_wrong_names_mark_where_a_persons_identity_breaks():
    """Bob is named right in m1 and m3, so Alice's name (m2) and a label (m4) break his identity;
    Cat is never named right (not enrolled): her usual label is kept, the odd one out is marked;
    a meeting where nothing of Dan was routed is not marked."""
    grid = {"p1": {"m1": ("Bob", True), "m2": ("Alice", False), "m3": ("Bob", True), "m4": ("Speaker 2", False)},
            "p3": {"m1": ("Speaker 1", False), "m2": ("Speaker 1", False), "m3": ("Speaker 4", False)},
            "p4": {"m1": ("Speaker 3", False), "m2": (None, None)}}
    assert wrong_names(grid) == {("p1", "m2"), ("p1", "m4"), ("p3", "m3")}
    # a tie between two labels: the earlier one is the person's label
    assert wrong_names({"p3": {"m1": ("Speaker 1", False), "m2": ("Speaker 4", False)}}) == {("p3", "m2")}


@pytest.mark.parametrize("given, correct", [
    ("Robert Smith", True), ("robert", True), ("Bob", True), ("BOB SMITH", True), ("Rob", False),
    ("Alice Jones", False), (None, False),
])
def test_named_speaker_accuracy_tolerates_first_names_and_nicknames(given, correct):
    hyp = hypothesis("m", ("SPEAKER_00", given), ("SPEAKER_01", "Alice"))
    attribution = attribute_speakers("m", reference("m"), hyp, PEOPLE)
    # p1 has 4 of 6 words, p2's 2 words are named "Alice" (first-name match)
    assert attribution.accuracy.den == 6
    assert attribution.accuracy.num == (4 if correct else 0) + 2


def test_routing_by_largest_overlap_midpoint_and_unrouted():
    ref = Transcript("m", [Segment.from_words([Word("a", 0.0, 1.0), Word("b", 1.0, 2.0), Word("c", 5.0, 5.0),
                                               Word("d", 8.0, 9.0)], speaker="p1")])
    hyp = Transcript("m", [Segment(0.0, 1.2, "X", speaker_name="Bob"), Segment(1.2, 4.0, "Y", speaker_name="Alice"),
                           Segment(4.5, 6.0, "Z", speaker_name="Bob")])
    routed = [seg.speaker if seg else None for _, seg in route_words(ref, hyp)]
    # b overlaps X by 0.2 s and Y by 0.8 s; c has no duration (midpoint inside Z); d is in no segment
    assert routed == ["X", "Y", "Z", None]
    attribution = attribute_speakers("m", ref, hyp, PEOPLE)
    assert attribution.persons["p1"].name == "Bob"  # majority: 2 words Bob, 1 Alice
    assert (attribution.accuracy.num, attribution.accuracy.den) == (2, 4)  # the unrouted word is wrong
    assert attribution.details()["unrouted_words"] == 1


def test_words_without_times_share_their_segment(realdata):
    """STM references have no word times: words get equal shares of the segment's span."""
    ref = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    people = {"Diane": Person("Diane", "Diane"), "Sheila": Person("Sheila", "Sheila")}
    # a hypothesis that names the speakers correctly but cuts every segment at its midpoint,
    # giving the second half to the other speaker
    segs = []
    for s in ref.segments:
        other = "Sheila" if s.speaker == "Diane" else "Diane"
        mid = (s.start + s.end) / 2
        segs += [Segment(s.start, mid, s.speaker, speaker_name=s.speaker),
                 Segment(mid, s.end, other, speaker_name=other)]
    attribution = attribute_speakers("sample", ref, Transcript("sample", segs), people)
    words = sum(len(s.text.split()) for s in ref.segments)
    first_halves = sum(len(s.text.split()) // 2 for s in ref.segments)
    assert attribution.accuracy.den == words
    # words entirely before the midpoint are right; a word straddling it goes to the bigger overlap
    assert first_halves <= attribution.accuracy.num <= first_halves + len(ref.segments)
    assert 0.4 < attribution.accuracy.value < 0.7
