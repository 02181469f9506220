"""Every subcommand against a catalogue of bad arguments and inputs (issue 15, and the first round's).

Each case must end with exit code 1 or 2, exactly one `error:` line on stderr (argparse adds its
usage lines before it), no traceback, and no file created, changed or removed anywhere in the
temporary tree (a snapshot before and after; the command runs from a folder four levels down so
that an id like ``../../../x`` would land inside the snapshot). Cases call ``speechkit.cli.main``
in-process; one runs the installed ``speechkit`` script to prove the real exit path.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from reliability_helpers import make_workspace, manifest, snapshot, write_manifest_text

from speechkit.cli import build_parser, main
from speechkit.io.lock import run_folder_lock

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / ".." / "shared" / "realdata" / "pyannote-sample"


@dataclass
class Env:
    """The temporary tree of one case: a valid workspace and run folder, and places to go wrong."""

    root: Path
    work: Path  # the current folder of the command
    ws: Path
    run: Path
    afile: Path  # an existing regular file
    unwritable: Path  # a folder this process cannot create files in
    extra: dict = field(default_factory=dict)

    def variant(self, folder: str, text: str | None = None, **overrides) -> Path:
        """A copy of the workspace with another manifest (``text``, or ``overrides`` of its keys)."""
        ws = self.root / folder
        shutil.copytree(self.ws, ws)
        write_manifest_text(ws, text if text is not None else yaml.safe_dump(manifest(**overrides), sort_keys=False))
        return ws

    def file(self, name: str, data: bytes | str) -> Path:
        path = self.root / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
        return path


@dataclass
class Case:
    id: str
    argv: Callable[[Env], list]
    expect: str | None = None  # a substring of the error line
    marks: tuple = ()


def _meetings(**first) -> list[dict]:
    meetings = manifest()["meetings"]
    meetings[0] = {**meetings[0], **first}
    return meetings


def _bomb() -> str:
    lines = ["format: speechkit-workspace/1", "name: bomb", "people: [{id: p1, name: A}]", "metadata:",
             '  x0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"  x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines + ["terms: {jargon: *a9}", ""])


def _recipe(env: Env, name: str, body: str) -> Path:
    return env.file(name, body)


RECIPE_STAGES = "stages: {vad: {backend: silero}, asr: {backend: whisper, model: tiny.en}, diarize: {}, identify: {}}\n"


def _run_recipe(body: str) -> Callable[[Env], list[str]]:
    """``run`` on a recipe file holding ``body``, with a level and the stages unless ``body`` gives them
    (issue 26: values that loaded and crashed the run later)."""
    def argv(env: Env) -> list[str]:
        text = ("" if body.startswith("level:") else "level: 1\n") + ("" if "stages:" in body else RECIPE_STAGES)
        return ["run", str(_recipe(env, "bad.yaml", text + body)), "--workspace", str(env.ws),
                "--out", str(env.root / "r-out")]
    return argv


def _pair(env: Env, *extra: str) -> list[str]:
    return ["score", "--ref", str(env.ws / "m1.ref.json"), "--hyp", str(env.run / "m1.json"), *extra]


def _workspace(env: Env, ws: Path | None = None, *extra: str) -> list[str]:
    return ["score", "--workspace", str(ws or env.ws), "--run", str(env.run), *extra]


def _transcribe(env: Env, *extra: str, audio: Path | None = None) -> list[str]:
    return ["transcribe", str(audio or SAMPLE / "sample.wav"), "--out", str(env.root / "t-out"), *extra]


def _run(env: Env, ws: Path | None = None, *extra: str) -> list[str]:
    return ["run", "l1", "--workspace", str(ws or env.ws), "--out", str(env.root / "r-out"), *extra]


def _lock_held(env: Env) -> list[str]:
    out = env.root / "busy"
    env.extra["lock"] = run_folder_lock(out)
    env.extra["lock"].__enter__()
    return ["run", "l1", "--workspace", str(env.ws), "--out", str(out)]


def _fifo(env: Env, name: str = "fifo") -> Path:
    os.mkfifo(env.root / name)
    return env.root / name


def _symlink(env: Env) -> Path:
    os.symlink(env.afile, env.root / "link.json")
    return env.root / "link.json"


def _dangling(env: Env) -> Path:
    os.symlink(env.root / "nowhere.json", env.root / "dangling.json")
    return env.root / "dangling.json"


def _ref_is_a_folder(env: Env) -> list[str]:
    (env.root / "x.stm").mkdir()
    return ["score", "--ref", str(env.root / "x.stm"), "--hyp", str(env.run / "m1.json")]


def _hypothesis_missing(env: Env) -> list[str]:
    (env.run / "m2.json").unlink()
    return _workspace(env)


def _two_sessions(env: Env) -> list[str]:
    (env.run / "m1.json").write_text(
        '[{"session_id": "a", "speaker": "x", "start_time": 0, "end_time": 1, "words": "hi"},'
        ' {"session_id": "b", "speaker": "x", "start_time": 0, "end_time": 1, "words": "hi"}]')
    return _workspace(env)


def _not_utf8(env: Env) -> list[str]:
    ws = env.variant("v", "")
    (ws / "workspace.yaml").write_bytes(b"\xff\xfe\x00name")
    return _workspace(env, ws)


def _taken_port(env: Env) -> int:
    """A port of 127.0.0.1 a socket of this test listens on (closed with the test's tree)."""
    import socket
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    env.extra["socket"] = sock
    return sock.getsockname()[1]


def _transcribe_into_a_symlink(env: Env) -> list[str]:
    os.symlink(env.afile, env.root / "sample.stm")
    return ["transcribe", str(SAMPLE / "sample.wav"), "--out", str(env.root)]


def _scored(env: Env) -> str:
    """The run folder, with the scores.json that `compare` reads."""
    from speechkit.scoring import ScoreOptions, score_workspace

    score_workspace(env.ws, env.run, ScoreOptions(resamples=0), out=env.run / "scores.json")
    return str(env.run)


def _term(written: str) -> Callable[[Env], list[str]]:
    return lambda e: _workspace(e, e.variant("v", yaml.safe_dump(manifest(), sort_keys=False)
                                             .replace("- 12%", f"- {written}")))


API_KEY_RECIPE = ("name: k\nlevel: 1\napi_key: sk-0123456789abcdef\nstages: {vad: {backend: silero}, "
                  "asr: {backend: whisper, model: tiny.en}, diarize: {}, identify: {}}\n")
API_KEY_STAGE = ("name: k\nlevel: 1\nstages: {vad: {backend: silero}, asr: {backend: whisper, model: tiny.en}, "
                 "diarize: {}, identify: {}, correct: {backend: llm, api_key: sk-0123456789abcdef}}\n")


def _subcommands() -> set[str]:
    parser = build_parser()
    return set(next(a for a in parser._actions if a.dest == "command").choices)


NEEDS_LLM = pytest.mark.skipif("llm" not in _subcommands(), reason="no `speechkit llm` in this build")


# issue 48: options and files


def _uem(env: Env, text: str | bytes) -> list[str]:
    return _pair(env, "--uem", str(env.file("x.uem", text)), "--der-from-segments")


def _finished(env: Env, folder: Path | None = None) -> Path:
    """``folder`` (default: the run folder) holding a run.json, as a finished run's does."""
    folder = folder or env.run
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(json.dumps({"recipe": {"level": 1}, "workspace": {"root": str(env.ws)}}))
    return folder


def _other_workspace_scored(env: Env) -> str:
    """A run of another workspace (a copy named ``other``), scored."""
    from speechkit.scoring import ScoreOptions, score_workspace

    run = env.root / "other-run"
    shutil.copytree(env.run, run)
    score_workspace(env.variant("other-ws", name="other"), run, ScoreOptions(resamples=0), out=run / "scores.json")
    return str(run)


def _manifest_link_out(env: Env) -> Path:
    """A workspace folder whose workspace.yaml is a link to another workspace's manifest."""
    ws = env.root / "linked"
    ws.mkdir()
    for name in ("audio.wav", "m1.ref.json", "m2.ref.json"):
        shutil.copy(env.ws / name, ws / name)
    os.symlink(env.ws / "workspace.yaml", ws / "workspace.yaml")
    return ws


def _recipe_bomb(env: Env) -> list[str]:
    lines = ["level: 1", "name: bomb", 'x0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return ["run", str(_recipe(env, "bomb.yaml", "\n".join(lines + ["stages: {vad: *a9}", ""]))), "--workspace",
            str(env.ws), "--out", str(env.root / "r-out")]


def _export(env: Env, out: Path, *extra: str) -> list[str]:
    return ["export", "inputs", str(env.ws), "-L", "1", str(out), *extra]


def _export_meeting_folder_a_link(env: Env) -> list[str]:
    (env.root / "x").mkdir()
    (env.root / "elsewhere").mkdir()
    os.symlink(env.root / "elsewhere", env.root / "x" / "m1")
    return _export(env, env.root / "x")


def _export_meetings_txt_a_link(env: Env) -> list[str]:
    (env.root / "x").mkdir()
    os.symlink(env.afile, env.root / "x" / "meetings.txt")
    return _export(env, env.root / "x")


def _export_link_to_the_workspace(env: Env) -> list[str]:
    os.symlink(env.ws, env.root / "ws-link")
    return _export(env, env.root / "ws-link" / "inputs")


def _export_onto_the_workspace(env: Env) -> list[str]:
    """OUT/m1 is the workspace itself: the export would write its inputs into it."""
    holder = env.root / "holder"
    shutil.copytree(env.ws, holder / "m1")
    return ["export", "inputs", str(holder / "m1"), "-L", "1", str(holder)]


def _set(command: str, env: Env, *settings: str) -> list[str]:
    head = {"run": ["run", "l1", "--workspace", str(env.ws), "--out", str(env.root / "r-out")],
            "recipe": ["recipe", "-L", "1", "--workspace", str(env.ws), "--out", str(env.root / "r-out")],
            "serve": ["serve", "--port", "0"]}[command]
    return [*head, *(a for setting in settings for a in ("--set", setting))]


CASES = [
    # score: outputs (items 3, 12)
    Case("score-out-folder", lambda e: _workspace(e, None, "--out", str(e.root)), "is a folder"),
    Case("score-out-unwritable", lambda e: _workspace(e, None, "--out", str(e.unwritable / "s.json")),
         "cannot write"),
    Case("score-out-proc", lambda e: _pair(e, "--out", "/proc/self/status"), "cannot write"),
    Case("score-out-under-a-file", lambda e: _pair(e, "--out", str(e.afile / "s.json")), "not a folder"),
    Case("score-out-fifo", lambda e: _pair(e, "--out", str(_fifo(e))), "is a FIFO"),
    Case("score-out-symlink", lambda e: _pair(e, "--out", str(_symlink(e))), "is a symbolic link"),
    Case("score-out-dangling-symlink", lambda e: _pair(e, "--out", str(_dangling(e))), "is a symbolic link"),
    Case("score-out-is-the-reference", lambda e: _pair(e, "--out", str(e.ws / "m1.ref.json")), "the reference"),
    Case("score-out-is-the-hypothesis", lambda e: _pair(e, "--out", str(e.run / "m1.json")), "the hypothesis"),
    Case("score-out-is-a-run-hypothesis", lambda e: _workspace(e, None, "--out", str(e.run / "m2.json")),
         "the hypothesis of meeting m2"),
    Case("score-out-is-the-manifest", lambda e: _workspace(e, None, "--out", str(e.ws / "workspace.yaml")),
         "the workspace manifest"),
    # score: options (item 10)
    Case("score-resamples-huge", lambda e: _pair(e, "--resamples", "1000000000"), "--resamples"),
    Case("score-resamples-1e23", lambda e: _pair(e, "--resamples", "1e23"), "--resamples"),
    Case("score-resamples-negative", lambda e: _pair(e, "--resamples=-1"), "--resamples"),
    Case("score-seed-negative", lambda e: _pair(e, "--seed=-1"), "--seed"),
    Case("score-seed-huge", lambda e: _pair(e, "--seed", "9" * 30), "--seed"),
    Case("score-collar-nan", lambda e: _pair(e, "--collar", "nan"), "--collar"),
    Case("score-collar-negative", lambda e: _pair(e, "--collar=-1"), "--collar"),
    Case("score-tcp-collar-inf", lambda e: _pair(e, "--tcp-collar", "inf"), "--tcp-collar"),
    # score: modes and files (first round)
    Case("score-no-mode", lambda e: ["score"], "either --workspace and --run"),
    Case("score-both-modes", lambda e: [*_pair(e), "--workspace", str(e.ws)], "either --workspace and --run"),
    Case("score-ref-only", lambda e: ["score", "--ref", str(e.ws / "m1.ref.json")], "needs both --ref and --hyp"),
    Case("score-session-in-workspace-mode", lambda e: _workspace(e, None, "--session", "m1"), "--session"),
    Case("score-ref-missing", lambda e: ["score", "--ref", str(e.root / "nope.stm"), "--hyp", str(e.run / "m1.json")],
         "file not found"),
    Case("score-ref-is-a-folder", _ref_is_a_folder, "directory"),
    Case("score-ref-unknown-format", lambda e: ["score", "--ref", str(e.afile), "--hyp", str(e.run / "m1.json")],
         "unknown transcript format"),
    Case("score-ref-garbage-stm", lambda e: ["score", "--ref", str(e.file("g.stm", os.urandom(300))), "--hyp",
                                             str(e.run / "m1.json")], "g.stm"),
    Case("score-hyp-invalid-json", lambda e: ["score", "--ref", str(e.ws / "m1.ref.json"), "--hyp",
                                              str(e.file("bad.json", "[{"))], "invalid JSON"),
    Case("score-hyp-is-a-fifo", lambda e: ["score", "--ref", str(e.ws / "m1.ref.json"), "--hyp",
                                           str(_fifo(e, "h.json"))], "not a regular file", (pytest.mark.timeout(60),)),
    Case("score-ref-is-a-fifo-stm", lambda e: ["score", "--ref", str(_fifo(e, "r.stm")), "--hyp",
                                               str(e.run / "m1.json")], "not a regular file",
         (pytest.mark.timeout(60),)),
    Case("score-rttm-with-a-space-in-the-id", lambda e: [
        "score", "--ref", str(e.file("sp.rttm", "SPEAKER my meeting 1 0.0 1.5 <NA> <NA> p1 <NA> <NA>\n")),
        "--hyp", str(e.run / "m1.json")], "hold a space"),
    Case("score-stm-with-a-space-in-the-id", lambda e: [
        "score", "--ref", str(e.file("sp.stm", "my meeting 1 p1 0.0 1.5 hello\n")),
        "--hyp", str(e.run / "m1.json")], "hold a space"),
    Case("score-session-missing", lambda e: _pair(e, "--session", "nope"), "no session 'nope'"),
    Case("score-run-missing", lambda e: ["score", "--workspace", str(e.ws), "--run", str(e.root / "nope")],
         "run folder not found"),
    Case("score-hypothesis-missing", _hypothesis_missing, "no hypothesis for meeting 'm2'"),
    Case("score-several-sessions-none-the-meetings", _two_sessions, "no session 'm1'"),
    # manifests (items 1, 2, 8, 9, 11 and the first round)
    Case("manifest-meeting-id-escapes", lambda e: _workspace(e, e.variant("v", meetings=_meetings(id="../../../x"))),
         "not a safe identifier"),
    Case("manifest-meeting-id-absolute", lambda e: _workspace(e, e.variant("v", meetings=_meetings(
        id=str(e.root / "abs-escape")))), "not a safe identifier"),
    Case("manifest-person-id-escapes", lambda e: _workspace(e, e.variant("v", people=[
        {"id": "../p1", "name": "Robert Smith"}, {"id": "p2", "name": "Alice Jones"}])), "not a safe identifier"),
    Case("manifest-name-escapes", lambda e: _workspace(e, e.variant("v", name="../../escaped")),
         "name: '../../escaped' is not a safe identifier"),
    Case("manifest-term-8:30", _term("8:30"), 'quote the term: "8:30"'),
    Case("manifest-term-1.50", _term("1.50"), 'quote the term: "1.50"'),
    Case("manifest-term-010", _term("010"), 'quote the term: "010"'),
    Case("manifest-duplicate-key", lambda e: _workspace(e, e.variant("v", yaml.safe_dump(manifest(), sort_keys=False)
                                                                     + "meetings: []\n")), "duplicate key 'meetings'"),
    Case("manifest-mixed-time-zones", lambda e: _workspace(e, e.variant("v", meetings=_meetings(
        date="2026-03-02T09:00+01:00"))), "time zone"),
    Case("manifest-alias-bomb", lambda e: _workspace(e, e.variant("v", _bomb())), "alias bomb"),
    Case("manifest-missing", lambda e: _workspace(e, e.root / "nowhere"), "workspace manifest not found"),
    Case("manifest-invalid-yaml", lambda e: _workspace(e, e.variant("v", "name: [unclosed\n")), "invalid YAML"),
    Case("manifest-not-utf8", _not_utf8, "not UTF-8"),
    Case("manifest-path-leaves", lambda e: _workspace(e, e.variant("v", meetings=_meetings(audio="../../etc/passwd"))),
         "leaves the workspace folder"),
    Case("manifest-absolute-path", lambda e: _workspace(e, e.variant("v", meetings=_meetings(audio="/etc/passwd"))),
         "absolute path"),
    Case("manifest-duplicate-meeting", lambda e: _workspace(e, e.variant("v", meetings=_meetings(id="m2"))),
         "duplicate id 'm2'"),
    Case("manifest-unknown-attendee", lambda e: _workspace(e, e.variant("v", meetings=_meetings(attendees=["p9"]))),
         "unknown person id 'p9'"),
    Case("manifest-out-of-order", lambda e: _workspace(e, e.variant("v", meetings=_meetings(date="2026-03-09"))),
         "calendar order"),
    # transcribe (items 7, 12; first round's audio); all fail before any model runs
    Case("transcribe-out-is-a-file", lambda e: ["transcribe", str(SAMPLE / "sample.wav"), "--out", str(e.afile)],
         "exists and is not a folder"),
    Case("transcribe-out-unwritable", lambda e: ["transcribe", str(SAMPLE / "sample.wav"), "--out",
                                                 str(e.unwritable / "o")], "cannot write"),
    Case("transcribe-out-proc", lambda e: ["transcribe", str(SAMPLE / "sample.wav"), "--out", "/proc/self/o"],
         "cannot write"),
    Case("transcribe-output-is-a-symlink", _transcribe_into_a_symlink, "is a symbolic link"),
    Case("transcribe-speakers-0", lambda e: _transcribe(e, "--speakers", "0"), "--speakers"),
    Case("transcribe-speakers-negative", lambda e: _transcribe(e, "--speakers=-2"), "--speakers"),
    Case("transcribe-channel-negative", lambda e: _transcribe(e, "--channel=-1"), "--channel"),
    Case("transcribe-device-bogus", lambda e: _transcribe(e, "--device", "tpu"), "--device"),
    Case("transcribe-enroll-malformed", lambda e: _transcribe(e, "--enroll", "nobody"), "NAME=CLIP"),
    Case("transcribe-enroll-missing", lambda e: _transcribe(e, "--enroll", f"Ann={e.root / 'nope.wav'}"),
         "not found"),
    Case("transcribe-recipe-missing", lambda e: _transcribe(e, "--recipe", str(e.root / "nope.yaml")),
         "recipe not found"),
    Case("transcribe-audio-missing", lambda e: _transcribe(e, audio=e.root / "nope.wav"), "file not found"),
    Case("transcribe-audio-is-a-folder", lambda e: _transcribe(e, audio=e.ws), "cannot read"),
    Case("transcribe-audio-empty", lambda e: _transcribe(e, audio=e.file("empty.wav", b"")), "empty file"),
    Case("transcribe-audio-random-bytes", lambda e: _transcribe(e, audio=e.file("noise.wav", os.urandom(4000))),
         "noise.wav"),
    Case("transcribe-recipe-api-key", lambda e: _transcribe(e, "--recipe", str(_recipe(e, "k.yaml", API_KEY_RECIPE))),
         "SPEECHKIT_LLM_API_KEY"),
    Case("transcribe-recipe-stage-api-key", lambda e: _transcribe(
        e, "--recipe", str(_recipe(e, "k.yaml", API_KEY_STAGE))), "SPEECHKIT_LLM_API_KEY"),
    # serve: all fail before it listens
    Case("serve-port-out-of-range", lambda e: ["serve", "--port", "70000"], "--port"),
    Case("serve-recipe-missing", lambda e: ["serve", "--recipe", str(e.root / "nope.yaml")], "recipe not found"),
    Case("serve-set-unknown-option", lambda e: ["serve", "--port", "0", "--set", "asr.beam_sise=2"], "beam_size"),
    Case("serve-port-taken", lambda e: ["serve", "--port", str(_taken_port(e))], "cannot listen"),
    # run and recipe (items 1, 2, 12, 13)
    Case("run-escaping-meeting-id", lambda e: _run(e, e.variant("v", meetings=_meetings(id="../../../x"))),
         "not a safe identifier"),
    Case("run-escaping-name-default-out", lambda e: ["run", "l1", "--workspace", str(e.variant(
        "v", name="../../escaped"))], "not a safe identifier"),
    Case("run-out-is-a-file", lambda e: ["run", "l1", "--workspace", str(e.ws), "--out", str(e.afile)],
         "exists and is not a folder"),
    Case("run-out-unwritable", lambda e: ["run", "l1", "--workspace", str(e.ws), "--out", str(e.unwritable / "r")],
         "cannot write"),
    Case("run-folder-locked", _lock_held, "another run is writing into this run folder"),
    Case("run-recipe-missing", lambda e: ["run", str(e.root / "nope.yaml"), "--workspace", str(e.ws)],
         "recipe not found"),
    Case("run-workspace-missing", lambda e: _run(e, e.root / "nowhere"), "workspace manifest not found"),
    Case("run-executor-bogus", lambda e: _run(e, None, "--executor", "slurm"), "--executor"),
    Case("run-address-without-ray", lambda e: _run(e, None, "--address", "head:6379"), "--executor ray"),
    Case("run-recipe-api-key", lambda e: ["run", str(_recipe(e, "k.yaml", API_KEY_STAGE)), "--workspace", str(e.ws),
                                          "--out", str(e.root / "r-out")], "SPEECHKIT_LLM_API_KEY"),
    Case("run-recipe-nan-threshold", _run_recipe(RECIPE_STAGES.replace("identify: {}", "identify: {threshold: .nan}")),
         "stages.identify.threshold: expected a finite number"),
    Case("run-recipe-chunk-huge", _run_recipe(
        "stages: {vad: {}, asr: {backend: ctc, chunk_s: 1.0e+308}, diarize: {}}\n"),
         "stages.asr.chunk_s: expected a number in (0, 600], got 1e+308"),
    Case("run-recipe-cpu-threads-negative", _run_recipe(RECIPE_STAGES.replace("tiny.en", "tiny.en, cpu_threads: -1")),
         "stages.asr.cpu_threads"),
    Case("run-recipe-clustering-unknown", _run_recipe(RECIPE_STAGES.replace("diarize: {}", "diarize: {clustering: x}")),
         "stages.diarize.clustering: expected one of"),
    Case("run-recipe-context-negative", _run_recipe("context: {hotwords: -3}\n"), "context.hotwords"),
    Case("run-recipe-context-not-numbers", _run_recipe("context: {prompt_tokens: x, hotwords: [1]}\n"),
         "context.prompt_tokens: expected an integer"),
    Case("run-recipe-context-inf", _run_recipe("context: {prompt_tokens: .inf}\n"), "context.prompt_tokens"),
    Case("run-recipe-context-typo", _run_recipe("context: {hotword: 3}\n"), "did you mean hotwords?"),
    Case("run-recipe-resources-nan", _run_recipe("resources: {asr: {num_cpus: .nan}}\n"), "resources.asr.num_cpus"),
    Case("run-recipe-level-true", _run_recipe("level: true\n"), "level: expected 1, 2 or 3, got True"),
    Case("run-recipe-level-float", _run_recipe("level: 2.0\n"), "level: expected 1, 2 or 3, got 2.0"),
    Case("run-recipe-nested-deeply", _run_recipe("context: " + "[" * 50000 + "]" * 50000 + "\n"),
         "values nested too deeply"),
    Case("run-recipe-duplicate-key", _run_recipe("context: {}\ncontext: {hotwords: 3}\n"), "duplicate key 'context'"),
    Case("run-recipe-is-a-fifo", lambda e: ["run", str(_fifo(e, "r.yaml")), "--workspace", str(e.ws)],
         "not a regular file", (pytest.mark.timeout(60),)),
    Case("run-recipe-dev-zero", lambda e: ["run", "/dev/zero", "--workspace", str(e.ws)], "not a regular file",
         (pytest.mark.timeout(60),)),
    Case("transcribe-recipe-nan-vad", lambda e: _transcribe(e, "--recipe", str(_recipe(
        e, "n.yaml", RECIPE_STAGES.replace("silero}", "silero, threshold: .nan}")))), "stages.vad.threshold"),
    Case("recipe-level-bogus", lambda e: ["recipe", "--level", "5", "--workspace", str(e.ws)], "--level"),
    Case("recipe-workspace-missing", lambda e: ["recipe", "--workspace", str(e.root / "nowhere")],
         "workspace manifest not found"),
    Case("recipe-out-is-a-file", lambda e: ["recipe", "--level", "1", "--workspace", str(e.ws), "--out", str(e.afile)],
         "exists and is not a folder"),
    Case("recipe-ablations-one-level", lambda e: ["recipe", "--level", "3", "--ablations", "--workspace", str(e.ws),
                                                  "--out", str(e.root / "a-out")], "--ablations: needs --level all"),
    Case("recipe-ablations-ablated-l3", lambda e: ["recipe", "--level", "all", "--ablations", "--set",
                                                   "context.ablate=text", "--workspace", str(e.ws),
                                                   "--out", str(e.root / "a-out")], "context.ablate is set"),
    Case("recipe-ablate-bogus", lambda e: ["recipe", "--level", "3", "--set", "context.ablate=slides", "--workspace",
                                           str(e.ws)], "context.ablate: expected one of none, enrollments, text"),
    Case("recipe-term-8:30", lambda e: ["recipe", "--workspace", str(e.variant(
        "v", yaml.safe_dump(manifest(), sort_keys=False).replace("- 12%", "- 8:30")))], "quote the term"),
    # the other subcommands
    Case("synth-meetings-0", lambda e: ["synth", "--out", str(e.root / "s"), "--meetings", "0"], "--meetings"),
    Case("synth-people-1", lambda e: ["synth", "--out", str(e.root / "s"), "--people", "1"], "--people"),
    Case("synth-seed-not-a-number", lambda e: ["synth", "--out", str(e.root / "s"), "--seed", "x"], "--seed"),
    Case("synth-out-is-a-file", lambda e: ["synth", "--out", str(e.afile), "--meetings", "1", "--people", "2",
                                           "--minutes", "0.05"], "afile"),
    Case("models-stage-bogus", lambda e: ["models", "list", "--stage", "bogus"], "--stage"),
    Case("models-fetch-unknown", lambda e: ["models", "fetch", "no-such-model"], "no-such-model"),
    Case("doctor-unknown-option", lambda e: ["doctor", "--bogus"], "unrecognized arguments"),
    Case("import-folder-missing", lambda e: ["import", "folder", str(e.root / "nope"), "--out", str(e.root / "i")],
         "not a folder"),
    Case("import-lhotse-nothing", lambda e: ["import", "lhotse", "--out", str(e.root / "i")], "--recordings"),
    Case("export-workspace-missing", lambda e: ["export", "lhotse", "--workspace", str(e.root / "nowhere"), "--out",
                                                str(e.root / "x")], "workspace manifest not found"),
    Case("export-out-is-a-file", lambda e: ["export", "lhotse", "--workspace", str(e.ws), "--out", str(e.afile)],
         "not a folder"),
    Case("export-inputs-no-level", lambda e: ["export", "inputs", str(e.ws), str(e.root / "x")], "--level"),
    Case("export-inputs-meeting-unknown", lambda e: ["export", "inputs", str(e.ws), "-L", "1", str(e.root / "x"),
                                                     "--meeting", "nope"], "no scored meeting 'nope'"),
    Case("export-inputs-earlier-outputs-missing", lambda e: [
        "export", "inputs", str(e.ws), "-L", "2", str(e.root / "x"), "--outputs", str(e.root / "y"),
        "--meeting", "m2"], "needs the system's outputs of the earlier meeting 'm1'"),
    Case("export-inputs-out-is-a-file", lambda e: ["export", "inputs", str(e.ws), "-L", "1", str(e.afile)],
         "not a folder"),
    Case("recipe-system-command-for-a-cascade", lambda e: ["recipe", "-L", "1", "--workspace", str(e.ws),
                                                           "--system-command", "true"], "runs no program"),
    Case("recipe-command-without-program", lambda e: ["recipe", "--asr", "command", "-L", "1", "--workspace",
                                                      str(e.ws)], "none given"),
    Case("recipe-system-command-unbalanced", lambda e: ["recipe", "--asr", "command", "--workspace", str(e.ws),
                                                        "--system-command", "python 'x"], "--system-command"),
    Case("recipe-system-program-set", lambda e: ["recipe", "--asr", "command", "-L", "1", "--workspace", str(e.ws),
                                                 "--system-command", "true", "--set", "system.program=[x]"],
         "given only on the command line"),
    Case("compare-one-run", lambda e: ["compare", str(e.run)], "at least two runs"),
    Case("compare-resamples-huge", lambda e: ["compare", str(e.run), str(e.run), "--resamples", "1000000000"],
         "--resamples"),
    Case("compare-seed-negative", lambda e: ["compare", str(e.run), str(e.run), "--seed=-1"], "--seed"),
    Case("compare-run-missing", lambda e: ["compare", _scored(e), str(e.root / "nowhere")], "nowhere"),
    Case("compare-out-is-a-file", lambda e: ["compare", _scored(e), str(e.run), "--out", str(e.afile)],
         "not a folder"),
    Case("llm-action-bogus", lambda e: ["llm", "bogus"], "invalid choice", (NEEDS_LLM,)),
    Case("llm-serve-unknown-model", lambda e: ["llm", "serve", "no-such-model"], "no-such-model", (NEEDS_LLM,)),
    Case("step-unknown", lambda e: ["step", "oracle", str(e.run)], "unknown step 'oracle'; the steps: qa,"),
    Case("step-not-a-run", lambda e: ["step", "qa", str(e.run)], "not a run folder"),
    Case("step-unknown-option", lambda e: ["step", "qa", str(e.run), "--set", "depth=2"], "qa.depth: unknown option"),
    Case("step-run-missing", lambda e: ["step", "pace", str(e.root / "nowhere")], "unknown step 'pace'"),
    Case("judge-not-a-run", lambda e: ["judge", str(e.run)], "not a run folder"),
    Case("judge-run-missing", lambda e: ["judge", str(e.root / "nowhere")], "run folder not found"),
    Case("judge-timeout-zero", lambda e: ["judge", str(e.run), "--timeout-s", "0"], "--timeout-s"),
    Case("qa-run-missing", lambda e: ["qa", str(e.root / "nowhere")], "run folder not found"),
    Case("qa-no-workspace", lambda e: ["qa", str(e.run)], "name the run's workspace with --workspace"),
    Case("qa-unknown-option", lambda e: ["qa", str(e.run), "--workspace", str(e.ws), "--set", "depth=2"],
         "qa.depth: unknown option"),
    Case("qa-out-is-a-folder", lambda e: ["qa", str(e.run), "--workspace", str(e.ws), "--out", str(e.run)],
         "is a folder"),
    Case("align-not-a-run", lambda e: ["align", str(e.run)], "not a run folder"),
    Case("align-threshold-above-one", lambda e: ["align", str(e.run), "--threshold", "1.5"], "--threshold"),
    Case("probe-not-a-run", lambda e: ["probe", str(e.run)], "not a run folder"),
    Case("probe-run-missing", lambda e: ["probe", str(e.root / "nowhere")], "run folder not found"),
    Case("probe-iterations-zero", lambda e: ["probe", str(e.run), "--iterations", "0"], "--iterations"),
    # issue 48: options and files: speaker counts (every command that takes them)
    Case("transcribe-min-speakers-above-max", lambda e: _transcribe(e, "--min-speakers", "5", "--max-speakers", "2"),
         "need 1 <= min_speakers <= max_speakers, got 5, 2"),
    Case("transcribe-speakers-above-max", lambda e: _transcribe(e, "--speakers", "5", "--max-speakers", "2"),
         "--speakers: 5 speakers contradicts --max-speakers 2"),
    Case("transcribe-speakers-below-min", lambda e: _transcribe(e, "--speakers", "2", "--min-speakers", "3"),
         "--speakers: 2 speakers contradicts --min-speakers 3"),
    Case("transcribe-max-speakers-0", lambda e: _transcribe(e, "--max-speakers", "0"), "--max-speakers"),
    Case("transcribe-min-speakers-negative", lambda e: _transcribe(e, "--min-speakers=-1"), "--min-speakers"),
    Case("transcribe-max-speakers-huge", lambda e: _transcribe(e, "--max-speakers", "100000"),
         "stages.diarize.max_speakers: expected an integer in [1, 1000], got 100000"),
    Case("transcribe-speakers-huge", lambda e: _transcribe(e, "--speakers", "9" * 30), "--speakers"),
    Case("run-set-min-speakers-above-max", lambda e: _set("run", e, "diarize.min_speakers=5",
                                                          "diarize.max_speakers=2"), "need 1 <= min_speakers"),
    Case("run-set-max-speakers-huge", lambda e: _set("run", e, "diarize.max_speakers=" + "9" * 30),
         "stages.diarize.max_speakers: expected an integer in [1, 1000]"),
    Case("recipe-set-min-speakers-0", lambda e: _set("recipe", e, "diarize.min_speakers=0"),
         "stages.diarize.min_speakers: expected an integer in [1, 1000], got 0"),
    Case("recipe-set-num-speakers-negative", lambda e: _set("recipe", e, "diarize.num_speakers=-3"),
         "stages.diarize.num_speakers"),
    Case("serve-set-min-speakers-above-max", lambda e: _set("serve", e, "diarize.min_speakers=5",
                                                            "diarize.max_speakers=2"), "need 1 <= min_speakers"),
    # UEM files (score --uem)
    Case("score-uem-nan", lambda e: _uem(e, "m1 1 nan 5\n"), "x.uem:1: start: expected a finite time >= 0"),
    Case("score-uem-negative", lambda e: _uem(e, "m1 1 -5 5\n"), "x.uem:1: start: expected a finite time >= 0"),
    Case("score-uem-infinite-end", lambda e: _uem(e, "m1 1 0 1e400\n"), "x.uem:1: end: expected a finite time"),
    Case("score-uem-end-before-start", lambda e: _uem(e, "m1 1 9 3\n"), "x.uem:1: the end 3 is not after the start 9"),
    Case("score-uem-hex-time", lambda e: _uem(e, "m1 1 0x10 20\n"), "x.uem:1: start: expected a number of seconds"),
    Case("score-uem-three-fields", lambda e: _uem(e, "m1 1 0\n"), "x.uem:1: expected <file> <channel> <start> <end>"),
    Case("score-uem-comments-only", lambda e: _uem(e, ";; nothing\n"), "x.uem: no scored region"),
    Case("score-uem-other-session", lambda e: _uem(e, "m9 1 0 5\n"), "no scored region for session 'm1'"),
    Case("score-uem-random-bytes", lambda e: _uem(e, os.urandom(3000)), "x.uem"),
    Case("score-uem-missing", lambda e: _pair(e, "--uem", str(e.root / "nope.uem")), "file not found"),
    Case("score-uem-fifo", lambda e: _pair(e, "--uem", str(_fifo(e, "f.uem"))), "not a regular file",
         (pytest.mark.timeout(60),)),
    # --cache-dir
    Case("run-cache-dir-a-file", lambda e: _run(e, None, "--cache-dir", str(e.afile)), "exists and is not a folder"),
    Case("run-cache-dir-unwritable", lambda e: _run(e, None, "--cache-dir", str(e.unwritable / "c")), "cannot write"),
    Case("run-cache-dir-another-run-folder", lambda e: _run(e, None, "--cache-dir", str(_finished(e))),
         "is a run folder; give a stage cache of its own"),
    Case("run-cache-dir-inside-another-run-folder", lambda e: _run(
        e, None, "--cache-dir", str(_finished(e) / "transcripts")), "lies inside the run folder"),
    Case("run-cache-dir-is-the-run-folder", lambda e: _run(e, None, "--cache-dir", str(e.root / "r-out")),
         "r-out: is a run folder"),
    Case("recipe-cache-dir-another-run-folder", lambda e: [
        "recipe", "-L", "1", "--workspace", str(e.ws), "--out", str(e.root / "a-out"), "--cache-dir",
        str(_finished(e))], "is a run folder"),
    Case("judge-cache-dir-a-file", lambda e: ["judge", str(_finished(e)), "--cache-dir", str(e.afile)],
         "exists and is not a folder"),
    # compare, synth, YAML, workspace.yaml
    Case("compare-two-workspaces", lambda e: ["compare", _scored(e), _other_workspace_scored(e)],
         "a paired comparison needs runs of one workspace"),
    Case("synth-minutes-0", lambda e: ["synth", "--out", str(e.root / "s"), "--minutes", "0"], "--minutes"),
    Case("synth-minutes-31", lambda e: ["synth", "--out", str(e.root / "s"), "--minutes", "31"],
         "expected minutes more than 0 and at most 30"),
    Case("synth-minutes-nan", lambda e: ["synth", "--out", str(e.root / "s"), "--minutes", "nan"], "--minutes"),
    Case("synth-phrasing-bogus", lambda e: ["synth", "--out", str(e.root / "s"), "--phrasing", "bogus"],
         "invalid choice: 'bogus'"),
    Case("run-recipe-alias-bomb", _recipe_bomb, "aliases expand the document beyond 1,000,000 values"),
    Case("manifest-link-out-of-the-workspace", lambda e: _workspace(e, _manifest_link_out(e)),
         "workspace.yaml: leaves the workspace folder"),
    # export inputs
    Case("export-inputs-into-the-workspace", lambda e: _export(e, e.ws / "inputs"), "lies inside the workspace"),
    Case("export-inputs-into-a-link-to-the-workspace", _export_link_to_the_workspace, "lies inside the workspace"),
    Case("export-inputs-onto-the-workspace", _export_onto_the_workspace, "holds the workspace"),
    Case("export-inputs-dangling-link", lambda e: _export(e, _dangling(e)), "is a symbolic link to nothing"),
    Case("export-inputs-unwritable", lambda e: _export(e, e.unwritable / "x"), "cannot write"),
    Case("export-inputs-meeting-folder-a-link", _export_meeting_folder_a_link,
         "m1: is a symbolic link; speechkit writes the meeting's inputs through no link"),
    Case("export-inputs-meetings-txt-a-link", _export_meetings_txt_a_link, "meetings.txt: is a symbolic link"),
    Case("unknown-command", lambda e: ["frobnicate"], "invalid choice"),
]


@pytest.fixture
def env(tmp_path, monkeypatch) -> Env:
    work = tmp_path / "a" / "b" / "c" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    ws, run = make_workspace(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    if Path("/proc/self").is_dir():
        unwritable = Path("/proc")  # not even root can create files there
    else:
        unwritable = tmp_path / "readonly"
        unwritable.mkdir()
        os.chmod(unwritable, 0o500)
    return Env(tmp_path, work, ws, run, afile, unwritable)


def _check(env: Env, argv: list[str], capsys, expect: str | None) -> None:
    before = snapshot(env.root)
    try:
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse
            rc = exc.code
        after = snapshot(env.root)
    finally:
        lock = env.extra.pop("lock", None)
        if lock is not None:
            lock.__exit__(None, None, None)
        if "socket" in env.extra:
            env.extra.pop("socket").close()
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert rc in (1, 2), (rc, err)
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err
    assert errors[0].startswith("speechkit"), err
    if rc == 1:  # not argparse's usage: the error is all there is (warnings may precede it)
        assert err.rstrip("\n").splitlines()[-1] == errors[0], err
    if expect:
        assert expect in errors[0], errors[0]
    assert after == before


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=c.marks) for c in CASES])
def test_bad_input_gives_one_error_line_and_writes_nothing(env, case, capsys):
    _check(env, case.argv(env), capsys, case.expect)


def test_every_subcommand_is_in_the_catalogue():
    covered = {c.id.split("-")[0] for c in CASES}
    assert _subcommands() <= covered, _subcommands() - covered


def test_the_installed_command_exits_1_with_one_error_line(env):
    """The real exit path: the console script, its exit status and stderr."""
    script = Path(sys.executable).parent / "speechkit"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "speechkit"]
    before = snapshot(env.root)
    done = subprocess.run([*command, "score", "--workspace", str(env.ws), "--run", str(env.run), "--out",
                           str(env.root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"speechkit score: error: {env.root}: is a folder; give a file path "
                                                f"inside it"]
    assert snapshot(env.root) == before
    done = subprocess.run([*command, "score", "--ref", "x.stm", "--hyp", "y.stm", "--resamples", "1e23"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("speechkit score: error: argument --resamples")
