"""Hostile and careless input to `import lhotse`, `import folder`, `export lhotse` and `compare` (issue 26).

Each refused case ends with exit code 1 or 2, one `error:` line, no traceback, and nothing in the
temporary tree created, changed or removed (a snapshot before and after; the command runs from a
folder inside the tree, and a `command` source would write its file inside it too). Manifests are
built from the real AMI excerpts in ../shared/realdata with the lhotse API, then edited as a
careless tool or an attacker would.
"""
from __future__ import annotations

import copy
import gzip
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from reliability_helpers import make_workspace, refused, snapshot

from speechkit.cli import main
from speechkit.io.rttm import read_rttm

SERIES = ("trn07", "trn08")
PYTHON = [sys.executable, "-m", "speechkit"]


def write_jsonl(path: Path, items: list) -> Path:
    """JSON lines, gzip-compressed when the name ends in .gz (NaN and Infinity written as Python does)."""
    text = "".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in items)
    path.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())
    return path


@dataclass
class Corpus:
    """The dicts of a valid two-recording Lhotse corpus, and the tree the import runs in."""

    root: Path
    recordings: list[dict]
    supervisions: list[dict]

    def argv(self, *extra: str) -> list:
        r = write_jsonl(self.root / "r.jsonl.gz", self.recordings)
        s = write_jsonl(self.root / "s.jsonl.gz", self.supervisions)
        return ["import", "lhotse", "--recordings", r, "--supervisions", s, "--out", self.root / "ws", *extra]

    def cuts_argv(self, custom: dict[str, dict], *extra: str) -> list:
        from lhotse import CutSet, RecordingSet, SupervisionSet
        from lhotse.utils import fastcopy

        cuts = CutSet.from_manifests(recordings=RecordingSet.from_dicts(self.recordings),
                                     supervisions=SupervisionSet.from_dicts(self.supervisions))
        dicts = [fastcopy(c, custom=custom.get(c.recording_id)).to_dict() for c in cuts]
        return ["import", "lhotse", "--cuts", write_jsonl(self.root / "c.jsonl.gz", dicts), "--out",
                self.root / "ws", *extra]


@pytest.fixture(scope="module")
def corpus_dicts(realdata) -> tuple[list[dict], list[dict]]:
    from lhotse import Recording

    recordings = [Recording.from_file(realdata / "ami-debug" / f"{rid}.wav").to_dict() for rid in SERIES]
    turns = read_rttm(realdata / "ami-debug" / "train.rttm")
    supervisions = [{"id": f"{rid}-{i:03d}", "recording_id": rid, "start": s.start, "duration": round(s.duration, 3),
                     "channel": 0, "speaker": s.speaker} for rid in SERIES for i, s in enumerate(turns[rid].segments)]
    return recordings, supervisions


@pytest.fixture
def corpus(tmp_path, corpus_dicts, monkeypatch) -> Corpus:
    work = tmp_path / "a" / "b" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    recordings, supervisions = copy.deepcopy(corpus_dicts)
    return Corpus(tmp_path, recordings, supervisions)


def _source(kind: str, source: str):
    def edit(c: Corpus) -> list:
        c.recordings[0]["sources"] = [{"type": kind, "channels": [0], "source": source}]
        return c.argv()
    return edit


def _set(kind: str, index: int, **values):
    def edit(c: Corpus) -> list:
        getattr(c, kind)[index].update(values)
        return c.argv()
    return edit


def _words(*items: tuple[float, float]):
    def edit(c: Corpus) -> list:
        sup = c.supervisions[2]
        sup["alignment"] = {"word": [{"symbol": f"w{i}", "start": start, "duration": duration}
                                     for i, (start, duration) in enumerate(items)]}
        sup["text"] = " ".join(f"w{i}" for i in range(len(items)))
        return c.argv()
    return edit


def _line(kind: str, index: int, text: str):
    """Replace one manifest line by raw text (what json.dumps cannot write)."""
    def edit(c: Corpus) -> list:
        items = getattr(c, kind)
        items[index] = text
        return c.argv()
    return edit


