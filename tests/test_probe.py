"""The deterministic parts of adaptive probing: labels, the UCB scoreboard and its dead-demand rule,
the novelty filter, the token meter, the options, the parts a transcript is read in, and the statistics
of finding rates (Wilson, Newcombe, Fisher) against published and hand-computed values."""
from __future__ import annotations

import math

import numpy as np
import pytest
from reliability_helpers import seg

from speechkit.core.options import OptionError
from speechkit.metrics.bootstrap import Ratio, paired_bootstrap
from speechkit.stages.summarize.llm import chunk_lines, transcript_lines
from speechkit.steps.probe.inputs import NOTHING, excerpts
from speechkit.steps.probe.labels import label, severe
from speechkit.steps.probe.loop import ProbeOptions
from speechkit.steps.probe.novelty import NoveltyFilter
from speechkit.steps.probe.results import comparison
from speechkit.steps.probe.roles import TokenMeter
from speechkit.steps.probe.scoreboard import Scoreboard
from speechkit.steps.probe.stats import difference, fisher_p, newcombe, rate, wilson
from speechkit.transcript import Transcript


@pytest.mark.parametrize("faith, comp, expected, is_severe", [
    (5, 5, "hard-negative", False), (5, 4, "near-miss", False), (4, 4, "near-miss", False),
    (4, 3, "finding", False), (3, 5, "finding", False), (5, 2, "finding", True), (1, 5, "finding", True),
])
def test_the_lower_score_labels_a_probe(faith, comp, expected, is_severe):
    assert label(faith, comp) == expected
    assert severe(faith, comp) is is_severe


@pytest.mark.parametrize("bad", [0, 6, 3.5, "4", None])
def test_a_score_outside_1_to_5_is_refused(bad):
    with pytest.raises(ValueError):
        label(bad, 3)


def test_an_untested_demand_is_picked_first():
    board = Scoreboard(["a", "b", "c"])
    for _ in range(3):
        board.record("a", "finding")
    assert board.ucb("b") == math.inf
    assert board.pick(2) == ["b", "c"]  # both untested, in their given order, before a's high reward
    board.record("b", "hard-negative")
    assert board.pick(1) == ["c"]


def test_among_untested_demands_one_with_fewer_probes_started_goes_first():
    board = Scoreboard(["a", "b", "c"])
    board.start("a")  # started, but its question was rejected: still untested
    board.start("b")
    assert board.pick(3) == ["c", "a", "b"]
    assert board.as_dict()["a"]["started"] == 1 and board.as_dict()["a"]["tests"] == 0


def test_ucb_is_the_mean_reward_plus_c_sqrt_ln_n_over_k_with_near_misses_at_half_credit():
    board = Scoreboard(["a", "b", "c"], c=1.0)
    board.record("a", "finding")
    board.record("b", "hard-negative")
    board.record("c", "near-miss")
    board.record("c", "finding")
    n = 4
    assert board.total == n
    assert board.mean("c") == pytest.approx((0.5 + 1) / 2)
    assert board.ucb("a") == pytest.approx(1 + math.sqrt(math.log(n) / 1))
    assert board.ucb("b") == pytest.approx(0 + math.sqrt(math.log(n) / 1))
    assert board.ucb("c") == pytest.approx(0.75 + math.sqrt(math.log(n) / 2))
    assert board.pick(3) == ["a", "c", "b"]
    half = Scoreboard(["x"], c=2.0, near_miss_weight=0.25)
    half.record("x", "near-miss")
    half.record("x", "hard-negative")
    assert half.ucb("x") == pytest.approx(0.125 + 2.0 * math.sqrt(math.log(2) / 2))


def test_a_demand_with_four_tests_and_no_finding_is_dead_and_never_picked_again():
    board = Scoreboard(["a", "b"])
    for outcome in ("near-miss", "hard-negative", "near-miss"):
        board.record("a", outcome)
    assert not board.dead("a")
    board.record("a", "near-miss")  # near misses are not findings
    assert board.dead("a")
    assert board.pick(3) == ["b", "b", "b"]  # fewer live demands than K: the live ones again
    for outcome in ("hard-negative", "hard-negative", "hard-negative", "finding"):
        board.record("b", outcome)
    assert not board.dead("b")  # a finding keeps it alive
    for _ in range(4):
        board.record("b", "hard-negative")
    assert not board.dead("b")  # the rule counts findings over all its tests
    lonely = Scoreboard(["z"], dead_after=1)
    lonely.record("z", "hard-negative")
    assert lonely.pick(2) == []
    assert board.as_dict()["a"] == {"started": 0, "tests": 4, "findings": 0, "near_misses": 3, "mean": 0.375,
                                    "ucb": pytest.approx(0.375 + math.sqrt(math.log(12) / 4), abs=1e-4),
                                    "dead": True}


