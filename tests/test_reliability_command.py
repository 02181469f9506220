"""Hostile and careless input, round five (issue 48): a program run as the meeting system by the
``command`` backend that hangs, forks, prints gigabytes, writes outside its outputs folder,
writes malformed, huge or NaN outputs, or exits nonzero; on the tiny workspace
(reliability_helpers.make_workspace), so that nothing decodes audio.

Each failure is one ``error:`` line and exit code 1; the earlier meetings' outputs stay in the
run folder and no scores are written; no process of the program survives its run.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from reliability_helpers import error_line, make_workspace

from speechkit.cli import main
from speechkit.errors import ProgramError
from speechkit.io.system_files import MAX_OUTPUT_BYTES
from speechkit.stages.system.program import LOG_HEAD_BYTES, MAX_LOG_BYTES, BoundedLog, run_program

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads process states in /proc")

#: A transcript of meeting m1 (or of the meeting the program is given) that reads.
TRANSCRIPT = ("meeting = json.load(open(inputs / 'inputs.json'))['meeting']\n"
              "(outputs / f'{meeting}.json').write_text(json.dumps([{'session_id': meeting, 'speaker': 'a', "
              "'start_time': 0.0, 'end_time': 1.0, 'words': 'hello'}]))\n")


@pytest.fixture
def tiny(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """The tiny workspace and the run folder to run it into; the work folders a failed program
    leaves go under the test's folder."""
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ws, _ = make_workspace(tmp_path)
    return ws, tmp_path / "out"


def program(tmp_path: Path, body: str) -> str:
    """The --system-command value of a Python program with ``inputs``, ``outputs`` and ``pids``
    (a file it may note process ids in, one a line) defined before ``body``."""
    script = tmp_path / "system.py"
    script.write_text("import json, os, subprocess, sys, time\nfrom pathlib import Path\n"
                      "inputs, outputs = map(Path, sys.argv[1:])\n"
                      f"pids = Path({str(tmp_path / 'pids')!r})\n"
                      "def note(pid):\n    with open(pids, 'a') as f:\n        f.write(f'{pid}\\n')\n" + body)
    return shlex.join([sys.executable, str(script)])


def run(ws: Path, out: Path, system: str, *extra: str) -> int:
    return main(["run", "command", "-L", "1", "-w", str(ws), "--out", str(out), "--system-command", system, *extra])


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def noted(tmp_path: Path, count: int) -> list[int]:
    pids = [int(line) for line in (tmp_path / "pids").read_text().split()]
    assert len(pids) == count, pids
    return pids


def gone(pids: list[int], within_s: float = 10.0) -> bool:
    """Whether every process of ``pids`` has ended within ``within_s`` (init reaps the orphans)."""
    deadline = time.monotonic() + within_s
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(pid) for pid in pids)


# A child that starts a grandchild; both sleep, and note their ids. ``OUT``: where their output goes.
FAMILY = ("child = subprocess.Popen([sys.executable, '-c', 'import subprocess, sys, time; "
          "g = subprocess.Popen([sys.executable, \"-c\", \"import time; time.sleep(300)\"], stdout=OUT, stderr=OUT); "
          "print(g.pid, flush=True); time.sleep(300)'], stdout=subprocess.PIPE, stderr=OUT)\n"
          "note(child.pid)\nnote(int(child.stdout.readline()))\n")


def test_a_program_that_hangs_is_killed_at_its_deadline_with_its_children_and_grandchildren(tiny, tmp_path, capsys):
    ws, out = tiny
    system = program(tmp_path, FAMILY.replace("OUT", "None") + "note(os.getpid())\ntime.sleep(300)\n")
    started = time.monotonic()
    assert run(ws, out, system, "--set", "system.timeout_s=2") == 1
    assert time.monotonic() - started < 60
    assert "ran past its deadline of 2 s (stages.system.timeout_s) and was stopped" in error_line(capsys)
    assert gone(noted(tmp_path, 3))  # the program, its child and its grandchild
    assert not (out / "scores.json").exists() and not (out / "transcripts").exists()


