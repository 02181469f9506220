"""Misbehaving LLM endpoints, round four (issue 40): the notes, questions and judge surfaces, each
against a local stand-in endpoint on 127.0.0.1 (llm_helpers.Endpoint).

- An endpoint whose model list holds the request's Authorization header: the key is in no file of
  the run folder and in no output (``judge``, ``probe``, and run.json's probe of a recipe whose
  notes come from the LLM).
- Answers that are not what was asked (``{}``, an unrelated object): a failed request under the
  failure policy, and with ``--llm-failures allow`` scores n/a with the reason, never 0.
- An answer longer than the request's ``max_tokens`` can give: read no further than the bound,
  a failed request, never cached.

The recipe runs share one stage cache, so VAD, ASR and diarization of the real-speech workspace
run once for the module.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from llm_helpers import FALLBACK_KEY, KEY, Endpoint, completion, leaks
from reliability_helpers import error_line, make_notes_run

from speechkit.cli import main
from speechkit.llm.client import MAX_REPLY_BYTES, REPLY_BYTES_PER_TOKEN, REPLY_ENVELOPE_BYTES, reply_limit
from speechkit.metrics.qa import NO_USABLE_ANSWER
from speechkit.steps.judge import DIMENSIONS

REPO = Path(__file__).resolve().parents[1]
JUDGE_LIMIT = reply_limit(200)  # the judge's max_tokens
QA_LIMIT = reply_limit(800)  # the LLM QA backend's


def leaky_models(headers: dict) -> list[str]:
    """A model list holding the request's Authorization header (and not the model asked for)."""
    return [f"leak {headers.get('Authorization')}", "other-model"]


def scoring(request: dict, call: int):
    """4 on every dimension the request's schema asks for (a summary's five, an item's description
    quality; the summary's five to a request without a schema)."""
    schema = request.get("response_format", {}).get("json_schema", {}).get("schema", {})
    asked = schema.get("properties") or DIMENSIONS
    return 200, completion(json.dumps(dict.fromkeys(asked, 4))), 0.0


def answering(request: dict, call: int):
    """Every question the request asks answered "Alice Jones"."""
    schema = request["response_format"]["json_schema"]["schema"]
    ids = schema["properties"]["answers"]["items"]["properties"]["id"]["enum"]
    return 200, completion(json.dumps({"answers": [{"id": i, "answer": "Alice Jones"} for i in ids]})), 0.0


def answering_with(content: str):
    return lambda request, call: (200, completion(content), 0.0)


def no_leak_under(root: Path, *outputs: str) -> None:
    found = {str(p.relative_to(root)): leaks(p.read_bytes()) for p in root.rglob("*") if p.is_file()}
    found.update({f"output {i}": leaks(text.encode()) for i, text in enumerate(outputs)})
    assert {where: pieces for where, pieces in found.items() if pieces} == {}


@pytest.fixture
def notes_run(tmp_path) -> tuple[Path, Path]:
    return make_notes_run(tmp_path)


def _flags(server: Endpoint, *extra: str) -> list[str]:
    return ["--base-url", server.url, "--model", "stand-in", "--max-retries", "0", *extra]


def _qa(out: Path, server: Endpoint, *settings: str) -> int:
    return main(["qa", str(out), "--backend", "llm", "--set", f"base_url={server.url}", "--set", "model=stand-in",
                 "--set", "max_retries=0", *(x for s in settings for x in ("--set", s))])


# --- item 1: the key in the server's model list ---

def test_a_key_in_the_model_list_reaches_neither_judged_json_nor_probe_json_nor_any_output(
        notes_run, tmp_path, served, monkeypatch, capsys, caplog):
    ws, out = notes_run
    monkeypatch.setenv("SPEECHKIT_LLM_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", FALLBACK_KEY)
    served.append(Endpoint(scoring, models=leaky_models))
    server = served[-1]
    assert main(["judge", str(out), *_flags(server)]) == 0
    judged = json.loads((out / "judged.json").read_text())
    assert judged["requests"]["probe"] == "ok: the model answered (the server lists leak Bearer ***, other-model)"
    served.append(Endpoint(answering_with("{}"), models=leaky_models))
    assert main(["probe", str(out), *_flags(served[-1], "--iterations", "1", "--questions", "1")]) in (0, 1)
    assert "leak Bearer ***" in json.loads((out / "probe.json").read_text())["endpoint"]["probe"]
    assert set(server.auth) == {f"Bearer {KEY}"}  # the key was sent, to the server only
    printed = capsys.readouterr()
    no_leak_under(tmp_path, printed.out, printed.err, caplog.text)


