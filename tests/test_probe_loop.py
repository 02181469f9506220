"""The probe loop over a run folder of the demo workspace, against a local stand-in OpenAI-compatible
endpoint that scripts every role's answers: what each role sees, stopping at I_max, the token budget,
dead demands, self-verification with one replacement, the novelty filter, failures, probe.json and the CLI;
a transcript read whole in parts; the random baseline and its comparison with the search."""
from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from llm_helpers import Endpoint, completion
from reliability_helpers import REFERENCES, make_workspace, seg
from scipy import stats

from speechkit.cli import main
from speechkit.core.options import OptionError
from speechkit.io import read_transcripts
from speechkit.io.atomic import write_json
from speechkit.io.notes import write_notes
from speechkit.io.run_folder import RunFolder
from speechkit.io.run_view import RunView
from speechkit.io.scores import Scores
from speechkit.io.seglst import write_seglst
from speechkit.llm import session
from speechkit.llm.client import LLMUnavailable
from speechkit.llm.run import checked_endpoint
from speechkit.llm.server import stop_shared_servers
from speechkit.notes import Notes
from speechkit.scoring import score_workspace
from speechkit.stages.summarize.llm import transcript_lines
from speechkit.steps import parse_step
from speechkit.steps.probe import LLMProber, materials_of, previous_probe, probe_section
from speechkit.steps.probe import probe_run as probe_step
from speechkit.steps.probe.labels import label
from speechkit.steps.probe.loop import ProbeOptions
from speechkit.steps.probe.roles import CHECKS, DEMANDS
from speechkit.transcript import Transcript

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"
NOTES_MARK = "The team reviewed the rollout plan."


class Same:
    """Novelty by identity: a question is a duplicate only of itself."""

    name = "same"
    threshold = 0.85

    def matrix(self, left, right) -> np.ndarray:
        return np.array([[float(a == b) for b in right] for a in left])


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    """A level-1 run of the demo's m01: its transcript unnamed (SPEAKER_xx), notes, an empty context."""
    reference = read_transcripts(DEMO / "meetings" / "m01" / "reference.json")["m01"]
    own = [seg.__class__(**{**seg.__dict__, "speaker": f"SPEAKER_0{i % 2}", "speaker_name": None})
           for i, seg in enumerate(reference.segments[:12])]
    run = tmp_path / "run"
    write_seglst(run / "transcripts" / "m01.json", [Transcript("m01", own)])
    write_notes(run / "notes" / "m01.json", Notes(summary=NOTES_MARK), "m01")
    write_json(run / "context" / "m01.json", {"level": 1, "notes_context": {"earlier_notes": "", "roster": [],
                                                                            "emails": "", "agenda": ""}})
    write_json(run / "run.json", {"recipe": {"level": 1}, "workspace": {"name": "demo", "root": str(DEMO)}})
    return run


class Script:
    """Scripted roles: questions numbered 1, 2, ... (``same_question``: always one), checks from
    ``checks(question)``, scores from ``scores(question)``; every request kept by role."""

    def __init__(self, scores: Callable[[str], tuple[int, int]] = lambda q: (5, 5),
                 checks: Callable[[str], bool] = lambda q: True, same_question: bool = False,
                 judge_reply: Callable[[int], tuple[int, str]] | None = None) -> None:
        self.scores, self.checks, self.same_question, self.judge_reply = scores, checks, same_question, judge_reply
        self.asked = 0
        self.prompts: dict[str, list[str]] = {}
        self.demand_of: dict[str, str] = {}

    def __call__(self, request: dict, call: int) -> tuple[int, str, float]:
        role = request["response_format"]["json_schema"]["name"]
        user = request["messages"][-1]["content"]
        self.prompts.setdefault(role, []).append(user)
        question = (re.search(r"QUESTION: (.*)", user) or [None, ""])[1]
        if role == "question":
            self.asked += 1
            content = {"question": "What was decided?" if self.same_question else f"Question {self.asked} here?"}
            self.demand_of[content["question"]] = re.search(r"that tests (.*?): ", user)[1]
        elif role == "checks":
            content = {c: self.checks(question) for c in CHECKS}
        elif role == "answer":
            content = {"answer": "They agreed to ship."}
        else:
            if self.judge_reply is not None:
                status, text = self.judge_reply(len(self.prompts["scores"]))
                return status, text, 0.0
            f, c = self.scores(question)
            content = {"faithfulness": f, "completeness": c}
        return 200, completion(json.dumps(content)), 0.0