@pytest.mark.parametrize("output", ["subprocess.DEVNULL", "None"], ids=["output-closed", "output-held"])
def test_what_a_program_leaves_running_in_its_group_is_killed_when_it_exits(tiny, tmp_path, output):
    ws, out = tiny
    # "None": the child and grandchild hold the program's output open after it exited
    system = program(tmp_path, FAMILY.replace("OUT", output) + TRANSCRIPT)
    started = time.monotonic()
    assert run(ws, out, system) == 0
    assert time.monotonic() - started < 60
    assert gone(noted(tmp_path, 4))  # m1's child and grandchild, and m2's
    assert (out / "transcripts" / "m2.json").is_file() and (out / "scores.json").is_file()


def test_a_process_that_left_the_group_and_holds_the_output_fails_the_run(tiny, tmp_path, capsys):
    ws, out = tiny
    system = program(tmp_path, "escaped = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], "
                               "start_new_session=True)\nnote(escaped.pid)\n" + TRANSCRIPT)
    try:
        assert run(ws, out, system) == 1
        line = error_line(capsys)
        assert "exited, but a process it started still holds its output open 5 s later: it left the program's " \
               "process group, so speechkit cannot stop it" in line, line
        assert not (out / "transcripts").exists()
    finally:
        for pid in (int(p) for p in (tmp_path / "pids").read_text().split()):
            os.kill(pid, signal.SIGKILL)


def test_a_log_of_gigabytes_is_kept_bounded_in_memory_and_on_disk(tmp_path):
    """256 MiB on stdout and stderr, read in constant memory: the log keeps its head and its end."""
    script = tmp_path / "loud.py"
    script.write_text("import sys\nsys.stdout.write('first line\\n')\nsys.stdout.flush()\nblock = 'x' * 1023 + '\\n'\n"
                      "for i in range(256 * 1024):\n    (sys.stdout if i % 2 else sys.stderr).write(block)\n"
                      "sys.stdout.flush()\nsys.stderr.write('last line\\n')\n")
    log = BoundedLog()
    tracemalloc.start()
    try:
        done = run_program([sys.executable, str(script)], 300, log, "loud.py", tmp_path / "log")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert done.status == 0
    assert log.total == 11 + 256 * 1024 * 1024 + 10
    assert peak < 4 * MAX_LOG_BYTES, peak  # never the whole log
    kept = log.data()
    marker = f"\n[speechkit: {log.total - MAX_LOG_BYTES:,} bytes of this log left out]\n".encode()
    assert len(kept) == MAX_LOG_BYTES + len(marker) and kept[LOG_HEAD_BYTES:LOG_HEAD_BYTES + len(marker)] == marker
    assert kept.startswith(b"first line\nxxx") and kept.endswith(b"x\nlast line\n")
    assert log.last_line() == "last line"


def test_a_loud_program_leaves_a_bounded_log_in_the_run_folder(tiny, tmp_path):
    ws, out = tiny
    system = program(tmp_path, "print('starting', flush=True)\nsys.stdout.write(('y' * 1023 + '\\n') * 3000)\n"
                               "print('done', file=sys.stderr)\n" + TRANSCRIPT)
    assert run(ws, out, system) == 0
    log = (out / "system" / "m1.log").read_text()
    assert log.startswith("starting\nyyy") and log.endswith("y\ndone\n")
    assert "bytes of this log left out]\n" in log and len(log.encode()) < MAX_LOG_BYTES + 100
    assert json.loads((out / "run.json").read_text())["stages"]["system"]["m1"]["log_bytes"] == len(log.encode())