def test_every_string_of_the_reply_is_redacted_keys_and_escapes_included(notes_run, tmp_path, served, monkeypatch,
                                                                        capsys):
    """A 500 whose JSON body holds the key as a key and JSON-escaped, then a 401 with it in the reason phrase."""
    ws, out = notes_run
    monkeypatch.setenv("SPEECHKIT_LLM_API_KEY", KEY)
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)

    def hostile(request, call):
        body = '{"error": {"message": "bad key ' + escaped + '", "' + KEY + '": 1}}'
        return 500, body, 0.0
    served.append(Endpoint(hostile, models=["stand-in"]))
    assert main(["judge", str(out), *_flags(served[-1], "--llm-failures", "allow")]) == 0
    judged = json.loads((out / "judged.json").read_text())
    assert "bad key ***" in judged["meetings"]["m1"]["reason"]
    printed = capsys.readouterr()
    no_leak_under(tmp_path, printed.out, printed.err)


# --- item 2: answers that are not what was asked ---

@pytest.mark.parametrize("content", ["{}", '{"weather": "sunny"}', '{"answers": []}',
                                     '{"answers": [{"id": "nobody", "answer": "x"}]}'])
def test_qa_answers_that_are_not_answers_fail_the_step_or_make_qa_not_applicable(notes_run, tmp_path, served,
                                                                                  capsys, content):
    ws, out = notes_run
    served.append(Endpoint(answering_with(content), models=["stand-in"]))
    assert _qa(out, served[-1]) == 1
    line = error_line(capsys)
    assert "answers" in line and "failures=allow goes on" in line and not (out / "qa.json").exists()
    assert _qa(out, served[-1], "failures=allow") == 0
    printed = capsys.readouterr().out
    qa = json.loads((out / "qa.json").read_text())
    assert qa["scores"]["qa_accuracy"]["value"] is None  # not 0.000 from garbage
    assert qa["not_applicable"] == {"m1": NO_USABLE_ANSWER, "m2": NO_USABLE_ANSWER}
    assert qa["meetings"]["m1"]["stats"]["rejected"] == {"wrong-shape": 1}
    assert f"n/a m1: {NO_USABLE_ANSWER}" in printed and "QA accuracy                  n/a" in printed
    # scoring the run reads qa.json: the question metrics are n/a with the reason, never 0
    assert main(["score", "--workspace", str(ws), "--run", str(out), "--out",
                 str(tmp_path / "scores.json"), "--resamples", "0"]) == 0
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["aggregate"]["qa_accuracy"]["value"] is None
    assert scores["meetings"]["m1"]["details"]["not_applicable"]["qa_accuracy"] == NO_USABLE_ANSWER


def test_qa_scores_what_the_llm_answered_when_it_answers(notes_run, served, capsys):
    """The same step against an endpoint that answers: scored, so the n/a above is the answer's doing."""
    ws, out = notes_run
    served.append(Endpoint(answering, models=["stand-in"]))
    assert _qa(out, served[-1]) == 0
    qa = json.loads((out / "qa.json").read_text())
    assert qa["scores"]["qa_accuracy"]["value"] == 0.5 and qa["not_applicable"] == {}  # m1 right, m2 wrong


@pytest.mark.parametrize("content", ["{}", '{"verdict": "fine"}'])
def test_judge_answers_that_are_not_scores_fail_the_judge_or_are_not_judged(notes_run, served, capsys, content):
    ws, out = notes_run
    served.append(Endpoint(answering_with(content), models=["stand-in"]))
    assert main(["judge", str(out), *_flags(served[-1])]) == 1
    line = error_line(capsys)
    # the check's first control, then each meeting's summary and its one matched action item
    assert "5 of 5 judge requests failed (100%)" in line and "expected an integer from 1 to 5" in line
    assert not (out / "judged.json").exists()
    assert main(["judge", str(out), *_flags(served[-1], "--llm-failures", "allow")]) == 0
    assert "judged scores n/a: the judge's answer was not scores (wrong-shape)" in capsys.readouterr().out
    judged = json.loads((out / "judged.json").read_text())
    assert judged["not_judged"]["share"] == 1.0 and judged["aggregate"]["faithfulness"]["mean"] is None
    assert judged["requests"]["failed"] == judged["requests"]["requests"] == 5
    assert judged["requests"]["failures"] == {"wrong-shape": 5} and judged["check"]["passed"] is None
    assert all(i["score"] is None for m in judged["meetings"].values() for i in m["items"])


