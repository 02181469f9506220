"""The deterministic parts of adaptive probing: labels, the UCB scoreboard and its dead-demand rule,
the novelty filter, the token meter and the options."""
from __future__ import annotations

import math

import numpy as np
import pytest

from speechkit.core.options import OptionError
from speechkit.steps.probe.labels import label, severe
from speechkit.steps.probe.loop import ProbeOptions
from speechkit.steps.probe.novelty import NoveltyFilter
from speechkit.steps.probe.roles import TokenMeter
from speechkit.steps.probe.scoreboard import Scoreboard


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
