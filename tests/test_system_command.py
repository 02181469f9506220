"""A meeting system of a user's own: `speechkit export inputs` + the shipped example program +
`speechkit score` give the bytes of scores.json that the same program run through the `command`
backend gives; the program sees the same inputs either way; a program that fails, runs past its
deadline or writes garbage fails the run with one line; the program comes from the command line only."""
from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from speechkit.cli import main
from speechkit.recipe import RecipeError, load_recipe

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "echo_system.py"


@pytest.fixture(autouse=True)
def work_folders(tmp_path, monkeypatch):
    """The work folders a failed program leaves (for the user to look into) go under the test's folder."""
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def command(script: Path, *args: str) -> str:
    """The --system-command value that runs ``script`` with this Python."""
    return shlex.join([sys.executable, str(script), *args])


def run_command(ws: Path, out: Path, program: str, level: int = 3, *extra: str) -> int:
    return main(["recipe", "--asr", "command", "-L", str(level), "-w", str(ws), "--out", str(out),
                 "--system-command", program, *extra])


def export_route(ws: Path, level: int, inputs: Path, outputs: Path, program: list[str]) -> None:
    """What docs/systems.md tells a user to run: the inputs of each meeting in calendar order (once
    the earlier meetings' outputs are there), the program on them."""
    assert main(["export", "inputs", str(ws), "-L", str(level), str(inputs), "--outputs", str(outputs)]) == 0
    for meeting in (inputs / "meetings.txt").read_text().split():
        assert main(["export", "inputs", str(ws), "-L", str(level), str(inputs), "--outputs", str(outputs),
                     "--meeting", meeting]) == 0
        assert os.spawnv(os.P_WAIT, program[0], [*program, str(inputs / meeting), str(outputs)]) == 0


def spying(tmp_path: Path) -> Path:
    """The example program as the command backend runs it, keeping a copy of each inputs folder it
    gets in ``tmp_path/seen/<meeting>``."""
    spy = tmp_path / "spy.py"
    spy.write_text("import json, shutil, subprocess, sys\n"
                   "meeting = json.load(open(sys.argv[1] + '/inputs.json'))['meeting']\n"
                   f"shutil.copytree(sys.argv[1], {str(tmp_path / 'seen')!r} + '/' + meeting)\n"
                   f"sys.exit(subprocess.call([sys.executable, {str(EXAMPLE)!r}, *sys.argv[1:]]))\n")
    return spy


def test_export_inputs_and_score_give_the_scores_of_the_command_backend_byte_for_byte(small_synth_workspace,
                                                                                     tmp_path, capsys):
    ws = small_synth_workspace
    seen, spy = tmp_path / "seen", spying(tmp_path)
    assert run_command(ws, tmp_path / "run", command(spy)) == 0
    run = tmp_path / "run"

    export_route(ws, 3, tmp_path / "inputs", tmp_path / "outputs", [sys.executable, str(EXAMPLE)])
    assert main(["score", "--workspace", str(ws), "--run", str(tmp_path / "outputs"),
                 "--out", str(tmp_path / "scores.json")]) == 0
    assert (tmp_path / "scores.json").read_bytes() == (run / "scores.json").read_bytes()

    scores = json.loads((run / "scores.json").read_text())
    meetings = (tmp_path / "inputs" / "meetings.txt").read_text().split()
    assert meetings == list(scores["meetings"]) == ["m01", "m02"]
    assert scores["aggregate"]["wer"]["value"] is not None  # the transcripts were scored
    assert scores["aggregate"]["qa_accuracy"]["value"] is not None  # and the system's own answers
    assert scores["settings"]["questions"]["answers"] == "answers/<id>.json"
    assert any(v["value"] is not None for k, v in scores["aggregate"].items() if k.startswith("action_item"))
    for meeting in meetings:  # the program got the very inputs the export gives
        for name in ("inputs.json", "context.txt"):
            assert (seen / meeting / name).read_bytes() == (tmp_path / "inputs" / meeting / name).read_bytes()
    given = json.loads((tmp_path / "inputs" / "m02" / "inputs.json").read_text())
    assert given["level"] == 3 and given["earlier"] == ["m01"] and given["enrollments"] and given["questions"]
    assert all("answer" not in q for q in given["questions"])
    assert given["context"].startswith("Earlier meetings (the notes taken then):\nm01: ")  # its own notes fed back
    assert (seen / "m02" / "earlier" / "m01.json").read_bytes() == (run / "transcripts" / "m01.json").read_bytes()
    assert (seen / "m02" / "earlier" / "notes" / "m01.json").read_bytes() == (run / "notes" / "m01.json").read_bytes()
    assert "m02: " in (run / "system" / "m02.log").read_text()  # its stderr, kept in the run folder
    info = json.loads((run / "run.json").read_text())
    assert info["system"]["program"] == [sys.executable, str(spy)]
    assert info["recipe"]["stages"] == {"system": {"backend": "command", "timeout_s": 600.0}}  # no program in it
    (tmp_path / "outputs" / "qa.json").write_text(json.dumps({"schema": "speechkit.qa/1",
                                                               "meetings": {"m01": {"answers": []}}}))
    assert main(["score", "--workspace", str(ws), "--run", str(tmp_path / "outputs"),
                 "--out", str(tmp_path / "qa-scores.json")]) == 0
    stepped = json.loads((tmp_path / "qa-scores.json").read_text())  # a qa step's file wins over the system's own
    assert stepped["settings"]["questions"]["answers"] == "qa.json"
    assert stepped["meetings"]["m02"]["details"]["not_applicable"]["qa_accuracy"].startswith("the run's answers")
    assert main(["export", "inputs", str(ws), "-L", "1", str(tmp_path / "inputs")]) == 0  # the same folder again
    assert not (tmp_path / "inputs" / "m02" / "earlier").exists()  # nothing of the L3 export is left
    report = (run / "report.md").read_text()
    assert "## The system\n\nA meeting system of the user's own" in report and str(spy) in report