def test_an_answer_that_is_not_what_was_asked_is_never_cached(notes_run, served, capsys):
    ws, out = notes_run
    served.append(Endpoint(answering_with("{}"), models=["stand-in"]))
    assert main(["judge", str(out), *_flags(served[-1], "--llm-failures", "allow")]) == 0
    assert not list((out / "cache" / "llm").glob("*.json"))
    served[-1].behaviour, asked = scoring, served[-1].calls  # the endpoint recovers: the rerun asks again
    assert main(["judge", str(out), *_flags(served[-1])]) == 0
    judged = json.loads((out / "judged.json").read_text())
    # the check's four (a summary and an item, each right and wrong), m2's summary and item
    assert judged["not_judged"]["meetings"] == 0 and served[-1].calls - asked == 6
    assert judged["requests"]["cache_hits"] == 2  # m1's summary and item are the check's right ones


# --- item 3: no bound on an answer's size ---

def test_reply_limit_follows_max_tokens_up_to_the_ceiling():
    assert reply_limit(200) == REPLY_ENVELOPE_BYTES + 200 * REPLY_BYTES_PER_TOKEN == 78_336
    assert reply_limit(None) == reply_limit(10**6) == MAX_REPLY_BYTES == 16 << 20


def huge(request: dict, call: int):
    """A valid completion whose content is 400 MB, made as it is sent (no length announced)."""
    def blocks():
        yield b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "'
        block = b"a" * (1 << 20)
        for _ in range(400):
            yield block
        yield b'"}}]}'
    return 200, blocks(), 0.0


@pytest.mark.parametrize("command", ["judge", "qa"])
def test_a_400_mb_answer_is_read_no_further_than_the_bound_and_never_cached(notes_run, served, capsys, command):
    ws, out = notes_run
    served.append(Endpoint(huge, models=["stand-in"]))
    server = served[-1]
    start = time.perf_counter()
    rc = main(["judge", str(out), *_flags(server)]) if command == "judge" else _qa(out, server)
    assert rc == 1 and time.perf_counter() - start < 30  # was 126 s and 1.2 GB of memory
    limit = JUDGE_LIMIT if command == "judge" else QA_LIMIT
    assert f"the answer is longer than {limit:,} bytes, the most read for this request" in error_line(capsys)
    assert server.sent < 64 << 20  # the client stopped reading: the server could not send the rest
    assert [p for p in out.rglob("*") if p.is_file() and p.stat().st_size > limit] == []  # nothing cached
    assert not (out / "judged.json").exists() and not (out / "qa.json").exists()


def test_an_announced_length_over_the_bound_is_refused_before_reading(notes_run, served, capsys):
    ws, out = notes_run
    body = completion(json.dumps({d: 4 for d in DIMENSIONS}) + " " * (2 << 20))
    served.append(Endpoint(lambda request, call: (200, body, 0.0), models=["stand-in"]))
    assert main(["judge", str(out), *_flags(served[-1], "--llm-failures", "allow")]) == 0
    judged = json.loads((out / "judged.json").read_text())
    assert judged["requests"]["failures"] == {"too-large": 5}
    assert judged["meetings"]["m1"]["reason"].startswith(
        f"the judge request failed (too-large): the server announced an answer of {len(body.encode()):,} bytes")


def test_an_answer_within_the_bound_of_its_max_tokens_is_taken(notes_run, served, capsys):
    """The bound is the request's: a long answer passes under a max_tokens that allows it."""
    ws, out = notes_run

    def padded(request, call):
        status, text, delay = answering(request, call)
        reply = json.loads(text)
        reply["choices"][0]["message"]["content"] += " " * (QA_LIMIT - len(text) - 1000)
        return status, json.dumps(reply), delay
    served.append(Endpoint(padded, models=["stand-in"]))
    assert _qa(out, served[-1]) == 0
    assert _qa(out, served[-1], "max_tokens=400") == 1  # the same answer over the bound of 400 tokens
    assert f"an answer of {QA_LIMIT - 1000:,} bytes; at most {reply_limit(400):,} are read" in error_line(capsys)


def test_an_answer_padded_with_spaces_is_read_in_linear_time(notes_run, served, capsys):
    """1 MB of spaces after the JSON, within the bound of 20,000 tokens (code-fence stripping by a
    regular expression backtracked over them: 13 s for 110 kB, hours for this)."""
    ws, out = notes_run

    def padded(request, call):
        status, text, delay = answering(request, call)
        reply = json.loads(text)
        reply["choices"][0]["message"]["content"] += " " * (1 << 20)
        return status, json.dumps(reply), delay
    served.append(Endpoint(padded, models=["stand-in"]))
    start = time.perf_counter()
    assert _qa(out, served[-1], "max_tokens=20000") == 0
    assert time.perf_counter() - start < 10
    assert json.loads((out / "qa.json").read_text())["scores"]["qa_accuracy"]["value"] == 0.5


# --- items 1 and 2 on a recipe whose notes come from the LLM ---