@pytest.mark.parametrize("body, where, how", [
    ("open(Path(json.load(open(inputs / 'inputs.json'))['audio']).parent / 'm1.ref.json', 'a').write(' ')\n",
     "ws/m1.ref.json", "changed"),
    ("(Path(json.load(open(inputs / 'inputs.json'))['audio']).parent / 'stolen.txt').write_text('x')\n",
     "ws/stolen.txt", "created"),
    ("os.remove(Path(json.load(open(inputs / 'inputs.json'))['audio']).parent / 'm2.ref.json')\n",
     "ws/m2.ref.json", "removed"),
    ("(inputs / 'inputs.json').write_text('{}')\n", "inputs/inputs.json", "changed"),
    ("(outputs.parent / 'stray.txt').write_text('x')\n", "stray.txt", "created"),
    ("(Path(RUN) / 'transcripts').mkdir(parents=True, exist_ok=True)\n"
     "(Path(RUN) / 'transcripts' / 'm2.json').write_text('[]')\n", "out/transcripts", "created"),
])
def test_a_program_that_writes_outside_its_outputs_folder_fails_the_run(tiny, tmp_path, capsys, body, where, how):
    ws, out = tiny
    system = program(tmp_path, f"RUN = {str(out)!r}\n" + TRANSCRIPT + body)
    assert run(ws, out, system) == 1
    line = error_line(capsys)
    path = line.split("error: ", 1)[1].split(": ", 1)[0]
    assert path.endswith(where) and f"{how} while " in line and "a system writes only into its outputs folder" in line
    assert "ran on meeting 'm1'" in line and not (out / "scores.json").exists()


def test_what_a_program_may_write_beside_its_outputs_does_not_fail_the_run(tiny, tmp_path, monkeypatch):
    """Its working folder and its outputs' subfolders are its own."""
    ws, out = tiny
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    system = program(tmp_path, TRANSCRIPT + "(outputs / 'scratch' / 'deep').mkdir(parents=True)\n"
                                            "Path('scratch.txt').write_text('x')\n")
    assert run(ws, out, system) == 0


def _huge(path: str) -> str:
    """A body writing a sparse file just over the bound at ``path`` (relative to the outputs)."""
    return (f"(outputs / {path!r}).parent.mkdir(parents=True, exist_ok=True)\n"
            f"with open(outputs / {path!r}, 'wb') as f:\n    f.truncate({MAX_OUTPUT_BYTES + 1})\n")


def _raw(text: str, path: str = "m1.json") -> str:
    """A body writing ``text`` as the file ``path`` of the outputs."""
    return (f"(outputs / {path!r}).parent.mkdir(parents=True, exist_ok=True)\n"
            f"(outputs / {path!r}).write_text({text!r})\n")


def _segment(start: str, end: str) -> str:
    return _raw(f'[{{"session_id": "m1", "speaker": "a", "start_time": {start}, "end_time": {end}, "words": "hi"}}]')


ELSEWHERE = ("elsewhere = outputs.parent.parent / 'elsewhere'\nelsewhere.mkdir()\n"
             "(elsewhere / 'm1.json').write_text('{}')\n")