def _duplicate_supervision(c: Corpus) -> list:
    c.supervisions[5]["id"] = c.supervisions[0]["id"]  # another time, speaker or recording: a person would vanish
    return c.argv()


def _duplicate_recording(c: Corpus) -> list:
    c.recordings.append({**c.recordings[0], "duration": 1.0, "num_samples": 16000})
    return c.argv()


def _unsafe_id(c: Corpus) -> list:
    c.recordings[1]["id"] = "../../x"
    for sup in c.supervisions:
        if sup["recording_id"] == "trn08":
            sup["recording_id"] = "../../x"
    return c.argv()


def _empty_recordings(c: Corpus) -> list:
    argv = c.argv()
    (c.root / "r.jsonl.gz").write_bytes(gzip.compress(b""))
    return argv


def _path_instead(option: str, path: str | None = None, fifo: bool = False):
    def edit(c: Corpus) -> list:
        argv = c.argv()
        target = path or str(c.root)
        if fifo:
            target = str(c.root / "fifo.jsonl")
            os.mkfifo(target)
        argv[argv.index(option) + 1] = target
        return argv
    return edit


def _yaml_manifest(c: Corpus) -> list:
    argv = c.argv()
    (c.root / "r.yaml").write_text(yaml.safe_dump(c.recordings))
    argv[argv.index("--recordings") + 1] = c.root / "r.yaml"
    return argv


LHOTSE_CASES = {
    # item 1: sources other than files are refused by name, before anything runs
    "command-source": (lambda c: _source("command", f"touch {c.root / 'pwned'}; "
                                                    f"cat {c.recordings[0]['sources'][0]['source']}")(c),
                       "audio source of type 'command' refused"),
    "memory-source": (_source("memory", "UklGRg=="), "audio source of type 'memory' refused"),
    "url-source-without-allow-url": (_source("url", "http://127.0.0.1:9/a.wav"), "--allow-url"),
    # item 3: recordings lhotse would divide by
    "sampling-rate-0": (_set("recordings", 0, sampling_rate=0), "r.jsonl.gz:1: recording 'trn07': sampling_rate"),
    "sampling-rate-negative": (_set("recordings", 1, sampling_rate=-16000), "r.jsonl.gz:2: recording 'trn08'"),
    # item 4: times
    "supervision-nan-start": (_set("supervisions", 0, start=float("nan")), "s.jsonl.gz:1: invalid JSON: NaN"),
    "supervision-inf-duration": (_set("supervisions", 3, duration=float("inf")),
                                 "s.jsonl.gz:4: invalid JSON: Infinity"),
    "supervision-1e999-duration": (_line("supervisions", 2, '{"id": "x", "recording_id": "trn07", "start": 1, '
                                                          '"duration": 1e999, "speaker": "A"}'), "s.jsonl.gz:3"),
    "supervision-negative-start": (_set("supervisions", 1, start=-2.0), "s.jsonl.gz:2: supervision 'trn07-001': start"),
    "supervision-outside-the-recording": (_set("supervisions", 4, start=500.0), "lies outside its recording 'trn07'"),
    "word-negative-start": (_words((-5.0, 0.2)), "s.jsonl.gz:3: supervision 'trn07-002': word 'w0'"),
    "word-nan-start": (_words((float("nan"), 0.2)), "s.jsonl.gz:3: invalid JSON: NaN"),
    "word-ends-before-it-starts": (_words((5.0, -0.3)), "s.jsonl.gz:3: supervision 'trn07-002': word 'w0'"),
    "word-outside-its-supervision": (_words((25.0, 0.3)), "its word alignment lies outside it"),
    # item 5: duplicate ids
    "duplicate-supervision-id": (_duplicate_supervision, "s.jsonl.gz:6: supervision 'trn07-000' is given again"),
    "duplicate-recording-id": (_duplicate_recording, "r.jsonl.gz:3: recording 'trn07' is given again"),
    # low: ids checked on the line that gives them, before any audio is encoded
    "unsafe-recording-id": (_unsafe_id, "r.jsonl.gz:2: recording id: '../../x' is not a safe identifier"),
    "unsafe-speaker-id": (_set("supervisions", 0, speaker="../p1"), "s.jsonl.gz:1: supervision 'trn07-000': speaker"),
    # item 2 and low: readers
    "empty-recordings-manifest": (_empty_recordings, "no recordings in the file (an empty manifest)"),
    "supervisions-dev-zero": (_path_instead("--supervisions", "/dev/zero"), "/dev/zero: is not a regular file"),
    "supervisions-a-folder": (_path_instead("--supervisions"), "is a directory"),
    "recordings-a-fifo": (_path_instead("--recordings", fifo=True), "is not a regular file"),
    "recordings-yaml": (_yaml_manifest, "JSON lines"),
    "deeply-nested-line": (_line("supervisions", 0, "[" * 100_000),
                           "s.jsonl.gz:1: invalid JSON: values nested too deeply"),
    "5000-digit-integer": (_line("supervisions", 0, '{"id": "x", "start": ' + "9" * 5000 + "}"),
                           "s.jsonl.gz:1: invalid JSON: an integer of 5000 digits"),
    "not-a-supervision": (_line("supervisions", 0, '[1, 2]'), "s.jsonl.gz:1: expected a Lhotse supervision"),
    # cuts: custom fields and dates
    "cut-custom-workspace-a-list": (lambda c: c.cuts_argv({"trn07": {"workspace": ["a", "b"]}}),
                                    "custom 'workspace' must be a string"),
    "cut-dates-with-and-without-time-zone": (lambda c: c.cuts_argv(
        {"trn07": {"date": "2024-05-01T09:00+01:00"}, "trn08": {"date": "2024-05-02"}}, "--order", "date"),
        "cannot be ordered"),
}