def probe_run(folder, options: ProbeOptions, meetings=None, similarity=None, seed: int = 0) -> dict:
    """The probe step on ``folder`` in an LLM session of its own, as ``speechkit probe`` runs it."""
    run = RunFolder(folder)
    ws, prober = run.workspace(), LLMProber(options, similarity)
    with session.opened(run.llm_cache):
        materials = materials_of(run, ws, meetings, options.transcript_bytes)
        return probe_step(run, ws, prober, materials, checked_endpoint(prober.client, options.failures, "probe"),
                          seed, previous_probe(run))


def ucb(doc: dict) -> dict:
    """The default strategy's part of a probe.json."""
    return doc["strategies"]["ucb"]


def serve(served: list[Endpoint], script: Script) -> str:
    server = Endpoint(script, models=["m"])
    served.append(server)
    return server.url


def options(url: str, **given) -> ProbeOptions:
    return ProbeOptions(base_url=url, model="m", timeout_s=5.0, max_retries=0, backoff_s=0.0, **given)


def test_the_loop_stops_at_i_max_labels_every_probe_and_writes_probe_json(served, run_folder):
    script = Script(scores=lambda q: (2, 5) if int(q.split()[1]) % 2 else (5, 4))
    doc = probe_run(run_folder, options(serve(served, script), iterations=2, questions_per_iteration=2),
                    similarity=Same())
    assert json.loads((run_folder / "probe.json").read_text()) == doc
    m = ucb(doc)["meetings"]["m01"]
    assert (m["iterations"], m["stopped"]) == (2, "iterations")
    probes = m["probes"]
    # UCB: every demand untested at first, so the four probes take the first four demands in order
    assert [p["demand"] for p in probes] == ["factual recall", "attribution", "action ownership", "decision tracking"]
    assert [p["label"] for p in probes] == ["finding", "near-miss", "finding", "near-miss"]
    assert [p["severe"] for p in probes] == [True, False, True, False]
    s = ucb(doc)["summary"]
    assert (s["probes"], s["judged"], s["findings"], s["near_misses"], s["severe"]) == (4, 4, 2, 2, 2)
    assert (s["finding_rate"], s["severity_share"]) == (0.5, 1.0)
    assert s["findings_by_demand"] == {"action ownership": ["Question 3 here?"], "factual recall": ["Question 1 here?"]}
    assert m["scoreboard"]["attribution"]["mean"] == 0.5 and m["scoreboard"]["synthesis"]["tests"] == 0
    assert (doc["level"], doc["endpoint"]["model"], doc["options"]["iterations"]) == (1, "m", 2)
    assert doc["endpoint"]["requests"] == 4 * 4  # generate, verify, answer, judge per probe
    section = "\n".join(probe_section(RunView(RunFolder(run_folder), {}, Scores({}))))  # the run's report shows it
    assert "## Adaptive probing (roles: `m`)" in section
    assert "4 judged: finding rate 50.0% [15.0%, 85.0%], severity share 100.0%" in section  # Wilson's interval
    assert "  - action ownership: Question 3 here?" in section and "  - factual recall: Question 1 here?" in section
    assert "| factual recall | 1 / 1, 100.0% [20.6%, 100.0%] |" in section and "baseline" not in section


