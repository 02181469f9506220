"""The guards every rewrite must pass: no dropped words, no changes outside vocabulary edits."""
from __future__ import annotations

from speechkit.stages.correct import Vocabulary
from speechkit.stages.correct.guards import GuardOptions, check_rewrite
from speechkit.workspace import Person

VOCAB = Vocabulary.build(["pacs.008", "camt.054", "P99", "Kubernetes"],
                         [Person("p1", "Priya Sharma", ("Pri",)), Person("p2", "Devon Cross")])


def check(old: str, new: str, **options):
    return check_rewrite(old.split(), new.split(), VOCAB.entries, GuardOptions(**options))


def test_jargon_edits_that_shorten_the_turn_pass():
    v = check("we moved the packs dot zero zero eight mapping to the camp dot zero five four flow",
              "we moved the pacs.008 mapping to the camt.054 flow")
    assert v.ok, v
    assert [(r.i1, r.i2, r.j1, r.j2) for r in v.regions] == [(3, 8, 3, 4), (11, 16, 7, 8)]
    assert v.regions[0].entries == ("pacs.008",)
    assert check("p ninety nine latency is up", "P99 latency is up").ok
    assert check("pre a said so", "Priya said so").ok
    assert check("Pre a sharma and Devon said so", "Priya Sharma and Devon said so").ok
    # ... but a name may not grow: "pre a" is not "Priya Sharma"
    assert not check("Pre a and Devon said so", "Priya Sharma and Devon said so").ok


def test_case_and_punctuation_alone_are_not_changes():
    v = check("so, priya said", "So priya said.")
    assert v.ok and v.regions == ()


def test_dropping_words_is_rejected():
    old = "so i think the rollout is fine but we should wait for the numbers before we ship it"
    new = "i think the rollout is fine but we should wait for numbers before we ship"
    v = check(old, new)
    assert not v.ok and v.reason == "drops-words"
    assert "dropped" in v.detail


def test_a_single_dropped_word_is_still_a_change_outside_the_vocabulary():
    v = check("the rollout is fine and we ship it on monday", "the rollout is fine and we ship on monday")
    assert not v.ok and v.reason == "changes-outside-vocabulary"
    assert "'it'" in v.detail


def test_rewording_insertion_and_unrelated_terms_are_rejected():
    assert check("we ship on monday", "we deploy on monday").reason == "changes-outside-vocabulary"
    assert check("we ship on monday", "we ship P99 on monday").reason == "changes-outside-vocabulary"
    # a vocabulary term that does not sound like what it replaces
    assert check("we ship on monday", "we Kubernetes on monday").reason == "changes-outside-vocabulary"
    # a vocabulary term swallowing ordinary words around it
    v = check("so the latency p ninety nine was high today", "so the P99 today")
    assert not v.ok


def test_paper_style_compression_is_rejected():
    # Appendix V: the rewriter kept the jargon fix but deleted function words around it.
    old = ("race conditions isolated it s the locking now registry can current writes global "
           "locks out p ninety nine was like one twenty devonsoncis")
    new = "race conditions isolated locking now registry global locks out P99 like Devon"
    v = check(old, new)
    assert not v.ok and v.reason == "drops-words"


def test_drop_threshold_is_an_option():
    old = "one two three four five six seven eight nine ten"
    new = "one two three four five six seven eight nine"
    assert check(old, new).reason == "changes-outside-vocabulary"
    assert check(old, new, max_drop_fraction=0.05).reason == "drops-words"