@pytest.mark.parametrize("case", LHOTSE_CASES, ids=list(LHOTSE_CASES))
def test_hostile_lhotse_manifests_are_refused(corpus, case, capsys):
    edit, expect = LHOTSE_CASES[case]
    refused(corpus.root, edit(corpus), capsys, expect)


def test_a_url_source_is_read_only_when_asked_for(corpus, capsys):
    """--allow-url lets lhotse fetch the URL (here nothing answers: an error naming the recording)."""
    argv = _source("url", "http://127.0.0.1:9/trn07.wav")(corpus)
    refused(corpus.root, [*argv, "--allow-url"], capsys, "lhotse cannot load recording 'trn07'")


# Runs speechkit and reports the process's own peak memory (VmHWM: a forked child's rusage would
# count the test process it was forked from).
_PEAK = ("import runpy, sys\ntry:\n    runpy.run_module('speechkit', run_name='__main__')\nfinally:\n"
         "    sys.stderr.write([x for x in open('/proc/self/status') if x.startswith('VmHWM')][0])\n")


def _measured(argv: list, cwd: Path, timeout: float = 120, **popen) -> tuple[Done, float, float]:
    """Run ``speechkit argv`` in a child process: its exit code and stderr, its CPU time (s, user +
    system: the machine may be busy with other work) and its peak resident memory (MB)."""
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen([sys.executable, "-c", _PEAK, *map(str, argv)], stdout=subprocess.DEVNULL,
                                 stderr=err, cwd=cwd, **popen)
        timer = threading.Timer(timeout, child.kill)
        timer.start()
        _, status, usage = os.wait4(child.pid, 0)
        timer.cancel()
        err.seek(0)
        text = err.read().decode()
    peak = [line for line in text.splitlines() if line.startswith("VmHWM")]
    return (Done(os.waitstatus_to_exitcode(status), text), usage.ru_utime + usage.ru_stime,
            int(peak[0].split()[1]) / 1024 if peak else float("nan"))


@dataclass
class Done:
    returncode: int
    stderr: str


def _one_error(done: Done, expect: str) -> None:
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    [line] = [x for x in done.stderr.splitlines() if "error:" in x]
    assert expect in line, line