def test_each_role_sees_only_what_it_may(served, run_folder):
    script = Script()
    probe_run(run_folder, options(serve(served, script), iterations=1, questions_per_iteration=1), similarity=Same())
    system, judge = script.prompts["answer"][0], script.prompts["scores"][0]
    first = read_transcripts(DEMO / "meetings" / "m01" / "reference.json")["m01"].segments[0]
    named = f"{first.speaker_name or first.speaker}:"  # the reference names its speakers; the run does not
    assert NOTES_MARK in system and "SPEAKER_00:" in system and named not in system
    assert NOTES_MARK not in judge and "SPEAKER_00" not in judge and named in judge
    assert "They agreed to ship." in judge and "Question 1 here?" in judge
    assert named in script.prompts["question"][0] and "factual recall" in script.prompts["question"][0]


def test_the_token_budget_stops_the_search_after_the_probe_that_spent_it(served, run_folder):
    script = Script()
    doc = probe_run(run_folder, options(serve(served, script), iterations=5, questions_per_iteration=3,
                                        token_budget=1), similarity=Same())
    m = ucb(doc)["meetings"]["m01"]
    assert (len(m["probes"]), m["iterations"], m["stopped"]) == (1, 1, "token budget")
    assert m["tokens"] > 1 and ucb(doc)["summary"]["tokens"] == m["tokens"]


def test_dead_demands_end_the_search_before_i_max(served, run_folder):
    doc = probe_run(run_folder, options(serve(served, Script()), iterations=10, questions_per_iteration=1,
                                        demands=("x", "y"), dead_after=2), similarity=Same())
    m = ucb(doc)["meetings"]["m01"]
    assert (len(m["probes"]), m["iterations"], m["stopped"]) == (4, 4, "all demands dead")
    assert [p["demand"] for p in m["probes"]] == ["x", "y", "x", "y"]
    assert ucb(doc)["summary"]["finding_rate"] == 0.0 and ucb(doc)["summary"]["severity_share"] is None


def test_a_question_failing_verification_gets_one_replacement(served, run_folder):
    # question 1 fails, its replacement 2 passes; question 3 and its replacement 4 both fail
    script = Script(checks=lambda q: q not in ("Question 1 here?", "Question 3 here?", "Question 4 here?"))
    doc = probe_run(run_folder, options(serve(served, script), iterations=1, questions_per_iteration=2),
                    similarity=Same())
    first, second = ucb(doc)["meetings"]["m01"]["probes"]
    assert (first["status"], first["question"], first["replaced"], first["label"]) == \
        ("judged", "Question 2 here?", True, "hard-negative")
    assert (second["status"], second["replaced"], second["label"]) == ("unverified", True, None)
    assert second["failed_checks"] == list(CHECKS)
    assert "another part of the meeting" in script.prompts["question"][1]
    assert "- Question 1 here?" in script.prompts["question"][1]  # rejected questions are not asked again
    assert len(script.prompts["answer"]) == 1


def test_a_question_like_an_earlier_one_is_not_asked(served, run_folder):
    script = Script(same_question=True)
    doc = probe_run(run_folder, options(serve(served, script), iterations=2, questions_per_iteration=1),
                    similarity=Same())
    assert [p["status"] for p in ucb(doc)["meetings"]["m01"]["probes"]] == ["judged", "not-novel"]
    assert len(script.prompts["answer"]) == 1


def test_failed_judgements_are_recorded_and_fail_the_command_unless_allowed(served, run_folder):
    script = Script(judge_reply=lambda n: (200, completion("no scores here")) if n == 1 else
                    (500, json.dumps({"error": {"message": "overloaded"}})))
    url = serve(served, script)
    with pytest.raises(LLMUnavailable, match="1 of 8 probe requests failed"):
        probe_run(run_folder, options(url, iterations=1, questions_per_iteration=2), similarity=Same())
    probes = ucb(json.loads((run_folder / "probe.json").read_text()))["meetings"]["m01"]["probes"]
    assert [(p["status"], p["label"]) for p in probes] == [("failed", None), ("failed", None)]
    assert probes[0]["detail"].startswith("judge: invalid-json") and "http-500" in probes[1]["detail"]
    doc = probe_run(run_folder, options(url, iterations=1, questions_per_iteration=2, failures="allow"),
                    similarity=Same())
    assert ucb(doc)["summary"]["judged"] == 0 and ucb(doc)["summary"]["finding_rate"] is None