GOLD = {"m1": ("Diane and Sheila talked about the flight to Chicago.", "book the flight to Chicago", "p_diane"),
        "m2": ("Sheila asked about New Jersey.", "call the office in New Jersey", "p_sheila")}


@pytest.fixture(scope="module")
def real(make_real_workspace, tmp_path_factory) -> dict[str, Path]:
    """The real-speech workspace with gold notes per meeting, and the stage cache the runs share."""
    root = tmp_path_factory.mktemp("llm-notes")
    ws = make_real_workspace(root / "ws")
    names = {"p_diane": "Diane Doe", "p_sheila": "Sheila Doe"}
    for mid, (summary, task, pid) in GOLD.items():
        (ws / "meetings" / mid).mkdir(parents=True)
        (ws / "meetings" / mid / "notes.json").write_text(json.dumps(
            {"format": "speechkit-notes/1", "meeting": mid, "summary": summary,
             "action_items": [{"description": task, "assignee": names[pid], "assignee_id": pid}]}))
    return {"ws": ws, "cache": root / "cache"}


def notes_answer(request: dict, call: int):
    return 200, completion(json.dumps({"summary": "Diane Doe will book the flight to Chicago.", "decisions": [],
                                       "action_items": [{"assignee": "Diane Doe", "description": "book the flight",
                                                         "due": ""}], "outline": []})), 0.0


def recipe(real: dict[str, Path], out: Path, server: Endpoint, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "SPEECHKIT_LLM_BASE_URL": server.url,
           "SPEECHKIT_LLM_MODEL": "stand-in", "SPEECHKIT_LLM_API_KEY": KEY, "OPENAI_API_KEY": FALLBACK_KEY}
    env.pop("OPENAI_BASE_URL", None)
    return subprocess.run([sys.executable, "-m", "speechkit", "-v", "recipe", "-L", "3", "--workspace",
                           str(real["ws"]), "--out", str(out), "--cache-dir", str(real["cache"]),
                           "--set", "stages.summarize.backend=llm", "--set", "stages.summarize.max_retries=0", *extra],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.decodes
@pytest.mark.slow  # a whole L3 run with LLM notes
def test_a_recipe_with_llm_notes_keeps_the_key_out_of_run_json_and_every_file(real, served, tmp_path):
    served.append(Endpoint(notes_answer, models=leaky_models))
    done = recipe(real, tmp_path / "run", served[-1])
    assert done.returncode == 0, done.stderr[-3000:]
    (called,) = json.loads((tmp_path / "run" / "run.json").read_text())["llm"]["endpoints"]
    assert called["probe"] == "ok: the model answered (the server lists leak Bearer ***, other-model)"
    assert called["failed"] == 0 and called["requests"] >= 2
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["meetings"]["m1"]["action_item_recall"]["value"] == 1.0  # the LLM's notes are scored
    no_leak_under(tmp_path / "run", done.stdout, done.stderr)


@pytest.mark.decodes
def test_notes_from_answers_that_are_not_notes_fail_the_run_or_are_not_applicable(real, served, tmp_path):
    served.append(Endpoint(answering_with("{}"), models=["stand-in"]))
    done = recipe(real, tmp_path / "fail", served[-1])
    assert done.returncode == 1 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "requests failed (100%; the recipe allows 0%)" in errors[0], done.stderr[-2000:]
    assert "not notes: KeyError" in errors[0] and not (tmp_path / "fail" / "scores.json").exists()

    done = recipe(real, tmp_path / "allow", served[-1], "--llm-failures", "allow")
    assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "allow"
    info = json.loads((run / "run.json").read_text())
    (called,) = info["llm"]["endpoints"]
    assert called["failed"] == called["requests"] >= 2 and called["failures"] == {"wrong-shape": called["failed"]}
    assert info["stages"]["summarize"]["m1"]["rejected_chunks"] == {"wrong-shape": 1}
    notes = json.loads((run / "notes" / "m1.json").read_text())
    assert notes["action_items"] == [] and notes["failed"].startswith("none of the 1 request(s) for them gave notes")
    scores = json.loads((run / "scores.json").read_text())
    for key in ("action_item_recall", "action_item_f1", "summary_fact_recall", "assignee_accuracy"):
        assert scores["aggregate"][key]["value"] is None, key  # was 0.000
        reason = scores["meetings"]["m1"]["details"]["not_applicable"][key]
        assert reason.startswith("the run's notes of this meeting came from no usable answer: none of the 1"), key
    report = (run / "report.md").read_text()
    assert report.startswith(f"**LLM failures allowed: {called['failed']} of {called['requests']} LLM requests")
    assert "notes from no usable answer have their scores n/a" in report.splitlines()[0]