def test_a_command_source_fails_fast_in_bounded_memory_and_runs_nothing(corpus):
    argv = LHOTSE_CASES["command-source"][0](corpus)
    before = snapshot(corpus.root)
    done, seconds, peak_mb = _measured(argv, Path.cwd())
    _one_error(done, "audio source of type 'command' refused")
    assert not (corpus.root / "pwned").exists() and snapshot(corpus.root) == before
    assert seconds < 5 and peak_mb < 500, (seconds, peak_mb)


def test_a_gzip_bomb_is_refused_fast_in_bounded_memory(corpus):
    """About 1 MB of gzip that inflates to a 1 GB line (of spaces inside a JSON string)."""
    argv = corpus.argv()
    bomb, block = zlib_stream(), b" " * (1 << 20)
    with open(corpus.root / "r.jsonl.gz", "wb") as out:
        out.write(bomb.compress(b'{"id": "'))
        for _ in range(1024):
            out.write(bomb.compress(block))
        out.write(bomb.compress(b'"}\n') + bomb.flush())
    assert (corpus.root / "r.jsonl.gz").stat().st_size < 2 << 20
    done, seconds, peak_mb = _measured(argv, Path.cwd())
    _one_error(done, "r.jsonl.gz:1: a line longer than 32 MiB")
    assert seconds < 5 and peak_mb < 500, (seconds, peak_mb)
    assert not (corpus.root / "ws").exists()


def test_a_dev_zero_model_fails_fast_in_bounded_memory(tmp_path, monkeypatch):
    """`--model /dev/zero` used to be hashed with one read() until the kernel killed the process."""
    ws, _ = make_workspace(tmp_path)
    before = snapshot(tmp_path)
    done, seconds, peak_mb = _measured(["run", "l1", "--workspace", ws, "--out", tmp_path / "r", "--model",
                                        "/dev/zero"], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "speechkit run: error: /dev/zero: not a model file or folder" in done.stderr
    assert seconds < 5 and peak_mb < 500, (seconds, peak_mb)
    assert snapshot(tmp_path) == before


def zlib_stream():
    """A compressor that writes the gzip format."""
    import zlib
    return zlib.compressobj(9, zlib.DEFLATED, 31)


# --- import folder --------------------------------------------------------------------------------

@pytest.fixture
def folder(tmp_path, realdata, monkeypatch) -> Path:
    """tmp_path/meetings: trn07 and trn08 (audio linked) with their RTTM turns."""
    work = tmp_path / "a" / "b" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return ami_folder(tmp_path / "meetings", realdata)


def ami_folder(src: Path, realdata: Path) -> Path:
    """``src`` holding trn07 and trn08 (audio linked) with their RTTM turns: a folder to import."""
    src.mkdir()
    for rid in SERIES:
        (src / f"{rid}.wav").symlink_to(realdata / "ami-debug" / f"{rid}.wav")
    lines = (realdata / "ami-debug" / "train.rttm").read_text().splitlines()
    (src / "ami.rttm").write_text("\n".join(x for x in lines if x.split()[1] in SERIES) + "\n")
    return src


def _clip(path: Path, realdata: Path) -> Path:
    import soundfile as sf

    audio, rate = sf.read(realdata / "ami-debug" / "trn07.wav", dtype="float32")
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, audio[: 3 * rate], rate)
    return path


def _people_csv(clip: str) -> str:
    return f"id,name,enrollments\nFEE087,Fiona,{clip}\nMEE089,Mark,\nFEE088,Fran,\nMEO086,Marco,\n"


def _clip_outside(relative: bool):
    def edit(folder: Path, realdata: Path) -> list:
        clip = _clip(folder.parent / "private" / "call.flac", realdata)
        (folder / "people.csv").write_text(_people_csv("../private/call.flac" if relative else str(clip)))
        return []
    return edit


def _file(name: str, text: str):
    def edit(folder: Path, realdata: Path) -> list:
        (folder / name).write_text(text)
        return []
    return edit


def _unsafe_audio_name(folder: Path, realdata: Path) -> list:
    (folder / "my meeting.wav").symlink_to(realdata / "ami-debug" / "trn09.wav")
    return []


