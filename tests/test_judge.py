"""`speechkit judge RUN` against a local stand-in OpenAI-compatible endpoint: the reference-grounded
prompt and its schema, scores parsed and aggregated with bootstrap CIs, the model the server
reports recorded and printed beside every figure, answers served from the response cache, a dead
endpoint failing with one line, failures allowed with the share not judged stated, a run without
gold notes judged n/a with the reason, and a --level all folder judged per level."""
from __future__ import annotations

import json
import os
import re
import socket
import time
from pathlib import Path

import pytest
from llm_helpers import REPORTED, completion, grading, grading_judge, section

from speechkit.cli import main
from speechkit.io.atomic import write_json
from speechkit.io.manifest import load_workspace
from speechkit.io.notes import read_gold_notes, write_notes
from speechkit.io.run_folder import RunFolder
from speechkit.io.run_view import RunView
from speechkit.io.scores import Scores
from speechkit.llm.client import BadAnswer
from speechkit.llm.server import stop_shared_servers
from speechkit.metrics.bootstrap import Ratio, bootstrap
from speechkit.notes import Notes
from speechkit.steps.judge import DIMENSIONS, judged_section, scores_of

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"
OFF_TOPIC = "We talked about the weather and lunch."


def make_run(folder: Path, workspace: Path = DEMO, off_topic: tuple[str, ...] = ("m02", "m05")) -> list[str]:
    """A run folder of ``workspace``: run.json naming it and notes per meeting: the gold summary,
    or :data:`OFF_TOPIC` for the meetings ``off_topic``; the meeting ids."""
    ws = load_workspace(workspace)
    write_json(folder / "run.json", {"workspace": {"name": ws.name, "root": str(ws.root)}})
    for m in ws.scored_meetings:
        gold = read_gold_notes(m.notes, m.id).summary if m.notes else "Some notes."
        write_notes(folder / "notes" / f"{m.id}.json", Notes(OFF_TOPIC if m.id in off_topic else gold), m.id)
    return [m.id for m in ws.scored_meetings]


@pytest.fixture
def endpoint():
    endpoint = grading_judge()
    yield endpoint
    endpoint.close()


def judge(run: Path, url: str, *extra: str) -> int:
    return main(["judge", str(run), "--base-url", url, "--model", "stand-in", "--max-retries", "0", *extra])


