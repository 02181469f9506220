"""Spoken forms derived from canonical terms, and the phonetic/orthographic score."""
from __future__ import annotations

import pytest

from speechkit.stages.correct.spoken import Entry, normalize_word, say, score_matrix, spoken_forms


@pytest.mark.parametrize("term, expected", [
    ("2024", ["twenty twenty four", "two thousand twenty four"]),
    ("008", ["zero zero eight", "oh oh eight"]),
    ("4.2", ["four point two"]),
    ("CI", ["c i", "see eye"]),
    ("ComfyUI", ["comfy you eye", "comfy u i", "comfyui"]),
    ("P99", ["p ninety nine", "pee ninety nine"]),
    ("v2.3.1", ["v two point three point one", "version two dot three dot one"]),
    ("pacs.008", ["pacs dot zero zero eight", "pacs dot oh oh eight", "pacs point zero zero eight"]),
    ("camt.054", ["camt dot zero five four"]),
    ("my_var", ["my underscore var"]),
    ("15%", ["fifteen percent"]),
    ("$1.2M", ["one point two million dollars"]),
    ("e-mail", ["e mail", "e dash mail"]),
    ("x-5", ["x dash five", "x minus five"]),
    ("ArcBus", ["arc bus", "arcbus"]),
    ("SN7142", ["s n seven one four two", "s n seventy one forty two"]),
    ("2024-03-15", ["march fifteenth twenty twenty four", "march fifteenth"]),
    ("10,000", ["ten thousand"]),
    ("120", ["one hundred twenty", "one twenty"]),
    ("Priya Sharma", ["priya sharma"]),
])
def test_spoken_forms_are_derived_from_the_canonical_term(term, expected):
    forms = spoken_forms(term)
    for form in expected:
        assert form in forms, (term, forms)


def test_most_likely_reading_comes_first_and_forms_are_bounded():
    assert spoken_forms("2024")[0] == "twenty twenty four"
    assert spoken_forms("008")[0] == "zero zero eight"
    assert spoken_forms("pacs.008")[0] == "pacs dot zero zero eight"
    assert len(spoken_forms("SN7142-v2.3.1_rc.2024")) <= 24
    assert all(f == " ".join(f.split()) and f == f.lower() for f in spoken_forms("SN7142-v2.3.1"))


def test_odd_tokens_never_crash():
    for token in ["³", "", "—", "٣", "José", "a\u0301", "...", "#", "$", "1st", "3x", "5ms"]:
        spoken_forms(token)
        say([token])
    assert spoken_forms("1st") == ("first",)
    assert spoken_forms("José") == ("jose",)


def test_say_reads_recognised_digits_out():
    assert say(["p99", "latency"]) == ("p", "ninety", "nine", "latency")
    assert normalize_word("“Priya,”") == "priya"
    assert normalize_word("15%.") == "15%"


def test_score_matrix_ranks_the_right_entry_first():
    entries = [Entry.of(t, "term") for t in ("pacs.008", "camt.054", "P99", "Kubernetes")]
    spans = [tuple(s.split()) for s in ("packs dot zero zero eight", "camp dot zero five four",
                                        "p 99", "cube er net ease")]
    scores = score_matrix(spans, entries)
    assert scores.shape == (4, 4)
    assert list(scores.argmax(axis=1)) == [0, 1, 2, 3]
    assert scores[0, 0] > 0.95 and scores[2, 2] == pytest.approx(1.0)
    assert scores[0, 1] < 0.7
    assert score_matrix([("from", "the")], [Entry.of("Prometheus", "term")])[0, 0] < 0.8
