"""Number recall and technical-term recall: hand-computed cases."""
from __future__ import annotations

import pytest

from speechkit.metrics.normalize import normalize, normalize_term, normalized_text
from speechkit.metrics.terms import MANIFEST, REFERENCE_SCAN, occurs, spoken_terms, term_recall, term_recalls
from speechkit.transcript import Segment, Transcript
from speechkit.workspace import TermSet

TERMS = TermSet(numbers=("$4.2 million", "12%", "March 3rd", "P99"),
                jargon=("pacs.008", "Kubernetes", "ISO 20022"))


@pytest.mark.parametrize("term, normalised", [
    ("pacs.008", "pacs.008"), ("P99", "p 99"), ("v2.3.1", "v 2.3 one"), ("March 3rd", "march 3rd"),
    ("$4.2 million", "$4200000"), ("12%", "12%"), ("ISO 20022", "iso 20022"),
])
def test_documented_normal_forms(term, normalised):
    """docs/scores-schema.md lists these; the test keeps the page honest."""
    assert normalize_term(term) == normalised


def test_spoken_forms_match_written_terms():
    # spoken numbers become digits on both sides, so the written term is found
    padded = f" {normalize('four point two million dollars went out on march third, twelve percent p ninety nine')} "
    assert all(occurs(t, padded) for t in TERMS.numbers)
    # a spelled-out identifier is not the written one: the hypothesis must carry "pacs.008"
    assert not occurs("pacs.008", f" {normalize('pacs dot zero zero eight')} ")


def test_whole_word_match_only():
    assert not occurs("P99", " p 990 latency ")
    assert not occurs("Kubernetes", " kubernetesish ")
    assert occurs("Kubernetes", " on kubernetes today ")


def test_term_spoken_in_one_meeting_only_counts_there():
    m1_ref = "We moved four point two million dollars through pacs.008 and twelve percent failed."
    m1_hyp = "we moved $4.2 million through packs 008 and 12 percent failed"
    m2_ref = "The Kubernetes upgrade is on March 3rd."
    m2_hyp = "the cooper netties upgrade is on march third"

    n1, j1 = term_recalls(normalize(m1_ref), normalize(m1_hyp), TERMS)
    assert n1.spoken == ("$4.2 million", "12%") and n1.found == ("$4.2 million", "12%")
    assert (n1.ratio.num, n1.ratio.den) == (2, 2)
    assert j1.spoken == ("pacs.008",) and j1.missed == ("pacs.008",) and j1.ratio.value == 0.0
    assert j1.source == REFERENCE_SCAN

    n2, j2 = term_recalls(normalize(m2_ref), normalize(m2_hyp), TERMS)
    # pacs.008 was not spoken in meeting 2, so it is not held against it
    assert j2.spoken == ("Kubernetes",) and j2.missed == ("Kubernetes",)
    assert n2.spoken == ("March 3rd",) and n2.found == ("March 3rd",)
    # micro over the two meetings: numbers 3/3, jargon 0/2
    assert n1.ratio.num + n2.ratio.num == 3 and n1.ratio.den + n2.ratio.den == 3
    assert j1.ratio.den + j2.ratio.den == 2


def test_manifest_terms_are_taken_as_spoken():
    listed = TermSet(numbers=("P99",), jargon=("pacs.008", "pacs.008"))
    numbers, jargon = term_recalls("reference text is not scanned", normalize("the p99 is fine, pacs.008 too"),
                                   TERMS, listed)
    assert numbers.source == jargon.source == MANIFEST
    assert numbers.found == ("P99",) and jargon.spoken == ("pacs.008",) and jargon.ratio.value == 1.0


def test_nothing_spoken_is_not_applicable():
    numbers, jargon = term_recalls(normalize("hello there"), normalize("hello there"), TERMS)
    assert numbers.ratio.value is None and jargon.ratio.value is None


def test_terms_that_normalise_to_nothing_are_ignored():
    result = term_recall(["mmm", "Kubernetes"], "kubernetes")
    assert result.ignored == ("mmm",) and result.spoken == ("Kubernetes",) and result.ratio.value == 1.0
    assert spoken_terms(["mmm"], "mmm mmm") == ()


def test_a_number_split_across_two_segments_is_not_joined():
    """Each segment is normalised on its own: "four point" | "two million dollars" is not $4.2 million."""
    reference = Transcript("m", [Segment(0, 4, "A", "We moved four point two million dollars.")])
    one_segment = Transcript("m", [Segment(0, 4, "X", "we moved four point two million dollars")])
    split = Transcript("m", [Segment(0, 2, "X", "we moved four point"), Segment(2, 4, "X", "two million dollars")])
    numbers, _ = term_recalls(normalized_text(reference), normalized_text(one_segment), TERMS)
    assert numbers.spoken == numbers.found == ("$4.2 million",)
    numbers, _ = term_recalls(normalized_text(reference), normalized_text(split), TERMS)
    assert numbers.spoken == numbers.missed == ("$4.2 million",)
    # the joined raw text would make it up: the split is what the per-segment normalisation changes
    assert term_recall(["$4.2 million"], " ".join(s.text for s in split.segments)).found == ("$4.2 million",)
