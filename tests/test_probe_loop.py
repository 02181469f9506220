"""The probe loop over a run folder of the demo workspace, against a local stand-in OpenAI-compatible
endpoint that scripts every role's answers: what each role sees, stopping at I_max, the token budget,
dead demands, self-verification with one replacement, the novelty filter, failures, probe.json and the CLI."""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from llm_helpers import Endpoint, completion

from speechkit.cli import main
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
from speechkit.steps.probe import LLMProber, materials_of, probe_section
from speechkit.steps.probe import probe_run as probe_step
from speechkit.steps.probe.labels import label
from speechkit.steps.probe.loop import ProbeOptions
from speechkit.steps.probe.roles import CHECKS
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

    def __call__(self, request: dict, call: int) -> tuple[int, str, float]:
        role = request["response_format"]["json_schema"]["name"]
        user = request["messages"][-1]["content"]
        self.prompts.setdefault(role, []).append(user)
        question = (re.search(r"QUESTION: (.*)", user) or [None, ""])[1]
        if role == "question":
            self.asked += 1
            content = {"question": "What was decided?" if self.same_question else f"Question {self.asked} here?"}
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


def probe_run(folder, options: ProbeOptions, meetings=None, similarity=None) -> dict:
    """The probe step on ``folder`` in an LLM session of its own, as ``speechkit probe`` runs it."""
    run = RunFolder(folder)
    ws, prober = run.workspace(), LLMProber(options, similarity)
    with session.opened(run.llm_cache):
        materials = materials_of(run, ws, meetings, options.transcript_bytes)
        return probe_step(run, ws, prober, materials, checked_endpoint(prober.client, options.failures, "probe"))


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
    m = doc["meetings"]["m01"]
    assert (m["iterations"], m["stopped"]) == (2, "iterations")
    probes = m["probes"]
    # UCB: every demand untested at first, so the four probes take the first four demands in order
    assert [p["demand"] for p in probes] == ["factual recall", "attribution", "action ownership", "decision tracking"]
    assert [p["label"] for p in probes] == ["finding", "near-miss", "finding", "near-miss"]
    assert [p["severe"] for p in probes] == [True, False, True, False]
    s = doc["summary"]
    assert (s["probes"], s["judged"], s["findings"], s["near_misses"], s["severe"]) == (4, 4, 2, 2, 2)
    assert (s["finding_rate"], s["severity_share"]) == (0.5, 1.0)
    assert s["findings_by_demand"] == {"action ownership": ["Question 3 here?"], "factual recall": ["Question 1 here?"]}
    assert m["scoreboard"]["attribution"]["mean"] == 0.5 and m["scoreboard"]["synthesis"]["tests"] == 0
    assert (doc["level"], doc["endpoint"]["model"], doc["options"]["iterations"]) == (1, "m", 2)
    assert doc["endpoint"]["requests"] == 4 * 4  # generate, verify, answer, judge per probe
    section = "\n".join(probe_section(RunView(RunFolder(run_folder), {}, Scores({}))))  # the run's report shows it
    assert "## Adaptive probing (roles: `m`)" in section
    assert "4 judged: finding rate 50.0%, severity share 100.0%" in section
    assert "- action ownership: Question 3 here?" in section and "- factual recall: Question 1 here?" in section


def test_each_role_sees_only_what_it_may(served, run_folder):
    script = Script()
    probe_run(run_folder, options(serve(served, script), iterations=1, questions_per_iteration=1), similarity=Same())
    system, judge = script.prompts["answer"][0], script.prompts["scores"][0]
    assert NOTES_MARK in system and "SPEAKER_00:" in system and "Helena Lindqvist:" not in system
    assert NOTES_MARK not in judge and "SPEAKER_00" not in judge and "Helena Lindqvist:" in judge
    assert "They agreed to ship." in judge and "Question 1 here?" in judge
    assert "Helena Lindqvist:" in script.prompts["question"][0] and "factual recall" in script.prompts["question"][0]


def test_the_token_budget_stops_the_search_after_the_probe_that_spent_it(served, run_folder):
    script = Script()
    doc = probe_run(run_folder, options(serve(served, script), iterations=5, questions_per_iteration=3,
                                        token_budget=1), similarity=Same())
    m = doc["meetings"]["m01"]
    assert (len(m["probes"]), m["iterations"], m["stopped"]) == (1, 1, "token budget")
    assert m["tokens"] > 1 and doc["summary"]["tokens"] == m["tokens"]