@pytest.mark.parametrize("body, problem", [
    (_segment("NaN", "1"), "m1.json: invalid JSON: NaN is not a finite number"),
    (_segment("0", "1e999"), "m1.json: invalid JSON"),
    (_segment("-1", "1"), "m1.json: [0].start_time"),
    (_raw("[" * 100_000), "m1.json: invalid JSON: values nested too deeply"),
    ("(outputs / 'm1.json').write_bytes(b'\\xff\\xfe[]')", "m1.json: not UTF-8"),
    (_huge("m1.json"), f"m1.json: holds {MAX_OUTPUT_BYTES + 1:,} bytes; a system's output file holds at most 64 MiB"),
    (TRANSCRIPT + _huge("m1.rttm"), "m1.rttm: holds"),
    (TRANSCRIPT + _huge("answers/m1.json"), "answers/m1.json: holds"),
    (TRANSCRIPT + _raw("SPEAKER m1 1 nan 1.0 <NA> <NA> a <NA> <NA>\n", "m1.rttm"), "m1.rttm:1: "),
    (TRANSCRIPT + _raw('{"summary": ' + "[" * 5000 + "]" * 5000 + "}", "notes/m1.json"),
     "notes/m1.json: invalid JSON: values nested too deeply"),
    (TRANSCRIPT + _raw('{"answers": {"q": NaN}}', "answers/m1.json"),
     "answers/m1.json: invalid JSON: NaN is not a finite number"),
    ("os.mkfifo(outputs / 'm1.json')", "m1.json: is not a regular file (a device, FIFO or socket)"),
    ("(outputs / 'm1.json').mkdir()", "m1.json: is a directory, expected a file"),
    ("os.symlink('/dev/zero', outputs / 'm1.json')", "m1.json: is not a regular file"),
    ("os.symlink(Path(json.load(open(inputs / 'inputs.json'))['audio']).parent / 'm1.ref.json', "
     "outputs / 'm1.json')", "m1.json: leaves the system's outputs folder"),
    (TRANSCRIPT + ELSEWHERE + "os.symlink(elsewhere, outputs / 'notes')\n",
     "notes/m1.json: leaves the system's outputs folder"),
], ids=["nan-time", "1e999-time", "negative-time", "nested-100000", "not-utf8", "huge-transcript", "huge-rttm",
        "huge-answers", "nan-rttm", "nested-notes", "nan-answer", "fifo", "folder", "link-to-dev-zero",
        "link-to-the-reference", "notes-folder-a-link-out"])
def test_malformed_huge_or_nan_outputs_fail_the_run_naming_the_file(tiny, tmp_path, capsys, body, problem):
    ws, out = tiny
    assert run(ws, out, program(tmp_path, body + "\n")) == 1
    line = error_line(capsys)
    assert line.startswith("speechkit run: error: ") and problem in line, line
    assert not (out / "scores.json").exists() and not (out / "transcripts").exists()


def test_a_program_that_fails_on_a_later_meeting_keeps_the_earlier_meetings_outputs(tiny, tmp_path, capsys):
    ws, out = tiny
    system = program(tmp_path, TRANSCRIPT + "if meeting == 'm2':\n    print('loading', flush=True)\n"
                                            "    print('disk full', file=sys.stderr)\n    sys.exit(3)\n")
    assert run(ws, out, system) == 1
    line = error_line(capsys)
    assert "exited with status 3 on meeting 'm2': disk full" in line
    log = Path(line.split("error: ", 1)[1].split(": ", 1)[0])
    assert log.name == "program.log" and log.read_text() == "loading\ndisk full\n"
    assert json.loads((out / "transcripts" / "m1.json").read_text())[0]["words"] == "hello"
    assert (out / "system" / "m1.log").is_file() and not (out / "transcripts" / "m2.json").exists()
    assert not (out / "scores.json").exists()
    assert run(ws, out, program(tmp_path, TRANSCRIPT)) == 0  # the rerun finishes it
    assert (out / "transcripts" / "m2.json").is_file() and (out / "scores.json").is_file()


def test_a_program_killed_by_a_signal_says_so(tiny, tmp_path, capsys):
    ws, out = tiny
    assert run(ws, out, program(tmp_path, "os.kill(os.getpid(), 9)\n")) == 1
    assert "was killed by signal SIGKILL on meeting 'm1' (its log is empty)" in error_line(capsys)


def test_a_program_that_closes_its_output_and_hangs_is_stopped_at_the_deadline(tmp_path):
    script = tmp_path / "quiet.py"
    script.write_text("import os, time\nos.close(1)\nos.close(2)\ntime.sleep(300)\n")
    started = time.monotonic()
    with pytest.raises(ProgramError, match="ran past its deadline of 1 s"):
        run_program([sys.executable, str(script)], 1, BoundedLog(), "quiet.py", tmp_path / "log")
    assert time.monotonic() - started < 30