def test_l2_feeds_the_program_its_own_earlier_outputs(small_synth_workspace, tmp_path):
    assert run_command(small_synth_workspace, tmp_path / "run", command(spying(tmp_path)), 2) == 0
    seen, run = tmp_path / "seen", tmp_path / "run"
    first, second = (json.loads((seen / m / "inputs.json").read_text()) for m in ("m01", "m02"))
    assert first["earlier"] == [] and not (seen / "m01" / "earlier").exists() and first["context"] == ""
    assert second["earlier"] == ["m01"] and not second["names"] and not second["enrollments"]  # no L3 artifact
    assert second["context"] == "Earlier meetings (the notes taken then):\n" + \
        f"m01: {json.loads((run / 'notes' / 'm01.json').read_text())['summary']}"
    assert (seen / "m02" / "earlier" / "m01.json").read_bytes() == (run / "transcripts" / "m01.json").read_bytes()
    assert "1 earlier meetings" in (run / "system" / "m02.log").read_text()


def test_l1_gives_the_audio_and_the_questions_only(small_synth_workspace, tmp_path):
    assert main(["export", "inputs", str(small_synth_workspace), "-L", "1", str(tmp_path / "in")]) == 0
    asked = []
    for meeting in ("m01", "m02"):  # at L1 no meeting waits for an earlier one
        given = json.loads((tmp_path / "in" / meeting / "inputs.json").read_text())
        assert given["level"] == 1 and given["context"] == "" and given["earlier"] == []
        assert not given["names"] and not given["enrollments"] and not given["terms"]
        asked += given["questions"]
        assert Path(given["audio"]).is_file() and (tmp_path / "in" / meeting / "context.txt").read_text() == ""
        assert not (tmp_path / "in" / meeting / "earlier").exists()
    assert asked  # the gold questions the meetings have


def test_l2_waits_for_the_outputs_of_the_earlier_meetings(small_synth_workspace, tmp_path, capsys):
    ws, inputs, out = str(small_synth_workspace), str(tmp_path / "in"), str(tmp_path / "out")
    assert main(["export", "inputs", ws, "-L", "2", inputs, "--outputs", out]) == 0
    assert "waiting for the system's outputs of m01 (in --outputs): m02" in capsys.readouterr().out
    assert (tmp_path / "in" / "m01" / "inputs.json").is_file() and not (tmp_path / "in" / "m02").exists()
    assert main(["export", "inputs", ws, "-L", "2", inputs, "--outputs", out, "--meeting", "m02"]) == 1
    assert "out/m01.json: meeting 'm02' at L2 needs the system's outputs of the earlier meeting 'm01'" \
        in capsys.readouterr().err


def error_line(capsys: pytest.CaptureFixture) -> str:
    """The one error line the command wrote to stderr (after its progress bar)."""
    lines = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(lines) == 1 and lines[0].startswith("speechkit recipe: error: "), lines
    return lines[0]


def failing(tmp_path: Path, body: str) -> str:
    script = tmp_path / "system.py"
    script.write_text("import sys, time\nfrom pathlib import Path\ninputs, outputs = map(Path, sys.argv[1:])\n" + body)
    return command(script)