class Table:
    """A text similarity given by a table (pairs not listed: 0)."""

    name = "table"
    threshold = 0.85

    def __init__(self, pairs: dict[tuple[str, str], float]) -> None:
        self.pairs = {**pairs, **{(b, a): v for (a, b), v in pairs.items()}}

    def matrix(self, left, right) -> np.ndarray:
        return np.array([[1.0 if a == b else self.pairs.get((a, b), 0.0) for b in right] for a in left])


def test_the_novelty_filter_drops_a_question_above_085_to_any_admitted_one():
    f = NoveltyFilter(Table({("q1", "q2"): 0.85, ("q1", "q3"): 0.851, ("q2", "q4"): 0.9}))
    assert f.admit("q1")
    assert f.admit("q2")  # exactly 0.85: novel enough
    assert not f.admit("q3")  # above 0.85 to q1
    assert not f.admit("q4")  # above 0.85 to q2, admitted in the same batch
    assert not f.admit("q1")  # the same question again
    assert f.admitted == ["q1", "q2"]
    assert f.closest("q3") == pytest.approx(0.851)


def test_the_token_meter_counts_prompt_and_answer_at_four_characters_a_token():
    meter = TokenMeter(budget=10)
    meter.count([{"role": "user", "content": "x" * 30}], "y" * 5)  # 35 characters: 9 tokens
    assert (meter.spent, meter.exhausted) == (9, False)
    meter.count([{"role": "user", "content": "z"}], "")
    assert (meter.spent, meter.exhausted) == (10, True)


def test_probe_options_are_checked_as_a_recipes_are():
    assert ProbeOptions().iterations == 20 and ProbeOptions().questions_per_iteration == 10
    with pytest.raises(OptionError, match="iterations"):
        ProbeOptions.from_dict({"iterations": 0}, where="")
    with pytest.raises(OptionError, match="demands"):
        ProbeOptions.from_dict({"demands": ["a", "a"]}, where="")
    with pytest.raises(OptionError, match="api_key"):
        ProbeOptions.from_dict({"api_key": "sk-x"}, where="")