def _long_out(folder: Path, realdata: Path) -> list:
    out = folder.parent
    while len(str(out)) < 4038 - 210:
        out = out / ("d" * 200)
    out = out / ("w" * (4038 - len(str(out)) - 1))
    assert len(str(out)) == 4038
    return ["--out", out]


FOLDER_CASES = {
    "people-csv-names-a-clip-outside-the-folder": (_clip_outside(relative=True), "lies outside the imported folder"),
    "people-csv-names-an-absolute-clip-elsewhere": (_clip_outside(relative=False), "lies outside the imported folder"),
    "unsafe-audio-file-name": (_unsafe_audio_name, "my meeting.wav: the file name is the meeting id"),
    "deeply-nested-seglst": (_file("deep.json", "[" * 100_000), "deep.json: invalid JSON: values nested too deeply"),
    "seglst-5000-digit-integer": (_file("big.json", '[{"start_time": ' + "1" * 5000 + "}]"), "5000 digits"),
    "4038-character-out-path": (_long_out,
                                "cannot write the audio of meeting 'trn07': Error : Supplied filename too long"),
}


@pytest.mark.parametrize("case", FOLDER_CASES, ids=list(FOLDER_CASES))
def test_hostile_folders_are_refused(folder, realdata, case, capsys):
    edit, expect = FOLDER_CASES[case]
    extra = edit(folder, realdata)
    argv = ["import", "folder", folder, "--out", folder.parent / "ws"] + extra
    if "--out" in extra:  # the case's own --out replaces the default
        argv = ["import", "folder", folder] + extra
    refused(folder.parent, argv, capsys, expect)


def test_a_people_csv_named_on_the_command_line_may_name_clips_anywhere(folder, realdata, tmp_path):
    _clip_outside(relative=False)(folder, realdata)
    (folder / "people.csv").rename(tmp_path / "people.csv")
    assert main(["import", "folder", str(folder), "--out", str(tmp_path / "ws"), "--people",
                 str(tmp_path / "people.csv")]) == 0
    assert (tmp_path / "ws" / "enrollments" / "FEE087-1.flac").read_bytes() == \
        (tmp_path / "private" / "call.flac").read_bytes()


def test_a_json_file_that_is_not_seglst_is_not_a_reference(folder, tmp_path, capsys):
    (folder / "config.json").write_text('{"sample_rate": 16000, "note": "not a reference"}')
    assert main(["import", "folder", str(folder), "--out", str(tmp_path / "ws")]) == 0
    assert "trn07" in (tmp_path / "ws" / "workspace.yaml").read_text()


def _child_limits(max_file_bytes: int):
    def limit() -> None:
        import resource
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))
    return limit


def test_a_full_disk_during_import_folder_is_one_error_line_and_leaves_nothing(folder):
    before = snapshot(folder.parent)
    done, _, _ = _measured(["import", "folder", folder, "--out", folder.parent / "ws"], Path.cwd(),
                           preexec_fn=_child_limits(200_000))
    _one_error(done, "cannot write the audio of meeting 'trn07'")
    assert snapshot(folder.parent) == before


