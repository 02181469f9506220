"""Hostile and careless input, round two: paths that escape and outputs that clobber (issue 15, items 1-4,
12 and 13). No model runs here: Cascade.run is replaced wherever a command could reach it."""
from __future__ import annotations

import datetime as dt
import os
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from reliability_helpers import error_line, make_workspace, manifest, snapshot

from speechkit.cli import main
from speechkit.errors import ManifestError, OutputError, RunFolderBusyError
from speechkit.io.atomic import check_output_file, write_text
from speechkit.io.lock import LOCK_NAME, run_folder_lock
from speechkit.io.manifest import load_workspace
from speechkit.io.names import child_path, session_token
from speechkit.transcript import Transcript
from speechkit.workspace import Meeting, Person, Workspace

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / ".." / "shared" / "realdata" / "pyannote-sample" / "sample.wav"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def no_models(monkeypatch):
    """Fail loudly if a command gets as far as running the cascade."""
    from speechkit.cascade import Cascade

    def refuse(*args, **kwargs):
        raise AssertionError("the cascade ran: the command should have failed before any model work")
    monkeypatch.setattr(Cascade, "run", refuse)


# 1. Meeting, person and artifact ids and the workspace name are safe identifiers.

@pytest.mark.parametrize("field, value", [
    ("meetings[0].id", "../../../x"), ("meetings[0].id", "/tmp/x"), ("meetings[0].id", ".."),
    ("meetings[0].id", "a/b"), ("meetings[0].id", "my meeting"), ("meetings[0].id", ".hidden"),
    ("people[0].id", "../p1"), ("artifacts[0].id", "../../a"),
])
def test_unsafe_ids_are_rejected_when_the_manifest_loads(tmp_path, field, value):
    ws, _ = make_workspace(tmp_path)
    (ws / "agenda.md").write_text("# agenda\n")
    data = manifest(artifacts=[{"id": "a1", "kind": "agenda", "path": "agenda.md"}])
    data = yaml.safe_load(yaml.safe_dump(data))
    if field.startswith("meetings"):
        data["meetings"][0]["id"] = value
    elif field.startswith("people"):
        data["people"][0]["id"] = value
    else:
        data["artifacts"][0]["id"] = value
    (ws / "workspace.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ManifestError, match=rf"workspace\.yaml: {re.escape(field)}: .*not a safe identifier") as info:
        load_workspace(ws)
    assert str(ws / "workspace.yaml") in str(info.value)


def test_a_run_with_an_escaping_meeting_id_writes_nothing_outside_the_run_folder(tmp_path, monkeypatch):
    """A workspace built in Python skips the manifest checks; the runner's paths still cannot leave OUT."""
    from speechkit.cache import StageCache
    from speechkit.cascade import CascadeResult
    from speechkit.core.record import TRANSCRIPT, MeetingRecord
    from speechkit.io.run_folder import RunFolder
    from speechkit.recipe import load_recipe
    from speechkit.runner import run_meetings

    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    ws_dir, _ = make_workspace(tmp_path / "src")
    meeting = Meeting(id="../../../x", date=dt.date(2026, 3, 2), audio=ws_dir / "audio.wav")
    ws = Workspace(name="tiny", root=ws_dir, people=(Person("p1", "Robert Smith"),), meetings=(meeting,))

    class Stub:
        stage_names = ()  # no stage to tell the run has started

        def run(self, audio, context, cache, session_id=None, **kwargs):
            return CascadeResult(MeetingRecord(audio, context, session_id), {TRANSCRIPT: Transcript(session_id, [])})

    before = snapshot(tmp_path)
    with pytest.raises(OutputError, match="not a safe identifier"):
        run_meetings(load_recipe("l1"), ws, RunFolder("out"), Stub(), cache=StageCache(None), progress=False)
    assert snapshot(tmp_path) == before
    assert not list(tmp_path.rglob("x.*"))


def test_child_path_refuses_every_escape(tmp_path):
    assert child_path(tmp_path, "m1", ".json") == tmp_path / "m1.json"
    for bad in ("../x", "/etc/passwd", "..", ".", "a/../../b", "", "x\0y", "a\\b" if os.sep == "\\" else "a/b"):
        with pytest.raises(OutputError):
            child_path(tmp_path, bad, ".json")


# 2. The workspace name cannot move the default run folder out of runs/.

def test_workspace_name_with_dot_dot_is_rejected_and_cannot_move_the_default_run_folder(tmp_path):
    from speechkit.recipe import load_recipe
    from speechkit.runner import default_out

    ws_dir, _ = make_workspace(tmp_path, name="../../escaped")
    with pytest.raises(ManifestError, match=r"workspace\.yaml: name: '../../escaped' is not a safe identifier"):
        load_workspace(ws_dir)
    recipe = load_recipe("l1")
    built = Workspace(name="../../escaped", root=ws_dir, people=(), meetings=())
    with pytest.raises(OutputError, match="not a safe identifier"):
        default_out(recipe, built)
    ok = default_out(recipe, Workspace(name="tiny", root=ws_dir, people=(), meetings=()))
    assert ok == Path("runs") / "whisper-tiny" / "l1"  # runs/<recipe family>-<workspace>/l<level>


# 3. The atomic writer replaces only regular files; symlinks, folders, devices and inputs are refused.

def _special_targets(tmp_path: Path) -> dict[str, Path]:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    targets = {"folder": tmp_path / "folder", "symlink to a file": tmp_path / "link.json",
               "symlink to a folder": tmp_path / "dirlink", "dangling symlink": tmp_path / "dangling.json",
               "fifo": tmp_path / "fifo"}
    targets["folder"].mkdir()
    os.symlink(outside, targets["symlink to a file"])
    os.symlink(tmp_path / "folder", targets["symlink to a folder"])
    os.symlink(tmp_path / "nowhere.json", targets["dangling symlink"])
    os.mkfifo(targets["fifo"])
    if IS_ROOT:
        targets["character device"] = tmp_path / "null"
        os.mknod(targets["character device"], 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return targets


def test_atomic_writer_refuses_non_regular_targets_and_leaves_them_as_they_are(tmp_path):
    targets = _special_targets(tmp_path)
    before = snapshot(tmp_path)
    for kind, target in targets.items():
        with pytest.raises(OutputError, match=r"is (a folder|a symbolic link|a FIFO|a character device)") as info:
            write_text(target, "clobbered\n")
        assert str(info.value).startswith(str(target)), kind
    assert snapshot(tmp_path) == before
    assert (tmp_path / "outside.txt").read_text() == "keep me\n"
    assert not (tmp_path / "nowhere.json").exists()


def test_score_out_on_a_device_node_symlink_or_folder_is_refused(tmp_path, capsys):
    ws, run = make_workspace(tmp_path / "w")
    targets = _special_targets(tmp_path)
    before = snapshot(tmp_path)
    for kind, target in targets.items():
        assert main(["score", "--workspace", str(ws), "--run", str(run), "--out", str(target)]) == 1, kind
        assert str(target) in error_line(capsys)
    assert snapshot(tmp_path) == before


def test_score_out_naming_an_input_is_refused(tmp_path, capsys):
    ws, run = make_workspace(tmp_path)
    ref, hyp = ws / "m1.ref.json", run / "m1.json"
    os.link(hyp, tmp_path / "hard-link.json")
    before = snapshot(tmp_path)
    for argv in (["--ref", str(ref), "--hyp", str(hyp), "--out", str(ref)],
                 ["--ref", str(ref), "--hyp", str(hyp), "--out", str(tmp_path / "hard-link.json")],
                 ["--ref", str(ref), "--hyp", str(hyp), "--out", str(hyp)],
                 ["--workspace", str(ws), "--run", str(run), "--out", str(hyp)],
                 ["--workspace", str(ws), "--run", str(run), "--out", str(ws / "m2.ref.json")],
                 ["--workspace", str(ws), "--run", str(run), "--out", str(ws / "workspace.yaml")]):
        assert main(["score", *argv]) == 1
        assert "would destroy it" in error_line(capsys)
    assert snapshot(tmp_path) == before


def test_transcribe_out_naming_the_audio_or_an_existing_link_is_refused(tmp_path, capsys, no_models):
    audio = tmp_path / "take.wav"
    audio.write_bytes(SAMPLE.read_bytes())
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(tmp_path / "elsewhere.stm", out / "take.stm")
    before = snapshot(tmp_path)
    assert main(["transcribe", str(audio), "--out", str(out)]) == 1
    assert f"{out / 'take.stm'}: is a symbolic link" in error_line(capsys)
    odd = tmp_path / "take.json"  # an odd name for audio, but it is the input: never overwritten
    odd.write_bytes(SAMPLE.read_bytes())
    assert main(["transcribe", str(odd), "--out", str(tmp_path)]) == 1
    assert "is the audio file of this command" in error_line(capsys)
    assert snapshot(tmp_path) == {**before, **snapshot(tmp_path)} and odd.read_bytes() == SAMPLE.read_bytes()
    assert not (tmp_path / "elsewhere.stm").exists()


# 4. Outputs follow the umask.

@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_outputs_follow_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        write_text(tmp_path / "new.txt", "x\n")
        ws, run = make_workspace(tmp_path / "w")
        assert main(["score", "--workspace", str(ws), "--run", str(run), "--resamples", "0"]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == mode
    assert stat.S_IMODE(os.stat(run / "scores.json").st_mode) == mode


def test_a_replaced_output_keeps_its_permission_bits(tmp_path):
    target = tmp_path / "scores.json"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    write_text(target, "new\n")
    assert target.read_text() == "new\n" and stat.S_IMODE(os.stat(target).st_mode) == 0o640


# 12. Bad output places are one-line errors, and transcribe finds them before any model runs.

def _unwritable(tmp_path: Path) -> Path:
    """A folder this process cannot write in: /proc on Linux (even for root), else a 0500 folder."""
    if Path("/proc/self").is_dir():
        return Path("/proc")
    folder = tmp_path / "readonly"
    folder.mkdir()
    os.chmod(folder, 0o500)
    return folder


def test_score_out_to_a_folder_an_unwritable_place_or_proc_is_an_error(tmp_path, capsys):
    ws, run = make_workspace(tmp_path)
    (tmp_path / "afile").write_text("x")
    before = snapshot(tmp_path)
    for out, problem in ((tmp_path, "is a folder"), (_unwritable(tmp_path) / "scores.json", "cannot write"),
                         (tmp_path / "afile" / "scores.json", "not a folder"),
                         (Path("/proc/self/status"), "cannot write")):
        assert main(["score", "--workspace", str(ws), "--run", str(run), "--out", str(out)]) == 1
        line = error_line(capsys)
        assert line.startswith("speechkit score: error: ") and problem in line, line
    assert snapshot(tmp_path) == before


def test_transcribe_out_problems_are_found_before_the_transcription(tmp_path, capsys, no_models):
    (tmp_path / "afile").write_text("x")
    before = snapshot(tmp_path)
    for out, problem in ((tmp_path / "afile", "exists and is not a folder"),
                         (_unwritable(tmp_path) / "out", "cannot write"),
                         (tmp_path / "afile" / "sub", "not a folder")):
        assert main(["transcribe", str(SAMPLE), "--out", str(out)]) == 1
        assert problem in error_line(capsys)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "1000000000"])
def test_transcribe_speakers_must_be_a_positive_count(tmp_path, capsys, value, no_models):
    with pytest.raises(SystemExit) as info:
        main(["transcribe", str(SAMPLE), "--out", str(tmp_path / "o"), "--speakers", value])
    assert info.value.code == 2
    assert "--speakers: expected a whole number from 1 to 100" in error_line(capsys)
    assert not (tmp_path / "o").exists()


def test_cuda_on_a_machine_without_a_gpu_is_an_error_not_a_traceback(tmp_path, capsys, monkeypatch, no_models):
    import speechkit.devices

    monkeypatch.setattr(speechkit.devices, "cuda_available", lambda: False)
    ws, _ = make_workspace(tmp_path)
    for argv in (["transcribe", str(SAMPLE), "--out", str(tmp_path / "o"), "--device", "cuda"],
                 ["run", "l1", "--workspace", str(ws), "--out", str(tmp_path / "r"), "--device", "cuda"],
                 ["recipe", "--level", "1", "--workspace", str(ws), "--out", str(tmp_path / "r"), "--device", "cuda"]):
        assert main(argv) == 1
        assert "torch sees no CUDA GPU" in error_line(capsys)
    assert not (tmp_path / "o").exists() and not (tmp_path / "r").exists()


# 13. One run per run folder.

def test_a_second_run_into_a_locked_run_folder_is_refused(tmp_path, capsys, no_models):
    ws, _ = make_workspace(tmp_path)
    out = tmp_path / "run-out"
    out.mkdir()
    (out / ".scores.json.abc.tmp").write_text("a running writer's temporary file")
    with run_folder_lock(out):
        before = snapshot(tmp_path)
        assert main(["run", "l1", "--workspace", str(ws), "--out", str(out)]) == 1
        line = error_line(capsys)
        assert "another run is writing into this run folder" in line and f"(pid {os.getpid()})" in line
        assert snapshot(tmp_path) == before  # the other run's temporary file was not removed
    with run_folder_lock(out):  # released: the next run may take it
        pass


def test_the_lock_is_held_across_processes_and_dropped_when_the_holder_dies(tmp_path):
    out = tmp_path / "run-out"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from speechkit.io.lock import run_folder_lock
        with run_folder_lock({str(out)!r}):
            print("locked", flush=True)
            time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunFolderBusyError, match=rf"pid {holder.pid}"):
            with run_folder_lock(out):
                pass
    finally:
        holder.kill()
        holder.wait()
    with run_folder_lock(out) as lock:  # a killed holder leaves no stale lock
        assert lock == out / LOCK_NAME


def test_run_workspace_takes_the_lock_before_touching_the_folder(tmp_path):
    from speechkit.recipe import load_recipe
    from speechkit.runner import run_workspace

    ws, _ = make_workspace(tmp_path)
    out = tmp_path / "run-out"
    with run_folder_lock(out):
        leftover = out / ".run.json.x.tmp"
        leftover.write_text("in progress")
        with pytest.raises(RunFolderBusyError):
            run_workspace(load_recipe("l1"), load_workspace(ws), out, cascade=object(), progress=False)
        assert leftover.exists()


def test_session_token_is_the_documented_mapping():
    assert session_token("my meeting") == "my_meeting"
    assert session_token(" a \t b\nc ") == "a_b_c"
    assert session_token("plain") == "plain"
    with pytest.raises(ValueError):
        session_token("   ")


def test_check_output_file_leaves_nothing_behind(tmp_path):
    before = snapshot(tmp_path)
    check_output_file(tmp_path / "new" / "deeper" / "scores.json")
    assert snapshot(tmp_path) == before