def test_a_program_that_fails_stops_the_run_with_its_last_words(small_synth_workspace, tmp_path, capsys):
    program = failing(tmp_path, "print('loading the model', file=sys.stderr)\nprint('out of memory', file=sys.stderr)\n"
                                "sys.exit(3)\n")
    assert run_command(small_synth_workspace, tmp_path / "run", program) == 1
    err = error_line(capsys)
    log = Path(err.split("error: ", 1)[1].split(": ", 1)[0])
    assert "exited with status 3 on meeting 'm01': out of memory" in err
    assert log.read_text() == "loading the model\nout of memory\n"  # kept where the line says
    assert log.parent.parent == tmp_path and (log.parent / "inputs" / "inputs.json").is_file()
    assert not (tmp_path / "run" / "scores.json").exists() and not (tmp_path / "run" / "transcripts").exists()


def test_a_program_past_its_deadline_is_stopped(small_synth_workspace, tmp_path, capsys):
    pid = tmp_path / "pid"
    program = failing(tmp_path, f"Path({str(pid)!r}).write_text(str(__import__('os').getpid()))\ntime.sleep(60)\n")
    started = time.monotonic()
    assert run_command(small_synth_workspace, tmp_path / "run", program, 1, "--set", "system.timeout_s=1") == 1
    assert time.monotonic() - started < 30
    err = error_line(capsys)
    assert "ran past its deadline of 1 s (stages.system.timeout_s) and was stopped" in err
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid.read_text()), 0)
    assert not (tmp_path / "run" / "scores.json").exists()


@pytest.mark.parametrize("body, problem", [
    ("", "m01.json: not written: the system writes its SegLST transcript of meeting 'm01' here"),
    ("(outputs / 'm01.json').write_text('this is not json')", "m01.json:1: invalid JSON"),
    ("(outputs / 'm01.json').write_text('[{\"speaker\": \"a\"}]')", "m01.json: [0].session_id: missing"),
    ("(outputs / 'm01.json').write_text('[]')\n(outputs / 'notes').mkdir()\n"
     "(outputs / 'notes' / 'm01.json').write_text('{\"summary\": 3}')", "m01.json: summary: expected a string"),
    ("(outputs / 'm01.json').write_text('[]')\n(outputs / 'answers').mkdir()\n"
     "(outputs / 'answers' / 'm01.json').write_text('{\"answers\": [1]}')",
     "m01.json: answers: expected an object of question ids and answer texts"),
])
def test_a_program_that_writes_garbage_fails_the_run(small_synth_workspace, tmp_path, capsys, body, problem):
    assert run_command(small_synth_workspace, tmp_path / "run", failing(tmp_path, body + "\n"), 1) == 1
    err = error_line(capsys)
    assert problem in err, err
    assert not (tmp_path / "run" / "scores.json").exists()


def test_a_program_that_cannot_start(small_synth_workspace, tmp_path, capsys):
    assert main(["run", "command", "-L", "1", "-w", str(small_synth_workspace), "--out", str(tmp_path / "run"),
                 "--system-command", str(tmp_path / "no-such-program")]) == 1  # `speechkit run` takes it too
    lines = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert lines == [f"speechkit run: error: {tmp_path / 'no-such-program'}: cannot run it: No such file or directory"]


def test_the_program_comes_from_the_command_line_only(small_synth_workspace, tmp_path, capsys):
    recipe = tmp_path / "mine.yaml"
    recipe.write_text("stages:\n  system: {backend: command, program: [python, x.py]}\n")
    with pytest.raises(RecipeError, match=r"stages\.system\.program: given only on the command line "
                                          r"\(--system-command\), never in a recipe"):
        load_recipe(recipe)
    ws = str(small_synth_workspace)
    assert main(["recipe", "--asr", "command", "-L", "1", "-w", ws, "--out", str(tmp_path / "a"),
                 "--system-command", "true", "--set", "system.program=[python, x.py]"]) == 2
    assert "stages.system.program: given only on the command line" in capsys.readouterr().err
    assert main(["recipe", "--asr", "command", "-L", "1", "-w", ws, "--out", str(tmp_path / "b")]) == 2
    assert "stages.system: the command backend runs the program named on the command line" in capsys.readouterr().err
    assert main(["recipe", "--asr", "whisper", "-L", "1", "-w", ws, "--out", str(tmp_path / "c"),
                 "--system-command", "true"]) == 2
    assert "--system-command: recipe 'whisper-l1' runs no program" in capsys.readouterr().err
    recipe.write_text("stages:\n  system: {}\n  asr: {}\n")
    with pytest.raises(RecipeError, match=r"stages\.system: a whole system runs alone; the recipe also names asr"):
        load_recipe(recipe)
    assert not any((tmp_path / d).exists() for d in "abc")