def _without_root_file_access() -> None:
    """In the child before it runs: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the capability
    bounding set, so that even root obeys permission bits (the tests may run as root)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0 and os.geteuid() == 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.mark.parametrize("what", ["audio file", "subfolder"])
def test_unreadable_audio_or_subfolder_is_permission_denied(folder, realdata, what):
    (folder / "sub").mkdir()
    (folder / "trn08.wav").rename(folder / "sub" / "trn08.wav")
    locked = folder / "sub" if what == "subfolder" else folder / "trn07.wav"
    if what == "audio file":
        locked.unlink()
        locked.write_bytes((realdata / "ami-debug" / "trn07.wav").read_bytes())
    locked.chmod(0o000)
    before = snapshot(folder.parent)
    done, _, _ = _measured(["import", "folder", folder, "--out", folder.parent / "ws"], Path.cwd(),
                           preexec_fn=_without_root_file_access)
    after = snapshot(folder.parent)
    locked.chmod(0o755)
    _one_error(done, f"{locked}: ")
    assert "Permission denied" in done.stderr
    assert after == before


# --- export lhotse ------------------------------------------------------------------------------

def _export_into(kind: str):
    def prepare(root: Path) -> list:
        out = root / "lhotse"
        out.mkdir()
        if kind == "symlink":
            (out / "cuts.jsonl.gz").symlink_to(root / "afile")
        else:
            os.mkfifo(out / "supervisions.jsonl.gz")
        return ["export", "lhotse", "--workspace", root / "ws", "--out", out]
    return prepare


@pytest.mark.parametrize("kind,expect", [("symlink", "is a symbolic link"), ("fifo", "is a FIFO")])
def test_export_refuses_a_link_or_fifo_target_and_writes_no_file_of_the_set(tmp_path, monkeypatch, kind, expect,
                                                                          capsys, realdata):
    ws = _exportable_workspace(tmp_path, realdata)
    (tmp_path / "afile").write_text("x")
    monkeypatch.chdir(tmp_path)
    line = refused(tmp_path, _export_into(kind)(tmp_path), capsys, expect)
    assert "lhotse/" in line and ws.is_dir()


def _exportable_workspace(root: Path, realdata: Path) -> Path:
    """A workspace of trn07 and trn08 imported from their folder (RTTM turns)."""
    src = ami_folder(root / "src", realdata)
    assert main(["import", "folder", str(src), "--out", str(root / "ws")]) == 0
    return root / "ws"


def test_export_follows_the_umask_and_gives_the_same_bytes_twice(tmp_path, realdata):
    ws = _exportable_workspace(tmp_path, realdata)
    old = os.umask(0o027)
    try:
        assert main(["export", "lhotse", "--workspace", str(ws), "--out", str(tmp_path / "a")]) == 0
    finally:
        os.umask(old)
    assert main(["export", "lhotse", "--workspace", str(ws), "--out", str(tmp_path / "b")]) == 0
    for name in ("recordings.jsonl.gz", "supervisions.jsonl.gz", "cuts.jsonl.gz"):
        assert (tmp_path / "a" / name).stat().st_mode & 0o777 == 0o640
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


# --- compare ---------------------------------------------------------------------------------------

@pytest.fixture
def scored(tmp_path, monkeypatch) -> tuple[Path, dict]:
    from speechkit.scoring import ScoreOptions, score_workspace

    work = tmp_path / "a" / "b" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    ws, run = make_workspace(tmp_path)
    scores = score_workspace(ws, run, ScoreOptions(resamples=0), out=run / "scores.json")
    return run, json.loads(json.dumps(scores))


def _edited(change):
    def edit(run: Path, scores: dict) -> str:
        text = change(scores)
        path = run.parent / "edited" / "scores.json"
        path.parent.mkdir()
        path.write_text(text if isinstance(text, str) else json.dumps(scores))
        return str(path)
    return edit


def _fifo_scores(run: Path, scores: dict) -> str:
    os.mkfifo(run.parent / "scores-fifo.json")
    return str(run.parent / "scores-fifo.json")


COMPARE_CASES = {
    "dev-zero": (lambda run, scores: "/dev/zero", "/dev/zero: is not a regular file"),
    "fifo": (_fifo_scores, "is not a regular file"),
    "meetings-a-list": (_edited(lambda s: s["meetings"].update(m1=[])), "meetings.m1: expected an object"),
    "details-a-list": (_edited(lambda s: s["meetings"]["m1"].update(details=[1])), "meetings.m1.details: expected"),
    "errors-a-string": (_edited(lambda s: s["meetings"]["m1"]["details"]["wer"].update(errors="3")),
                        "meetings.m1.details.wer.errors: expected a number >= 0, got '3'"),
    "found-a-number": (_edited(lambda s: s["meetings"]["m1"]["details"]["term_recall"].update(found=3)),
                       "term_recall.found: expected a list"),
    "totals-a-string": (_edited(lambda s: s["totals"].update(wer="x")), "totals.wer: expected an object"),
    "total-without-numerator": (_edited(lambda s: s["totals"]["wer"].pop("numerator")),
                                "totals.wer: missing numerator"),
    "100000-nested-brackets": (_edited(lambda s: "[" * 100_000), "invalid JSON: values nested too deeply"),
    "5000-digit-integer": (_edited(lambda s: json.dumps(s).replace('"numerator": ', '"numerator": ' + "7" * 4999, 1)),
                           "an integer of 5000 digits"),
    "nan-total": (_edited(lambda s: s["totals"]["wer"].update(numerator=float("nan"))), "NaN is not a finite number"),
    "infinite-total": (_edited(lambda s: s["totals"]["der"].update(denominator=float("inf"))), "Infinity"),
    "negative-total": (_edited(lambda s: s["totals"]["wer"].update(numerator=-3)),
                       "totals.wer.numerator: expected a number >= 0, got -3"),
    "negative-aggregate": (_edited(lambda s: s["aggregate"]["wer"].update(value=-0.5)), "aggregate.wer.value"),
}


@pytest.mark.parametrize("case", COMPARE_CASES, ids=list(COMPARE_CASES))
def test_damaged_or_hostile_scores_are_refused_by_compare(scored, case, capsys):
    run, scores = scored
    edit, expect = COMPARE_CASES[case]
    other = edit(run, scores)
    refused(run.parent, ["compare", run, other], capsys, expect)


def test_export_import_export_keeps_numbers_as_written(tmp_path, realdata):
    """Enrollment settings given as integers (min_seconds=1) come back as 1, not 1.0."""
    from speechkit.corpora.enroll import EnrollmentOptions
    from speechkit.corpora.folder import import_folder
    from speechkit.corpora.from_lhotse import import_lhotse
    from speechkit.corpora.to_lhotse import export_lhotse

    src = ami_folder(tmp_path / "src", realdata)
    first = import_folder(src, tmp_path / "a", enrollment=EnrollmentOptions("trn07", 1, 30, 0.5), progress=False)
    cuts = export_lhotse(first, tmp_path / "x")["cuts"]
    again = export_lhotse(import_lhotse(tmp_path / "b", cuts=[cuts], progress=False), tmp_path / "y")["cuts"]

    def settings(path: Path) -> list:
        return [json.loads(line)["custom"].get("enrollment")
                for line in gzip.decompress(path.read_bytes()).splitlines()]

    assert settings(cuts) == settings(again) == [{"min_seconds": 1, "max_seconds": 30, "min_piece": 0.5}, None]
    assert '"min_seconds": 1,' in gzip.decompress(again.read_bytes()).decode()


def _catches_sigint(pid: int) -> bool:
    """Whether process ``pid`` has a handler for SIGINT (bit 2 of SigCgt in /proc/PID/status)."""
    import signal

    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (signal.SIGINT - 1) & 1)


def test_a_run_started_with_sigint_ignored_still_stops_on_ctrl_c(tmp_path):
    """A background job of a script inherits SIGINT ignored; `speechkit run` must still stop on it."""
    import signal

    ws, _ = make_workspace(tmp_path)
    child = subprocess.Popen([*PYTHON, "run", "l1", "--workspace", str(ws), "--out", str(tmp_path / "r")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    # Interrupt as soon as the command has taken SIGINT back (before it loads any model): a fixed
    # sleep raced the run, which ends within 3 s on a fast machine now that the cascade has no torch
    deadline = time.monotonic() + 60
    while not _catches_sigint(child.pid) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    # 130, or ended by the signal itself once its handler ran (what a shell expects of an interrupted job)
    assert child.returncode in (130, -signal.SIGINT), (child.returncode, err)
    assert err.strip().splitlines()[-1] == "interrupted" and "Traceback" not in err, err


def test_compare_pairs_meetings_by_id_whatever_their_key_order(scored, capsys):
    run, scores = scored
    scores["meetings"] = dict(reversed(list(scores["meetings"].items())))
    other = _edited(lambda s: None)(run, scores)
    assert main(["compare", str(run), other]) == 0
    assert "error" not in capsys.readouterr().err