@pytest.mark.parametrize("k, n, low, high", [
    (81, 263, 0.2553, 0.3662),  # Newcombe (1998), Statistics in Medicine 17:857, Table II, method 3
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),  # 0 of n: [0, z^2 / (n + z^2)]
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_intervals_match_the_published_ones(k, n, low, high):
    assert wilson(k, n) == pytest.approx((low, high), abs=1e-4)


def test_wilson_of_nothing_judged_is_none_and_all_findings_reach_one():
    assert wilson(0, 0) is None
    z2 = 1.959963984540054 ** 2
    assert wilson(5, 5) == pytest.approx((5 / (5 + z2), 1.0))


def test_newcombes_interval_of_a_difference_matches_his_worked_example():
    # Newcombe (1998), Statistics in Medicine 17:873, example (a): 56/70 - 48/80, method 10
    assert newcombe(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    # (b) 9/10 - 3/10: 0.1705 to 0.8090
    assert newcombe(9, 10, 3, 10) == pytest.approx((0.1705, 0.8090), abs=1e-4)
    assert newcombe(1, 2, 0, 0) is None


def test_fishers_exact_test_matches_the_hypergeometric_sum():
    # the lady tasting tea: [[3, 1], [1, 3]]; tables with the same margins have probabilities
    # C(4, a) C(4, 4 - a) / C(8, 4) = 1, 16, 36, 16, 1 over 70; two-sided: those at most 16/70
    assert fisher_p(3, 4, 1, 4) == pytest.approx(34 / 70)
    assert fisher_p(4, 4, 0, 4) == pytest.approx(2 / 70)
    assert fisher_p(2, 4, 2, 4) == pytest.approx(1.0)
    # 1 of 10 against 6 of 10: margins 7 findings of 20; one-sided tail a <= 1 doubled by symmetry of tables
    tail = sum(math.comb(7, a) * math.comb(13, 10 - a) for a in (0, 1)) / math.comb(20, 10)
    assert fisher_p(1, 10, 6, 10) == pytest.approx(2 * tail)
    assert fisher_p(0, 0, 3, 5) is None


def _fisher(k1: int, n1: int, k2: int, n2: int) -> float:
    """Fisher's two-sided p-value summed from the hypergeometric probabilities: the tables with the
    same margins that are at most as likely as the observed one."""
    found, total = k1 + k2, n1 + n2
    odds = {a: math.comb(found, a) * math.comb(total - found, n1 - a) / math.comb(total, n1)
            for a in range(max(0, n1 - (total - found)), min(found, n1) + 1)}
    return sum(p for p in odds.values() if p <= odds[k1] * (1 + 1e-7))


@pytest.mark.parametrize("table", [(56, 70, 48, 80), (2, 16, 7, 16), (0, 12, 5, 9), (3, 3, 0, 40)])
def test_fishers_p_value_matches_the_sum_over_tables(table):
    assert fisher_p(*table) == pytest.approx(_fisher(*table))


def test_a_difference_of_rates_holds_the_value_interval_and_p_value():
    one, other = rate(56, 70), rate(48, 80)
    assert one == {"judged": 70, "findings": 56, "finding_rate": 0.8, "ci": [0.6918, 0.877]}
    d = difference(one, other)
    assert d == {"difference": 0.2, "ci": [0.0524, 0.3339], "p_value": round(_fisher(56, 70, 48, 80), 4)}
    assert difference(rate(0, 0), other) == {"difference": None, "ci": None, "p_value": None}


def test_a_transcript_is_cut_into_parts_each_with_the_own_lines_of_its_time():
    long_turn = " ".join(f"word{i}" for i in range(80))  # about 560 bytes: three parts of at most 200
    reference = Transcript("m", [seg("a", 0.0, "hello there everyone", "Ann"), seg("b", 10.0, long_turn, "Bob", 0.1),
                                 seg("a", 100.0, "closing remark", "Ann")])
    own = Transcript("m", [seg("S0", 0.5, "own early"), seg("S1", 12.0, "own middle"), seg("S0", 60.0, "own gap"),
                           seg("S0", 101.0, "own late")])
    parts = excerpts(reference, own, 200)
    assert [p.reference for p in parts] == ["\n".join(c) for c in chunk_lines(transcript_lines(reference), 200)]
    assert len(parts) == 4 and all(len(p.reference.encode()) <= 200 for p in parts)
    # part 0 runs to Bob's turn (10 s, and 5 s more); parts 1-3 begin in it, so from 5 s on
    assert parts[0].own == "[00:00] S0: own early\n[00:12] S1: own middle"
    assert [("own early" in p.own, "own middle" in p.own, "own late" in p.own) for p in parts[1:]] == \
        [(False, True, False), (False, True, False), (False, True, True)]
    (empty,) = excerpts(Transcript("m", []), own, 200)
    assert empty.reference == NOTHING and "own late" in empty.own
    assert excerpts(reference, Transcript("m", []), 200)[0].own == NOTHING


def _part(labels_by_meeting: dict[str, list[str | None]]) -> dict:
    """A strategy's part of probe.json with these probe labels per meeting (one demand, "d")."""
    judged = [x for labels in labels_by_meeting.values() for x in labels if x]
    found = sum(x == "finding" for x in judged)
    return {"summary": {"judged": len(judged), "findings": found, "by_demand": {"d": rate(found, len(judged))}},
            "meetings": {m: {"probes": [{"label": x} for x in labels]} for m, labels in labels_by_meeting.items()}}


def test_the_comparison_pairs_the_strategies_meeting_by_meeting():
    searched = _part({"a": ["finding", "finding", None, "near-miss"], "b": ["finding", "hard-negative"],
                      "c": ["hard-negative", "hard-negative", "finding"]})
    drawn = _part({"a": ["finding", "hard-negative", "hard-negative"], "b": ["near-miss", "hard-negative"],
                   "c": ["hard-negative", None, "hard-negative"]})
    c = comparison({"ucb": searched, "random": drawn}, resamples=500, seed=3)
    assert c["overall"] == difference(rate(4, 8), rate(1, 7)) and c["by_demand"]["d"] == c["overall"]
    paired = paired_bootstrap([Ratio(1, 3), Ratio(0, 2), Ratio(0, 2)], [Ratio(2, 3), Ratio(1, 2), Ratio(1, 3)],
                              500, 3)
    assert c["over_meetings"] == {"meetings": 3, "resamples": 500, "difference": round(4 / 8 - 1 / 7, 4),
                                  "ci": [round(paired.ci_low, 4), round(paired.ci_high, 4)]}
    assert c["over_meetings"]["ci"][0] < c["over_meetings"]["difference"] < c["over_meetings"]["ci"][1]
    assert comparison({"ucb": searched}, 500, 3) is None
    assert comparison({"ucb": searched, "random": drawn}, 0, 3)["over_meetings"]["ci"] is None
