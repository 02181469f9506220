"""Word attribution: ASR words get the speakers of diarization turns; segments split at changes."""
from __future__ import annotations

from speechkit.stages.attribute import attribute_words
from speechkit.transcript import Segment, Word, name_segments


def words(*items: tuple[str, float, float]) -> tuple[Word, ...]:
    return tuple(Word(text, start, end, 0.9) for text, start, end in items)


TURNS = [Segment(0.0, 3.0, "SPEAKER_00"), Segment(3.0, 6.0, "SPEAKER_01"),
         Segment(8.0, 9.0, "SPEAKER_00")]


def test_segment_spanning_a_speaker_change_is_split():
    asr = Segment.from_words(words(("so", 1.0, 1.3), ("we", 1.4, 1.6), ("ship", 2.7, 3.2),
                                   ("really", 3.3, 3.7), ("yes", 4.0, 4.4)), speaker="")
    out = attribute_words([asr], TURNS)
    assert [(s.speaker, s.text, s.start, s.end) for s in out] == [
        ("SPEAKER_00", "so we ship", 1.0, 3.2),  # 'ship' overlaps 0.3 s of turn 0, 0.2 s of turn 1
        ("SPEAKER_01", "really yes", 3.3, 4.4)]
    assert [w for s in out for w in s.words] == list(asr.words)


def test_word_outside_every_turn_takes_the_nearest():
    asr = [Segment.from_words(words(("um", 6.5, 6.7)), speaker=""),
           Segment.from_words(words(("right", 7.5, 7.8)), speaker="")]
    assert [s.speaker for s in attribute_words(asr, TURNS)] == ["SPEAKER_01", "SPEAKER_00"]


def test_single_speaker_segment_keeps_its_bounds_and_names_carry_over():
    turns = [Segment(0.0, 10.0, "SPEAKER_00", speaker_name="Ann Lee")]
    asr = Segment(0.5, 2.5, "", "hello there", words(("hello", 0.6, 0.9), ("there", 1.0, 1.4)))
    (out,) = attribute_words([asr], turns)
    assert (out.start, out.end, out.speaker, out.speaker_name) == (0.5, 2.5, "SPEAKER_00", "Ann Lee")


def test_untimed_words_follow_their_neighbour_and_wordless_segments_their_span():
    asr = Segment(2.0, 4.5, "", "uh so then", (Word("uh"), Word("so", 2.0, 2.5), Word("then"),
                                               Word("okay", 3.5, 4.5)))
    out = attribute_words([asr, Segment(3.1, 5.0, "", "an STM line")], TURNS)
    assert [(s.speaker, s.text) for s in out] == [("SPEAKER_00", "uh so then"),
                                                   ("SPEAKER_01", "okay"),
                                                   ("SPEAKER_01", "an STM line")]
    assert out[0].start == 2.0 and out[0].end == 2.5


def test_overlapping_turns_give_the_word_to_the_larger_overlap():
    turns = [Segment(0.0, 5.0, "SPEAKER_00"), Segment(2.0, 2.6, "SPEAKER_01")]
    asr = Segment.from_words(words(("a", 1.0, 1.5), ("b", 2.1, 2.5), ("c", 3.0, 3.5)), speaker="")
    assert [s.text for s in attribute_words([asr], turns)] == ["a b c"]  # 'b' overlaps both fully
    turns = [Segment(0.0, 2.2, "SPEAKER_00"), Segment(2.0, 2.6, "SPEAKER_01")]
    assert [(s.speaker, s.text) for s in attribute_words([asr], turns)] == [
        ("SPEAKER_00", "a"), ("SPEAKER_01", "b c")]


def test_no_turns_leaves_segments_alone():
    asr = [Segment.from_words(words(("hi", 0.0, 0.2)), speaker="asr")]
    assert attribute_words(asr, []) == asr