def test_scores_are_parsed_aggregated_with_cis_and_the_reported_judge_model_is_printed_beside_each(
        endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    meetings = make_run(run)
    assert judge(run, endpoint.url) == 0
    printed = capsys.readouterr().out
    judged = json.loads((run / "judged.json").read_text())
    # the judge's check (the reference itself, an unrelated summary), then one per meeting; m01's
    # summary is its reference, so its request is the check's first and comes from the cache
    assert len(endpoint.requests) == len(meetings) + 1 == 7
    faithful = [1 if mid in ("m02", "m05") else 5 for mid in meetings]
    assert {mid: m["scores"]["faithfulness"] for mid, m in judged["meetings"].items()} == dict(zip(meetings, faithful))
    expected = bootstrap([Ratio(s, 1) for s in faithful])
    assert judged["aggregate"]["faithfulness"] == {"mean": pytest.approx(22 / 6), "ci_low": expected.ci_low,
                                                   "ci_high": expected.ci_high, "meetings": 6}
    assert expected.ci_low < 22 / 6 < expected.ci_high
    assert judged["aggregate"]["precision"]["mean"] == 3 and judged["aggregate"]["precision"]["ci_low"] == 3
    assert judged["judge_model"] == REPORTED and judged["judge"]["model"] == "stand-in"
    assert judged["judge"]["base_url"] == endpoint.url and judged["not_judged"] == {"meetings": 0, "of": 6, "share": 0}
    assert judged["requests"] == {"requests": 8, "cache_hits": 1, "failed": 0, "failures": {}, "rejected": {},
                                  "probe": "ok: the server lists the model"}
    assert judged["check"]["passed"] is True and judged["check"]["reference"]["faithfulness"] == 5
    assert "judge check: passed" in printed
    rows = {line.split()[0]: line for line in printed.splitlines() if line.split() and line.split()[0] in DIMENSIONS}
    assert set(rows) == set(DIMENSIONS) and all(row.rstrip().endswith(REPORTED) for row in rows.values())
    assert re.search(r"faithfulness\s+3\.67\s+\[\d\.\d\d, \d\.\d\d\]\s+6/6", rows["faithfulness"])
    # the deterministic scores are never touched
    assert not (run / "scores.json").exists()
    # the report's section: every dimension's row names the judge model
    section = "\n".join(judged_section(RunView(RunFolder(run), {}, Scores({}))))
    assert section.startswith(f"## LLM-judged notes scores (judge: `{REPORTED}`)")
    rows = [line for line in section.splitlines() if line.startswith("| ") and line.split()[1] in DIMENSIONS]
    assert len(rows) == len(DIMENSIONS) and all(row.endswith(f"| `{REPORTED}` |") for row in rows)
    assert "| faithfulness | 3.67 |" in section and "6 of 6" in section and "judge failed" not in section


def test_the_prompt_is_reference_grounded_with_the_roster_and_length_decoupled_and_asks_a_schema(
        endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run)
    assert judge(run, endpoint.url) == 0
    request = endpoint.requests[0]  # the check's and m01's: its summary is the gold one
    prompt = request["messages"][-1]["content"]
    gold = read_gold_notes(DEMO / "meetings" / "m01" / "notes.json").summary
    assert section(prompt, "REFERENCE") == section(prompt, "SYSTEM") == " ".join(gold.split())
    for person in load_workspace(DEMO).people:  # the roster: name (nicknames; role)
        about = "; ".join(filter(None, [", ".join(person.nicknames), person.role]))
        assert f"- {person.name} ({about})" in prompt
    assert "Do not judge length" in prompt and "Do not judge who said what" in prompt
    assert "consistent with the roster" in prompt and "is faithful" in prompt
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["required"] == list(DIMENSIONS) and schema["additionalProperties"] is False
    assert all(schema["properties"][d]["enum"] == [1, 2, 3, 4, 5] for d in DIMENSIONS)
    assert request["temperature"] == 0.0


def test_a_second_judgement_comes_from_the_cache_and_sends_no_request(endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run)
    assert judge(run, endpoint.url) == 0
    first = json.loads((run / "judged.json").read_text())
    assert judge(run, endpoint.url) == 0
    second = json.loads((run / "judged.json").read_text())
    assert len(endpoint.requests) == 7  # none more
    assert second["requests"]["cache_hits"] == second["requests"]["requests"] == 8
    assert second["judge_model"] == REPORTED  # the cache keeps the model that answered
    assert second["aggregate"] == first["aggregate"] and second["meetings"] == first["meetings"]
    # another summary is another request
    write_notes(run / "notes" / "m03.json", Notes("Another summary."), "m03")
    assert judge(run, endpoint.url) == 0
    assert len(endpoint.requests) == 8


def test_two_judgements_of_equal_runs_give_the_same_bytes(endpoint, tmp_path, capsys):
    for name in ("a", "b"):  # each with its own response cache: both ask the endpoint
        make_run(tmp_path / name)
        assert judge(tmp_path / name, endpoint.url) == 0
    assert len(endpoint.requests) == 14
    assert (tmp_path / "a" / "judged.json").read_bytes() == (tmp_path / "b" / "judged.json").read_bytes()


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_dead_endpoint_fails_with_one_line_and_writes_nothing(tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    started = time.perf_counter()
    assert judge(run, _closed_port_url(), "--timeout-s", "5") == 1
    err = capsys.readouterr().err
    assert time.perf_counter() - started < 30
    assert err.count("\n") == 1 and err.startswith("speechkit judge: error: http://127.0.0.1:")
    assert "model stand-in" in err and "Traceback" not in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written, no lock


def test_failed_requests_fail_unless_allowed_then_the_share_not_judged_is_stated(endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run)
    failing = {3}  # m02's request gets HTTP 500 (calls 1 and 2: the judge's check, whose first is m01's)

    def flaky(request: dict, call: int):
        if call in failing:
            return 500, json.dumps({"error": {"message": "overloaded"}}), 0.0
        return grading(request, call)
    endpoint.grade = flaky
    assert judge(run, endpoint.url) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 of 8 judge requests failed" in err and "overloaded" in err
    assert not (run / "judged.json").exists()

    failing.add(8)  # the allowed run asks only for m02 (call 8): the cache holds the other answers
    assert judge(run, endpoint.url, "--llm-failures", "allow") == 0
    printed = capsys.readouterr().out
    judged = json.loads((run / "judged.json").read_text())
    assert judged["requests"]["failed"] == 1 and judged["requests"]["failures"] == {"http-500": 1}
    assert judged["not_judged"] == {"meetings": 1, "of": 6, "share": round(1 / 6, 4)}
    assert judged["meetings"]["m02"]["scores"] is None
    assert judged["meetings"]["m02"]["reason"].startswith("the judge request failed (http-500)")
    assert judged["aggregate"]["faithfulness"]["meetings"] == 5
    assert judged["aggregate"]["faithfulness"]["mean"] == pytest.approx((5 * 4 + 1) / 5)  # m05 is off topic
    assert "not judged: 1 of 6 meetings (17%)" in printed and "m02: the judge request failed" in printed


def test_an_answer_that_is_not_scores_counts_as_a_failed_request_and_is_not_judged(endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run)
    m03 = " ".join(read_gold_notes(DEMO / "meetings" / "m03" / "notes.json").summary.split())

    def sloppy(request: dict, call: int):
        if section(request["messages"][-1]["content"], "REFERENCE").startswith(m03[:200]):
            return 200, completion(json.dumps({d: 7 for d in DIMENSIONS})), 0.0
        return grading(request, call)
    endpoint.grade = sloppy
    assert judge(run, endpoint.url) == 1  # not scores: a failed request, against the default policy
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 of 8 judge requests failed" in err and "expected an integer from 1 to 5" in err
    assert not (run / "judged.json").exists()
    assert judge(run, endpoint.url, "--llm-failures", "allow") == 0
    judged = json.loads((run / "judged.json").read_text())
    assert judged["requests"]["rejected"] == {"wrong-shape": 1} and judged["requests"]["failed"] == 1
    assert judged["requests"]["failures"] == {"wrong-shape": 1}
    assert judged["meetings"]["m03"]["scores"] is None
    assert "expected an integer from 1 to 5" in judged["meetings"]["m03"]["reason"]
    assert judged["not_judged"]["meetings"] == 1


def test_a_judge_that_answers_the_same_whatever_it_is_shown_fails_its_check(endpoint, tmp_path, capsys):
    run = tmp_path / "run"
    make_run(run)
    endpoint.grade = lambda request, call: (200, completion(json.dumps(dict(zip(DIMENSIONS, (1, 2, 3, 4, 5))))), 0.0)
    assert judge(run, endpoint.url) == 0
    printed = capsys.readouterr().out
    check = json.loads((run / "judged.json").read_text())["check"]
    assert check["passed"] is False and check["reference"] == check["unrelated"]
    assert check["reason"] == ("the judge gave the reference itself faithfulness 1, recall 3 and an unrelated "
                               "summary faithfulness 1, recall 3: its scores say little")
    assert "judge check: FAILED: the judge gave the reference itself" in printed


@pytest.mark.parametrize("answer, problem", [({"faithfulness": 5}, "coherence"), ({d: 0 for d in DIMENSIONS}, "0"),
                                             ({d: True for d in DIMENSIONS}, "True"),
                                             ({d: "5" for d in DIMENSIONS}, "'5'")])
def test_scores_of_refuses_what_is_not_an_integer_from_1_to_5(answer, problem):
    with pytest.raises(BadAnswer, match=problem):
        scores_of(answer)
    assert scores_of({d: 4.0 for d in DIMENSIONS}) == {d: 4 for d in DIMENSIONS}


def test_a_run_without_gold_notes_is_na_with_the_reason_and_asks_nothing(
        endpoint, make_real_workspace, tmp_path, capsys):
    ws = make_real_workspace(tmp_path / "ws")  # real speech, no gold notes
    run = tmp_path / "run"
    make_run(run, ws)
    assert judge(run, endpoint.url) == 0
    printed = capsys.readouterr().out
    judged = json.loads((run / "judged.json").read_text())
    assert endpoint.requests == [] and judged["requests"]["requests"] == 0
    assert judged["reason"] == "no gold notes for this meeting (a workspace's meetings/<id>/notes.json)"
    assert all(a["mean"] is None for a in judged["aggregate"].values())
    assert "judged scores n/a: no gold notes" in printed


def test_a_level_all_folder_is_judged_per_level_with_one_shared_cache(endpoint, tmp_path, capsys):
    out = tmp_path / "all"
    for level in ("l1", "l2"):
        make_run(out / level, off_topic=("m02",) if level == "l1" else ())
    assert judge(out, endpoint.url) == 0
    printed = capsys.readouterr().out
    l1, l2 = (json.loads((out / level / "judged.json").read_text()) for level in ("l1", "l2"))
    assert l1["aggregate"]["recall"]["mean"] == pytest.approx(26 / 6) and l2["aggregate"]["recall"]["mean"] == 5
    assert len(endpoint.requests) == 8  # L2's check and five summaries equal to L1's come from the shared cache
    assert l2["requests"]["cache_hits"] == 7 and (out / "cache" / "llm").is_dir()
    assert printed.count("LLM-judged notes scores of") == 2


def test_a_folder_that_is_no_run_and_a_bad_option_are_one_line_errors(tmp_path, capsys):
    assert main(["judge", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (f"speechkit judge: error: {tmp_path}: not a run folder: no run.json, "
                                       "and no level folders l1, l2, l3 holding one\n")
    make_run(tmp_path / "run")
    assert main(["judge", str(tmp_path / "run"), "--timeout-s", "0"]) == 1
    assert capsys.readouterr().err == "speechkit judge: error: --timeout-s: expected a number in (0, 3600], got 0.0\n"


@pytest.mark.local_llm
def test_the_local_smollm2_judge_scores_one_demo_meeting(tmp_path, capsys, monkeypatch):
    """The packaged model on the local llama.cpp server: a schema-valid judgement, its model named."""
    for name in ("SPEECHKIT_LLM_BASE_URL", "OPENAI_BASE_URL", "SPEECHKIT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    run = tmp_path / "run"
    make_run(run, off_topic=())
    for path in (run / "notes").glob("*.json"):
        if path.stem != "m01":
            os.remove(path)
    try:
        assert main(["judge", str(run)]) == 0
    finally:
        stop_shared_servers()
    judged = json.loads((run / "judged.json").read_text())
    assert judged["judge"]["base_url"] == "local server" and judged["judge"]["local_model"] == "smollm2-135m-instruct"
    assert judged["requests"]["failed"] == 0 and judged["models_reported"]
    scores = judged["meetings"]["m01"]["scores"]
    assert scores is not None and set(scores) == set(DIMENSIONS) and all(1 <= v <= 5 for v in scores.values())
    assert judged["not_judged"]["meetings"] == 5  # the other meetings have no notes in this run
    assert judged["check"]["passed"] in (True, False) and set(judged["check"]["unrelated"]) == set(DIMENSIONS)


@pytest.mark.decodes
def test_a_report_rebuilt_after_judge_is_the_report_of_a_run_with_judge_in_its_recipe(endpoint, tmp_path,
                                                                                    make_real_workspace):
    """The judge as a recipe's post-run step, and the judge run later on the finished run
    (`speechkit judge`), give the same judged.json and the same report.md, bytes for bytes."""
    from speechkit.recipe import load_recipe
    from speechkit.runner import run_workspace

    ws = make_real_workspace(tmp_path / "ws")
    for mid, summary in (("m1", "Diane Doe talked about the move to New Jersey."),
                         ("m2", "Sheila Doe asked about Chicago.")):
        write_json(ws / "meetings" / mid / "notes.json", {"format": "speechkit-notes/1", "summary": summary})
    shipped = (Path(load_recipe("whisper").path)).read_text()
    judged, plain = tmp_path / "judged", tmp_path / "plain"
    for folder, steps in ((judged, f"  judge: {{base_url: '{endpoint.url}', model: stand-in, max_retries: 0}}\n"),
                          (plain, "")):
        folder.mkdir()
        (folder / "whisper.yaml").write_text(shipped.replace("\nsteps:\n", "\nsteps:\n" + steps, 1))
        run_workspace(load_recipe(folder / "whisper.yaml", level=1), load_workspace(ws), folder / "run",
                      cache_dir=tmp_path / "cache", progress=False)
    assert "## LLM-judged notes scores" not in (plain / "run" / "report.md").read_text()
    assert main(["judge", str(plain / "run"), "--base-url", endpoint.url, "--model", "stand-in",
                 "--max-retries", "0"]) == 0
    fresh = json.loads((judged / "run" / "judged.json").read_text())
    assert fresh["aggregate"]["faithfulness"]["meetings"] == 2 and fresh["judge_model"] == REPORTED
    assert (plain / "run" / "judged.json").read_bytes() == (judged / "run" / "judged.json").read_bytes()
    report = (judged / "run" / "report.md").read_text()
    assert f"## LLM-judged notes scores (judge: `{REPORTED}`)" in report
    assert (plain / "run" / "report.md").read_text() == report