@pytest.mark.slow  # loads the sentence embedder of the novelty filter
def test_the_command_prints_the_summary(served, long_run, capsys):
    url = serve(served, Script(scores=lambda q: (3, 3)))
    run_folder = long_run
    workspace = RunFolder(run_folder).workspace()
    score_workspace(workspace, RunFolder(run_folder), out=RunFolder(run_folder).scores)  # scored: a report follows
    assert main(["probe", str(run_folder), "--base-url", url, "--model", "m", "--iterations", "1",
                 "--questions", "1", "--meeting", "m1"]) == 0
    out = capsys.readouterr().out
    assert "finding rate 100.0% [20.6%, 100.0%], severity share 0.0%" in out and "findings, factual recall:" in out
    assert f"wrote {run_folder / 'probe.json'}" in out
    # the random baseline on the same run and options: both strategies, compared (1 of 1 each: no difference)
    assert main(["probe", str(run_folder), "--base-url", url, "--model", "m", "--iterations", "1",
                 "--questions", "1", "--meeting", "m1", "--strategy", "random"]) == 0
    out = capsys.readouterr().out
    assert "L1, ucb, m: 1 probes" in out and "L1, random, m: 1 probes" in out
    assert "ucb - random: +0.0 pp [" in out and "p 1.000 (Fisher's exact test, two-sided)" in out
    doc = json.loads((run_folder / "probe.json").read_text())
    assert list(doc["strategies"]) == ["ucb", "random"] and doc["comparison"]["overall"]["p_value"] == 1.0
    report = RunFolder(run_folder).file(RunFolder.REPORT).read_text()  # the report is made again with both
    assert "- `ucb`: 1 probes of 1 meeting(s), 1 judged: finding rate 100.0% [20.6%, 100.0%]" in report
    assert "- `random`: 1 probes" in report and "`ucb` against the `random` baseline on the same budget" in report