def test_name_segments():
    segs = [Segment(0, 1, "SPEAKER_00", "a"), Segment(1, 2, "SPEAKER_01", "b"),
            Segment(2, 3, "SPEAKER_02", "c", speaker_name="stale")]
    named = name_segments(segs, {"SPEAKER_00": "Ann Lee", "SPEAKER_01": None})
    assert [s.speaker_name for s in named] == ["Ann Lee", None, None]
    assert [s.speaker for s in named] == ["SPEAKER_00", "SPEAKER_01", "SPEAKER_02"]


# A change of speaker placed inside a sentence by the turns (their edges are 0.75 s apart).
SENTENCES = words(("we", 0.2, 0.4), ("ship", 0.5, 0.8), ("friday.", 0.9, 1.4), ("sounds", 1.6, 1.9),
                  ("good.", 2.0, 2.4), ("then", 2.6, 2.8), ("done.", 2.9, 3.3))


def speakers_of(out: list[Segment]) -> list[tuple[str, str]]:
    return [(s.speaker, s.text) for s in out]


def test_a_change_inside_a_sentence_moves_to_the_sentence_end_nearby():
    asr = Segment.from_words(SENTENCES, speaker="")
    late = [Segment(0.0, 1.95, "A"), Segment(1.95, 4.0, "B")]  # 'sounds' went to A
    assert speakers_of(attribute_words([asr], late)) == [("A", "we ship friday. sounds"), ("B", "good. then done.")]
    assert speakers_of(attribute_words([asr], late, sentence_snap_s=1.0)) == [
        ("A", "we ship friday."), ("B", "sounds good. then done.")]
    early = [Segment(0.0, 0.85, "A"), Segment(0.85, 4.0, "B")]  # 'friday.' went to B
    assert speakers_of(attribute_words([asr], early, sentence_snap_s=1.0)) == [
        ("A", "we ship friday."), ("B", "sounds good. then done.")]


def test_a_change_stays_at_a_sentence_end_or_where_no_sentence_end_is_near():
    asr = Segment.from_words(SENTENCES, speaker="")
    at_end = [Segment(0.0, 1.5, "A"), Segment(1.5, 4.0, "B")]
    assert speakers_of(attribute_words([asr], at_end, sentence_snap_s=1.0)) == [
        ("A", "we ship friday."), ("B", "sounds good. then done.")]
    late = [Segment(0.0, 1.95, "A"), Segment(1.95, 4.0, "B")]
    # 'friday.' ends 0.5 s before 'sounds': out of reach at 0.4 s
    assert speakers_of(attribute_words([asr], late, sentence_snap_s=0.4))[0] == ("A", "we ship friday. sounds")
    plain = Segment.from_words(words(("we", 0.2, 0.4), ("ship", 0.5, 0.8), ("friday", 0.9, 1.4),
                                     ("sounds", 1.6, 1.9), ("good", 2.0, 2.4)), speaker="")
    assert speakers_of(attribute_words([plain], late, sentence_snap_s=1.0)) == [
        ("A", "we ship friday sounds"), ("B", "good")]  # no sentence end: nothing to move to


def test_a_change_does_not_move_across_another_change_and_a_flicker_inside_a_sentence_goes():
    asr = Segment.from_words(SENTENCES, speaker="")
    # the turns give A 'we', B 'ship', C from 'friday.': the change after 'we' cannot reach the
    # sentence end without passing over B's and C's words; the change after 'ship' moves on to it
    turns = [Segment(0.0, 0.45, "A"), Segment(0.45, 0.85, "B"), Segment(0.85, 4.0, "C")]
    assert speakers_of(attribute_words([asr], turns, sentence_snap_s=1.0)) == [
        ("A", "we"), ("B", "ship friday."), ("C", "sounds good. then done.")]
    # the turns give A 'we ship', B 'friday. sounds', C from 'good.': the first change moves on to
    # 'friday.', which leaves B only 'sounds' inside C's sentence; the second change moves back
    # to 'friday.' too, and B's flicker is gone
    turns = [Segment(0.0, 0.85, "A"), Segment(0.85, 1.95, "B"), Segment(1.95, 4.0, "C")]
    assert speakers_of(attribute_words([asr], turns, sentence_snap_s=1.0)) == [
        ("A", "we ship friday."), ("C", "sounds good. then done.")]