def test_dead_demands_end_the_search_before_i_max(served, run_folder):
    doc = probe_run(run_folder, options(serve(served, Script()), iterations=10, questions_per_iteration=1,
                                        demands=("x", "y"), dead_after=2), similarity=Same())
    m = doc["meetings"]["m01"]
    assert (len(m["probes"]), m["iterations"], m["stopped"]) == (4, 4, "all demands dead")
    assert [p["demand"] for p in m["probes"]] == ["x", "y", "x", "y"]
    assert doc["summary"]["finding_rate"] == 0.0 and doc["summary"]["severity_share"] is None


def test_a_question_failing_verification_gets_one_replacement(served, run_folder):
    # question 1 fails, its replacement 2 passes; question 3 and its replacement 4 both fail
    script = Script(checks=lambda q: q not in ("Question 1 here?", "Question 3 here?", "Question 4 here?"))
    doc = probe_run(run_folder, options(serve(served, script), iterations=1, questions_per_iteration=2),
                    similarity=Same())
    first, second = doc["meetings"]["m01"]["probes"]
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
    assert [p["status"] for p in doc["meetings"]["m01"]["probes"]] == ["judged", "not-novel"]
    assert len(script.prompts["answer"]) == 1


def test_failed_judgements_are_recorded_and_fail_the_command_unless_allowed(served, run_folder):
    script = Script(judge_reply=lambda n: (200, completion("no scores here")) if n == 1 else
                    (500, json.dumps({"error": {"message": "overloaded"}})))
    url = serve(served, script)
    with pytest.raises(LLMUnavailable, match="1 of 8 probe requests failed"):
        probe_run(run_folder, options(url, iterations=1, questions_per_iteration=2), similarity=Same())
    probes = json.loads((run_folder / "probe.json").read_text())["meetings"]["m01"]["probes"]
    assert [(p["status"], p["label"]) for p in probes] == [("failed", None), ("failed", None)]
    assert probes[0]["detail"].startswith("judge: invalid-json") and "http-500" in probes[1]["detail"]
    doc = probe_run(run_folder, options(url, iterations=1, questions_per_iteration=2, failures="allow"),
                    similarity=Same())
    assert doc["summary"]["judged"] == 0 and doc["summary"]["finding_rate"] is None


@pytest.mark.slow  # loads the sentence embedder of the novelty filter
def test_the_command_prints_the_summary(served, run_folder, capsys):
    url = serve(served, Script(scores=lambda q: (3, 3)))
    assert main(["probe", str(run_folder), "--base-url", url, "--model", "m", "--iterations", "1",
                 "--questions", "1", "--meeting", "m01"]) == 0
    out = capsys.readouterr().out
    assert "finding rate 100.0%, severity share 0.0%" in out and "findings, factual recall:" in out
    assert f"wrote {run_folder / 'probe.json'}" in out


def test_the_command_refuses_bad_input_in_one_line(served, run_folder, capsys):
    url = serve(served, Script())
    assert main(["probe", str(run_folder), "--base-url", url, "--model", "m", "--iterations", "0"]) == 1
    assert capsys.readouterr().err.strip() == ("speechkit probe: error: --iterations: "
                                               "expected an integer in [1, 1000], got 0")
    assert main(["probe", str(run_folder), "--base-url", url, "--model", "m", "--meeting", "m09"]) == 1
    assert "no transcript of meeting(s) m09" in capsys.readouterr().err
    assert main(["probe", str(run_folder / "nowhere")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run folder not found" in err


def test_a_demand_whose_questions_are_rejected_yields_to_the_next_untested_one(served, run_folder):
    script = Script(checks=lambda q: False)
    doc = probe_run(run_folder, options(serve(served, script), iterations=2, questions_per_iteration=1),
                    similarity=Same())
    probes = doc["meetings"]["m01"]["probes"]
    assert [(p["demand"], p["status"]) for p in probes] == [("factual recall", "unverified"),
                                                            ("attribution", "unverified")]
    assert doc["summary"]["judged"] == 0 and doc["meetings"]["m01"]["scoreboard"]["factual recall"]["started"] == 1


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
    (probe,) = doc["meetings"]["m01"]["probes"]
    assert probe["status"] in ("judged", "unverified", "not-novel", "failed")
    assert probe["question"] or probe["status"] == "failed"
    if probe["status"] == "judged":
        assert probe["label"] == label(probe["faithfulness"], probe["completeness"])
    assert doc["meetings"]["m01"]["stopped"] == "iterations" and doc["summary"]["tokens"] > 0
    assert json.loads((run_folder / "probe.json").read_text()) == doc