def test_the_command_refuses_bad_input_in_one_line(served, run_folder, capsys):
    url = serve(served, Script())
    assert main(["probe", str(run_folder), "--base-url", url, "--model", "m", "--iterations", "0"]) == 1
    assert capsys.readouterr().err.strip() == ("speechkit probe: error: --iterations: "
                                               "expected an integer in [1, 1000], got 0")
    assert main(["probe", str(run_folder), "--base-url", url, "--model", "m", "--strategy", "ucb", "--strategy",
                 "ucb"]) == 1
    assert capsys.readouterr().err.strip() == ("speechkit probe: error: --strategy: "
                                               "expected one or more distinct of ucb, random")
    assert main(["probe", str(run_folder), "--base-url", url, "--model", "m", "--meeting", "m09"]) == 1
    assert "no transcript of meeting(s) m09" in capsys.readouterr().err
    assert main(["probe", str(run_folder / "nowhere")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run folder not found" in err


def test_a_demand_whose_questions_are_rejected_yields_to_the_next_untested_one(served, run_folder):
    script = Script(checks=lambda q: False)
    doc = probe_run(run_folder, options(serve(served, script), iterations=2, questions_per_iteration=1),
                    similarity=Same())
    probes = ucb(doc)["meetings"]["m01"]["probes"]
    assert [(p["demand"], p["status"]) for p in probes] == [("factual recall", "unverified"),
                                                            ("attribution", "unverified")]
    assert ucb(doc)["summary"]["judged"] == 0
    assert ucb(doc)["meetings"]["m01"]["scoreboard"]["factual recall"]["started"] == 1


@pytest.mark.local_llm  # the packaged SmolLM2-135M on llama.cpp's local server: a minute or more on a loaded CPU
def test_a_probe_on_the_packaged_local_model_writes_a_valid_probe_json(run_folder, monkeypatch):
    for name in ("SPEECHKIT_LLM_BASE_URL", "OPENAI_BASE_URL", "SPEECHKIT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    try:
        doc = probe_run(run_folder, ProbeOptions(iterations=1, questions_per_iteration=1, transcript_bytes=800,
                                                 timeout_s=600.0, max_retries=0), similarity=Same())
    finally:
        stop_shared_servers()
    assert doc["endpoint"]["model"] == "smollm2-135m-instruct" and doc["endpoint"]["failed"] == 0
    (probe,) = ucb(doc)["meetings"]["m01"]["probes"]
    assert probe["status"] in ("judged", "unverified", "not-novel", "failed")
    assert probe["question"] or probe["status"] == "failed"
    if probe["status"] == "judged":
        assert probe["label"] == label(probe["faithfulness"], probe["completeness"])
    assert ucb(doc)["meetings"]["m01"]["stopped"] == "iterations" and ucb(doc)["summary"]["tokens"] > 0
    assert json.loads((run_folder / "probe.json").read_text()) == doc


def test_step_options_list_the_strategies_as_a_recipe_does():
    assert parse_step("probe", {"strategies": ["ucb", "random"]}).options.strategies == ("ucb", "random")
    assert parse_step("probe", None).options.strategies == ("ucb",)
    with pytest.raises(OptionError, match=r"steps\.probe\.strategies\[0\]: expected one of ucb, random"):
        parse_step("probe", {"strategies": ["greedy"]})
    with pytest.raises(OptionError, match="strategies"):
        parse_step("probe", {"strategies": ["random", "random"]})


def _scripted_by_demand(finding_demand: str) -> Script:
    """A script whose judge finds fault only with the answers to questions of ``finding_demand``."""
    script = Script()
    script.scores = lambda q: (2, 2) if script.demand_of[q] == finding_demand else (5, 5)
    return script


def test_the_random_baseline_draws_demands_from_its_seed_and_drops_none(served, run_folder):
    url = serve(served, Script())
    given = dict(iterations=3, questions_per_iteration=2, demands=("x", "y", "z"), dead_after=1)
    both = probe_run(run_folder, options(url, strategies=("ucb", "random"), **given), similarity=Same(), seed=7)
    searched, drawn = both["strategies"]["ucb"]["meetings"]["m01"], both["strategies"]["random"]["meetings"]["m01"]
    # each demand dead after one miss: x, y; then z twice (K = 2 with one live demand)
    assert (searched["stopped"], len(searched["probes"])) == ("all demands dead", 4)
    assert (drawn["stopped"], len(drawn["probes"])) == ("iterations", 6)  # the baseline drops no demand
    rng = np.random.default_rng([7, zlib.crc32(b"m01")])  # as documented: the seed and the meeting's name
    expected = [given["demands"][i] for _ in range(3) for i in rng.integers(3, size=2)]
    assert [p["demand"] for p in drawn["probes"]] == expected
    assert both["seed"] == 7 and both["options"]["strategies"] == ["ucb", "random"]
    again = probe_run(run_folder, options(url, strategies=("random",), **given), similarity=Same(), seed=7)
    assert again["strategies"]["random"] == both["strategies"]["random"]  # reproducible
    other = probe_run(run_folder, options(url, strategies=("random",), **given), similarity=Same(), seed=8)
    assert [p["demand"] for p in other["strategies"]["random"]["meetings"]["m01"]["probes"]] != expected
    assert list(other["strategies"]) == ["random"] and other["comparison"] is None  # seed 7's ucb is not kept


def _wilson(k: int, n: int, z: float = stats.norm.ppf(0.975)) -> tuple[float, float]:
    """Wilson's score interval by its textbook formula."""
    p = k / n
    centre, half = (p + z * z / (2 * n)), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def test_both_strategies_give_rates_with_intervals_and_a_test_of_their_difference(served, run_folder):
    script = _scripted_by_demand("numeric detail")
    doc = probe_run(run_folder, options(serve(served, script), iterations=4, questions_per_iteration=4,
                                        strategies=("ucb", "random")), similarity=Same())
    assert json.loads((run_folder / "probe.json").read_text()) == doc
    counts = {}
    for strategy, part in doc["strategies"].items():
        s = part["summary"]
        judged = [p for p in part["meetings"]["m01"]["probes"] if p["label"]]
        findings = [p for p in judged if p["label"] == "finding"]
        assert {p["demand"] for p in findings} == ({"numeric detail"} if findings else set())
        assert (s["judged"], s["findings"]) == (len(judged), len(findings)) and s["judged"] == 16
        assert s["finding_rate_ci"] == pytest.approx(_wilson(len(findings), len(judged)), abs=1e-4)
        numeric = s["by_demand"]["numeric detail"]
        n = sum(p["demand"] == "numeric detail" for p in judged)
        assert (numeric["judged"], numeric["findings"]) == (n, n)
        assert set(s["by_demand"]) == set(DEMANDS)
        counts[strategy] = (len(findings), len(judged))
    # the search comes back to the demand that failed; the baseline does not know it did
    assert counts["ucb"][0] > counts["random"][0]
    c = doc["comparison"]
    (k1, n1), (k2, n2) = counts["ucb"], counts["random"]
    table = [[k1, n1 - k1], [k2, n2 - k2]]
    assert (c["strategy"], c["baseline"]) == ("ucb", "random")
    assert c["overall"]["difference"] == pytest.approx(k1 / n1 - k2 / n2, abs=1e-4)
    assert c["overall"]["p_value"] == pytest.approx(stats.fisher_exact(table).pvalue, abs=1e-4)
    low, high = c["overall"]["ci"]
    assert low < c["overall"]["difference"] < high
    # one meeting: the paired bootstrap over meetings has nothing to resample, its interval is the value
    assert c["over_meetings"] == {"meetings": 1, "resamples": 1000, "difference": c["overall"]["difference"],
                                  "ci": [c["overall"]["difference"]] * 2}
    assert c["by_demand"]["synthesis"]["difference"] == 0.0 or c["by_demand"]["synthesis"]["difference"] is None
    section = "\n".join(probe_section(RunView(RunFolder(run_folder), {}, Scores({}))))
    assert "- `ucb`: 16 probes" in section and "- `random`: 16 probes" in section
    assert "`ucb` against the `random` baseline on the same budget: +" in section
    assert "over 1 meeting(s), paired bootstrap: +" in section
    assert ("| demand | ucb: findings / judged, rate [95% CI] | random: findings / judged, rate [95% CI] "
            "| ucb - random [95% CI], p |") in section


def test_the_report_of_a_probe_json_of_the_first_format_says_to_probe_again(run_folder):
    write_json(run_folder / "probe.json", {"format": "speechkit-probe/1", "summary": {}, "meetings": {}})
    section = probe_section(RunView(RunFolder(run_folder), {}, Scores({})))
    assert section[0] == "## Adaptive probing" and "is not `speechkit-probe/2` (`speechkit-probe/1`)" in section[2]


def test_the_baseline_probed_after_the_search_is_compared_with_it(served, run_folder):
    url = serve(served, _scripted_by_demand("attribution"))
    (run_folder / "probe.json").write_text("{not json")  # an unreadable one before is written anew
    first = probe_run(run_folder, options(url, iterations=2, questions_per_iteration=4), similarity=Same())
    assert list(first["strategies"]) == ["ucb"] and first["comparison"] is None
    later = probe_run(run_folder, options(url, iterations=2, questions_per_iteration=4, strategies=("random",)),
                      similarity=Same())
    assert list(later["strategies"]) == ["ucb", "random"]
    assert later["strategies"]["ucb"] == first["strategies"]["ucb"] and later["comparison"] is not None
    changed = probe_run(run_folder, options(url, iterations=1, questions_per_iteration=4, strategies=("random",)),
                        similarity=Same())
    assert list(changed["strategies"]) == ["random"] and changed["comparison"] is None  # another budget


ENDING = "the final budget is four thousand seven hundred and eleven euros"


@pytest.fixture
def long_run(tmp_path: Path) -> Path:
    """A run of a workspace whose reference transcript of m1 is about 9,000 bytes, its last line
    (:data:`ENDING`) far past the old 6,000-byte cut; the run's own transcript is the same, unnamed
    (m2's, a copy of its reference)."""
    ws, _ = make_workspace(tmp_path)
    segments = [seg("p1" if i % 2 else "p2", 6.0 * i, f"point {i} of the agenda is about the quarterly plan and "
                    "the staffing", "Robert Smith" if i % 2 else "Alice Jones") for i in range(110)]
    segments.append(seg("p1", 6.0 * 110, ENDING, "Robert Smith"))
    reference = Transcript("m1", segments)
    write_seglst(ws / "m1.ref.json", [reference])
    run = tmp_path / "long-run"
    write_seglst(run / "transcripts" / "m1.json",
                 [Transcript("m1", [s.__class__(**{**s.__dict__, "speaker": "SPEAKER_00", "speaker_name": None})
                                    for s in segments])])
    write_seglst(run / "transcripts" / "m2.json", [Transcript("m2", REFERENCES["m2"])])
    write_notes(run / "notes" / "m1.json", Notes(summary=NOTES_MARK), "m1")
    write_json(run / "context" / "m1.json", {"level": 1, "notes_context": {}})
    write_json(run / "run.json", {"recipe": {"level": 1}, "workspace": {"name": "tiny", "root": str(ws)}})
    assert 8000 < len("\n".join(transcript_lines(reference)).encode()) < 10000
    return run


def test_a_transcript_longer_than_a_prompt_is_read_whole_in_parts(served, long_run):
    script = Script()
    script.scores = lambda q: (1, 1) if ENDING in script.prompts["question"][int(q.split()[1]) - 1] else (5, 5)
    doc = probe_run(long_run, options(serve(served, script), iterations=2, questions_per_iteration=2),
                    meetings=("m1",), similarity=Same())
    probes = ucb(doc)["meetings"]["m1"]["probes"]
    assert [p["part"] for p in probes] == [0, 1, 0, 1]  # two parts of at most 6,000 bytes, in turn
    assert [p["label"] for p in probes] == ["hard-negative", "finding", "hard-negative", "finding"]
    generated, answered, judged = script.prompts["question"], script.prompts["answer"], script.prompts["scores"]
    assert "point 0 of" in generated[0] and ENDING not in generated[0]
    assert ENDING in generated[1] and "point 0 of" not in generated[1]
    assert ENDING in judged[1] and ENDING not in judged[0]
    # the system reads its own transcript of the same stretch of time, and its notes with every part
    assert "SPEAKER_00: " + ENDING in answered[1] and "SPEAKER_00: point 0 of" not in answered[1]
    assert "SPEAKER_00: point 0 of" in answered[0] and ENDING not in answered[0]
    assert all(NOTES_MARK in a for a in answered)
    seen = "\n".join(generated)  # every line of the reference reached the generator
    assert all(f"point {i} of the agenda" in seen for i in range(110))
    assert all(len(re.search(r"TRANSCRIPT:\n(.*?)\n\nWrite", g, re.S)[1].encode()) <= 6000 for g in generated)
