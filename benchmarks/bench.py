"""Speed and memory benchmark: speechkit's ASR stage and cascades against bare faster-whisper.

One call of :func:`run_bench` measures, on the same audio, model, device and thread count:

- ``bare_sequential``: ``faster_whisper.WhisperModel.transcribe`` (word timestamps, its own VAD
  filter, the recipe's beam size), what a user of faster-whisper would run;
- ``bare_batched``: faster-whisper's ``BatchedInferencePipeline`` (the recipe's batch size);
- ``asr_stage``: speechkit's VAD + ASR stages of the L1 recipe
  (:meth:`~speechkit.cascade.Cascade.run_stage` of ``vad`` and ``asr``);
- ``l1_cascade``: the full L1 cascade; ``l2_cascade``: the full L2 cascade, whose context is what
  it produced itself for the workspace's meetings before (in the warm-up runs on the demo
  meetings, in calendar order; the bench audio gets all of them: hot words mined from its own
  confident words, verified where a window's decoding holds one or words written like one);
  ``l3_cascade``: the full L3 cascade with the L3 context of the first meeting of a workspace
  (roster, voice enrollments, jargon, documents, agenda: the prompt, hot words, enrollments and
  correction vocabulary a real L3 run uses), by default
  the demo workspace (``workspaces/demo``) when it is there, else a small workspace built
  around the audio; the context building, identification and correction are timed with it.

Every configuration runs in its own process (:class:`Worker`), so that its peak resident memory
(the kernel's high-water mark, ``VmHWM``) is its own. A worker loads the models and runs the
configuration once on each reference clip (warm-up, and the words for WER); then the runs on
the audio are interleaved across the configurations (round by round, every other round in
reverse order), so that load from other processes weighs on all of them alike. Times are
medians over ``repeats`` and exclude model loading (reported as ``load_s``). The length sweep
runs the L3 cascade once per length, each in a fresh process, on the audio concatenated
``lengths`` times. All workers of the main comparison are alive at once (about 5 GB of memory
on the CPU with tiny.en).

The audio is, by default, real speech from ``../shared/realdata``: pyannote's two-speaker call
and the eight AMI excerpts with speech (all but trn01 and trn02), 274 s, so 16x is 73
minutes. That is long enough to fill a batch of 8 decoding windows: with less, the 1x run
decodes a partial batch, and the memory of the batched encoder (which grows with the batch,
not with the recording) would show up in the sweep as growth with length. WER is
measured on at least 1,500 reference words (:data:`MIN_WER_WORDS`): the real recordings that have
references (``sample.wav`` with its STM, ``jfk.flac``: 109 words) and the six demo meetings (their
verbatim references, 1,488 words; the L3 cascade gets each meeting's own L3 context there).

Outputs in ``out``: ``bench.json`` (see :func:`run_bench`), ``bench.md`` (tables), the audio and
workspace it built (``workspace/``) and each worker's stderr (``logs/``).

Run it as ``make bench`` or ``python benchmarks/bench.py --help``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from speechkit.core.audio import SAMPLE_RATE
from speechkit.errors import SpeechkitError
from speechkit.io.atomic import write_json, write_text

CONFIGS = ("bare_sequential", "bare_batched", "asr_stage", "l1_cascade", "l2_cascade", "l3_cascade")
REPO = Path(__file__).resolve().parents[1]
REALDATA = (REPO / ".." / "shared" / "realdata").resolve()
DEMO = REPO / "workspaces" / "demo"
GAP_S = 0.5  # silence between the recordings joined into the default audio
AMI_EXCERPTS = ("trn00", "trn03", "trn04", "trn05", "trn06", "trn07", "trn08", "trn09")  # with speech
JFK = ("And so my fellow Americans, ask not what your country can do for you, "
       "ask what you can do for your country.")
# Enrollment clips cut from pyannote's sample.wav (single-speaker turns of its STM).
ENROLL = {"Diane Doe": (17.789, 21.475), "Sheila Doe": (14.444, 17.769)}
JARGON = ["New Jersey", "Chicago", "Texas", "Yankee", "remote control", "prototype"]
AGENDA = ("Agenda: introductions (Diane in New Jersey, Sheila in Texas); the remote control "
          "prototype: buttons, battery, casing; next steps.")


@dataclass
class BenchOptions:
    """What to measure.

    ``out``: folder for bench.json, bench.md and the built audio. ``model``: ASR model (registry
    name). ``device``: ``cpu`` or ``cuda``. ``compute_type``: CTranslate2 type (default int8 on
    CPU, float16 on GPU). ``threads``: CPU threads for CTranslate2, OpenMP and MKL (0 = all cores).
    ``repeats``: timed runs per configuration (median reported). ``lengths``: multiples of the
    audio for the length sweep (1 is always included). ``audio``: the base recording (default:
    real speech from ``realdata``). ``references``: ``(clip, reference text)`` pairs for WER
    (default: sample.wav and jfk.flac). ``context``: workspace whose first meeting gives the
    L3 context (default: the demo workspace if present, else the one built around the audio).
    ``configs``: which configurations to run.
    """

    out: Path = Path("runs/bench")
    model: str = "tiny.en"
    device: str = "cpu"
    compute_type: str | None = None
    threads: int = 0
    repeats: int = 3
    lengths: tuple[int, ...] = (1, 4, 16)
    audio: Path | None = None
    realdata: Path = REALDATA
    references: tuple[tuple[Path, str], ...] | None = None
    context: Path | None = None
    configs: tuple[str, ...] = CONFIGS
    progress: bool = True

    def __post_init__(self) -> None:
        self.out = Path(self.out)
        self.threads = self.threads or os.cpu_count() or 1
        if self.repeats < 1:
            raise ValueError("repeats must be at least 1")
        if any(n < 1 for n in self.lengths):
            raise ValueError(f"lengths must be positive multiples, got {self.lengths}")
        self.lengths = tuple(sorted(set(self.lengths) | {1}))
        unknown = set(self.configs) - set(CONFIGS)
        if unknown:
            raise ValueError(f"unknown configuration(s) {', '.join(sorted(unknown))}; "
                             f"expected some of {', '.join(CONFIGS)}")


# ----------------------------------------------------------------------------- preparation

def _write_repeated(path: Path, audio: np.ndarray, times: int) -> None:
    """``audio`` written ``times`` times in a row to a 16 kHz PCM-16 WAV, one copy at a time."""
    import soundfile as sf
    path.parent.mkdir(parents=True, exist_ok=True)
    with sf.SoundFile(str(path), "w", SAMPLE_RATE, 1, subtype="PCM_16") as handle:
        for _ in range(times):
            handle.write(audio)


def default_audio(realdata: Path) -> np.ndarray:
    """274 s of real speech: pyannote's sample.wav, then the AMI excerpts ``AMI_EXCERPTS``,
    0.5 s apart."""
    from speechkit.core.audio import load_audio
    files = [realdata / "pyannote-sample" / "sample.wav"] + [
        realdata / "ami-debug" / f"{name}.wav" for name in AMI_EXCERPTS]
    gap = np.zeros(int(GAP_S * SAMPLE_RATE), dtype=np.float32)
    parts = []
    for f in files:
        parts += [load_audio(f), gap]
    return np.concatenate(parts[:-1])


def prepare(options: BenchOptions) -> Path:
    """Build ``out/workspace``: the audio at every length (meetings ``x1``, ``x4``, ...), the
    enrollment clips and a manifest with roster, jargon and an agenda. Returns its folder."""
    import soundfile as sf
    import yaml

    from speechkit.core.audio import load_audio
    root = options.out / "workspace"
    base = load_audio(options.audio) if options.audio else default_audio(options.realdata)
    if not len(base):
        raise SpeechkitError(f"{options.audio}: no audio to benchmark")
    quantised = np.clip(np.round(base * 32767), -32768, 32767).astype(np.int16)
    for n in options.lengths:
        target = root / "audio" / f"x{n}.wav"
        if not (target.is_file() and sf.info(str(target)).frames == n * len(quantised)):
            _write_repeated(target, quantised, n)
    sample, rate = sf.read(options.realdata / "pyannote-sample" / "sample.wav", dtype="float32")
    people = []
    for i, (name, (t0, t1)) in enumerate(ENROLL.items()):
        clip = root / "enroll" / f"p{i + 1}.wav"
        clip.parent.mkdir(parents=True, exist_ok=True)
        sf.write(clip, sample[int(t0 * rate):int(t1 * rate)], rate)
        people.append({"id": f"p{i + 1}", "name": name, "nicknames": [name.split()[0]],
                       "enrollments": [f"enroll/p{i + 1}.wav"]})
    write_text(root / "agenda.md", AGENDA + "\n")
    meetings = [{"id": f"x{n}", "date": "2026-03-02", "title": "Remote control design review",
                 "audio": f"audio/x{n}.wav", "attendees": [p["id"] for p in people]} for n in options.lengths]
    write_text(root / "workspace.yaml", yaml.safe_dump({
        "name": "bench", "people": people, "meetings": meetings,
        "terms": {"numbers": [], "jargon": JARGON},
        "artifacts": [{"id": f"agenda-{m['id']}", "kind": "agenda", "path": "agenda.md", "meeting": m["id"]}
                      for m in meetings]}, sort_keys=False))
    return root


#: the fewest reference words a WER comparison of configurations is decided on
MIN_WER_WORDS = 1500


def default_references(realdata: Path, demo: Path | None = DEMO) -> tuple[tuple[Path, str], ...]:
    """The clips with reference transcripts WER is measured on: pyannote's sample.wav and JFK
    (real speech, 109 words) and, when ``demo`` is a workspace, its meetings (1,488 words)."""
    from speechkit.io.stm import read_stm
    stm = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    out = [(realdata / "pyannote-sample" / "sample.wav", stm.text), (realdata / "faster-whisper" / "jfk.flac", JFK)]
    if demo is not None and (demo / "workspace.yaml").is_file():
        from speechkit.io import read_transcripts
        from speechkit.io.manifest import load_workspace
        for meeting in load_workspace(demo).scored_meetings:
            if meeting.reference is not None:
                refs = read_transcripts(meeting.reference)
                ref = refs.get(meeting.id) or next(iter(refs.values()))
                out.append((meeting.audio, ref.text))
    return tuple(out)


# ----------------------------------------------------------------------------- the worker

def _memory_mb() -> dict[str, float]:
    """Current (``VmRSS``) and peak (``VmHWM``) resident memory of this process, in MB."""
    out = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    return out


#: Mapped files counted apart in the memory by component (the first whose pattern a path holds).
COMPONENTS = (("torch", ("/torch/", "/torchaudio/", "/nvidia/")), ("ctranslate2", ("ctranslate2",)),
              ("onnxruntime", ("onnxruntime",)))


def _memory_by_component() -> dict[str, float]:
    """Resident memory (MB) of this process by what holds it (``/proc/self/smaps``): the files of
    torch, CTranslate2 and onnxruntime, other mapped files (Python, numpy, ...), and anonymous
    memory (model weights, buffers, Python objects)."""
    out: dict[str, float] = {}
    name = "anonymous"
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as smaps:
        for fields in map(str.split, smaps):
            if fields and fields[0] == "Rss:":
                out[name] = out.get(name, 0.0) + int(fields[1]) / 1024
            elif fields and not fields[0].endswith(":"):  # a mapping: address range, ..., its path
                path = fields[5] if len(fields) > 5 and fields[5].startswith("/") else ""
                name = next((c for c, parts in COMPONENTS if any(p in path for p in parts)),
                            "other files" if path else "anonymous")
    return {k: round(v, 1) for k, v in sorted(out.items())}


def _recipe(name: str, spec: dict) -> Any:
    """Recipe ``name`` on the spec's device, model, compute type and threads."""
    from speechkit.recipe import load_recipe
    from speechkit.stages import parse_stage
    recipe = load_recipe(name).with_overrides(model=spec["model"], device=spec["device"])
    asr = {**recipe.stages["asr"].as_dict(), "cpu_threads": spec["threads"]}
    if spec["compute_type"]:
        asr["compute_type"] = spec["compute_type"]
    return replace(recipe, stages={**recipe.stages, "asr": parse_stage("asr", asr)})


def _configuration(spec: dict) -> Callable[[Path, dict], str]:
    """Load what configuration ``spec["config"]`` needs; return a function that runs it on one
    file and returns the words it recognised, putting into a dict the stage seconds (``stages``)
    and what the ASR step decoded (``asr``: its ``DecodeStats`` counts) where it has stages."""
    config = spec["config"]
    asr = _recipe("l1", spec).stages["asr"].as_dict()
    if config.startswith("bare_"):
        from faster_whisper import BatchedInferencePipeline

        from speechkit.devices import default_compute_type, resolve_device
        from speechkit.registry import resolve
        from speechkit.stages.asr.whisper import load_model
        device = resolve_device(spec["device"])
        model = load_model(str(resolve(spec["model"])), device, spec["compute_type"] or default_compute_type(device),
                           spec["threads"])
        common = {"language": asr.get("language", "en"), "beam_size": asr.get("beam_size", 5),
                  "word_timestamps": True, "vad_filter": True}
        if config == "bare_sequential":
            def transcribe(path: Path, report: dict) -> str:
                segments, _ = model.transcribe(str(path), **common)
                return " ".join(s.text.strip() for s in segments)
        else:
            pipeline = BatchedInferencePipeline(model)

            def transcribe(path: Path, report: dict) -> str:
                segments, _ = pipeline.transcribe(str(path), batch_size=asr.get("batch_size", 8), **common)
                return " ".join(s.text.strip() for s in segments)
        return transcribe

    from speechkit.cascade import Cascade
    if config == "asr_stage":
        cascade = Cascade(_recipe("l1", spec))

        def recognize(path: Path, report: dict) -> str:
            record = cascade.record(path)
            words = [cascade.run_stage(stage, record) for stage in ("vad", "asr")][-1]
            report.update(stages=record.timings, asr=words.summary())
            return " ".join(s.text for s in words)
        return recognize

    recipe = _recipe(config.removesuffix("_cascade"), spec)
    cascade = Cascade(recipe)
    if config == "l1_cascade":
        def run_l1(path: Path, report: dict) -> str:
            result = cascade.run(path)
            report.update(stages=result.timings, asr=result.summaries.get("asr", {}))
            return result.transcript.text
        return run_l1

    from speechkit.context import PriorMeeting, build_context
    from speechkit.io.manifest import load_workspace
    ws = load_workspace(spec["context"])
    own = {Path(m.audio).resolve(): m for m in ws.meetings}  # a meeting of the workspace gets its own context
    earlier: dict[str, PriorMeeting] = {}  # L2: what this cascade produced for the workspace's meetings

    def run_level(path: Path, report: dict) -> str:
        t0 = time.perf_counter()
        meeting = own.get(Path(path).resolve())
        before = ws.meetings[:ws.meetings.index(meeting)] if meeting is not None else ws.meetings  # calendar order
        prior = [earlier[m.id] for m in before if m.id in earlier] if recipe.level == 2 else []
        context = build_context(ws, meeting or ws.meetings[0], recipe.level, prior, recipe.context)
        seconds = time.perf_counter() - t0
        result = cascade.run(path, context)
        if meeting is not None and recipe.level == 2:
            earlier[meeting.id] = PriorMeeting.of(meeting.id, result.outputs)
        report.update(stages={"context": seconds, **result.timings}, asr=result.summaries.get("asr", {}))
        return result.transcript.text
    return run_level


def worker(spec: dict) -> None:
    """The worker process of one configuration (see :class:`Worker`).

    Loads the configuration, runs it on the reference clips (warm-up, and the words for WER)
    and replies; then runs it on the audio once per ``run`` line on stdin, replying with the
    wall time, stage seconds and word count; on any other line it replies with its peak memory
    and ends. Replies are JSON lines that start with ``REPLY`` on stdout.
    """
    import ctranslate2
    # bare faster-whisper's temperature fallback samples: seeded before its first draw (a fresh
    # process), its words are the same from one benchmark to the next (speechkit seeds its own)
    ctranslate2.set_random_seed(0)
    t0 = time.perf_counter()
    run = _configuration(spec)
    reports: list[dict] = [{} for _ in spec["references"]]
    hypotheses = [run(Path(clip), report) for clip, report in zip(spec["references"], reports)]
    _reply({"load_s": time.perf_counter() - t0, "hypotheses": hypotheses,
            "reference_asr": [report.get("asr", {}) for report in reports],
            "rss_after_load_mb": _memory_mb()["VmRSS"]})
    for line in sys.stdin:
        if line.strip() != "run":
            break
        report: dict[str, dict] = {}
        start = time.perf_counter()
        words = len(run(Path(spec["audio"]), report).split())
        _reply({"wall_s": time.perf_counter() - start, "stages": report.get("stages", {}),
                "asr": report.get("asr", {}), "words": words})
    _reply({"peak_rss_mb": _memory_mb()["VmHWM"], "memory_mb": _memory_by_component()})


REPLY = "@@speechkit-bench "


def _reply(obj: dict) -> None:
    print(REPLY + json.dumps(obj), flush=True)


class Worker:
    """One configuration in its own Python process (so that its peak memory is its own), driven
    run by run, so that the runs of all configurations can be interleaved: background load that
    comes and goes then weighs on every configuration alike."""

    def __init__(self, spec: dict, log: Path) -> None:
        self.config, self.log = spec["config"], log
        log.parent.mkdir(parents=True, exist_ok=True)
        threads = str(spec["threads"])
        env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, "PYTHONWARNINGS": "ignore"}
        with open(log, "w", encoding="utf-8") as errors:
            self.proc = subprocess.Popen([sys.executable, "-m", "benchmarks.bench", "--worker", json.dumps(spec)],
                                         cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=errors, text=True)
        self.ready = self._read()

    def run(self) -> dict:
        """One timed run on the audio: ``wall_s``, ``stages``, ``words``."""
        return self._send("run")

    def close(self) -> dict:
        """End the process; its ``peak_rss_mb``."""
        reply = self._send("exit")
        self.proc.wait()
        return reply

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def _send(self, command: str) -> dict:
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # the process died: _read reports it
        return self._read()

    def _read(self) -> dict:
        for line in self.proc.stdout:
            if line.startswith(REPLY):
                return json.loads(line[len(REPLY):])
        self.kill()
        tail = "\n".join(self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-15:])
        raise SpeechkitError(f"benchmark configuration {self.config} failed (exit {self.proc.returncode}; "
                             f"log {self.log}):\n{tail}")


# ----------------------------------------------------------------------------- the report

def machine(options: BenchOptions) -> dict[str, Any]:
    """CPU model, cores, threads used, load, and the versions that decide speed."""
    import importlib.metadata
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    versions = {}
    for package in ("faster-whisper", "ctranslate2", "torch", "onnxruntime", "resemblyzer", "silero-vad"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    gpu = None
    if options.device.startswith("cuda"):
        import torch
        gpu = torch.cuda.get_device_name(int(options.device.partition(":")[2] or 0))
    return {"cpu": cpu, "cores": os.cpu_count(), "threads": options.threads, "device": options.device, "gpu": gpu,
            "platform": platform.platform(), "python": platform.python_version(), "packages": versions,
            "load_average_start": [round(x, 2) for x in os.getloadavg()]}


def _summary(result: dict, audio_s: float) -> dict[str, Any]:
    walls = [r["wall_s"] for r in result["runs"]]
    stages = sorted({k for r in result["runs"] for k in r["stages"]})
    stage_s = {k: statistics.median(r["stages"].get(k, 0.0) for r in result["runs"]) for k in stages}
    wall = statistics.median(walls)
    return {"wall_s": round(wall, 3), "rtf": round(wall / audio_s, 4), "walls_s": [round(w, 3) for w in walls],
            "words": result["runs"][-1]["words"],
            "load_s": round(result["load_s"], 2), "peak_rss_mb": round(result["peak_rss_mb"], 1),
            "rss_after_load_mb": round(result["rss_after_load_mb"], 1), "memory_mb": result["memory_mb"],
            "stages": {k: {"s": round(v, 3), "rtf": round(v / audio_s, 4)} for k, v in stage_s.items()},
            "asr": _decode_counts([result["runs"][-1].get("asr", {})]),
            "asr_references": _decode_counts(result.get("reference_asr", []))}


#: the ASR step's decode counts the report shows (``DecodeStats``)
DECODE_COUNTS = ("windows", "redecoded_verify", "biased_kept", "biased_dropped", "flagged_windows",
                 "redecoded_unbiased", "redecoded_fallback", "missed_spans", "missed_words")


def _decode_counts(stats: list[dict]) -> dict[str, int]:
    """The ASR decode counts (:data:`DECODE_COUNTS`) summed over runs (empty: no ASR stage)."""
    stats = [s for s in stats if s]
    return {k: sum(int(s.get(k, 0)) for s in stats) for k in DECODE_COUNTS} if stats else {}


def _reference_times(clip: Path, text: str) -> list[float] | None:
    """The start time (s) of each word of the normalised reference ``text`` of ``clip``, from its
    timed reference beside it (``clip.stm``, or the demo meetings' ``reference.json``: segment
    times, spread evenly over each segment's words); None when it has none."""
    import difflib

    from speechkit.io import read_transcripts
    from speechkit.metrics.normalize import normalize, words_in_time_order
    clip = Path(clip)
    path = clip.with_suffix(".stm") if clip.with_suffix(".stm").is_file() else clip.parent / "reference.json"
    if not path.is_file():
        return None
    timed: list[tuple[str, float]] = []
    for transcript in read_transcripts(path).values():
        for seg, tokens in zip(*words_in_time_order(transcript)):
            timed += [(t, seg.start + (seg.end - seg.start) * i / len(tokens)) for i, t in enumerate(tokens)]
    words = normalize(text).split()
    times: list[float | None] = [None] * len(words)
    matcher = difflib.SequenceMatcher(a=[t for t, _ in timed], b=words, autojunk=False)
    for a, b, n in matcher.get_matching_blocks():
        times[b:b + n] = [at for _, at in timed[a:a + n]]
    last = 0.0
    for i, at in enumerate(times):
        last = times[i] = last if at is None else at
    return times  # type: ignore[return-value]


def _per_clip(references: tuple[tuple[Path, str], ...], bare: list[str], stage: list[str]) -> list[dict[str, Any]]:
    """Per reference clip, bare sequential faster-whisper against the ASR stage: reference words,
    each one's errors, the reference words the stage gets wrong and bare gets right (``lost``)
    and the reverse (``gained``), and where the lost ones are (``lost_at``: spans in seconds,
    words less than 2 s apart together)."""
    from speechkit.metrics.wer import word_error_rate
    out = []
    for (clip, text), b, st in zip(references, bare, stage):
        rb, rs = word_error_rate(text, b), word_error_rate(text, st)
        right = [[op == "equal" for ref, _, op in r.pairs if ref is not None] for r in (rb, rs)]
        lost = [i for i, (ok_b, ok_s) in enumerate(zip(*right)) if ok_b and not ok_s]
        times = _reference_times(Path(clip), text)
        spans: list[list[float]] = []
        for at in ([times[i] for i in lost] if times else []):
            if spans and at - spans[-1][1] < 2.0:
                spans[-1][1] = at
            else:
                spans.append([at, at])
        out.append({"clip": _label(clip), "words": rb.reference_words, "bare_errors": rb.errors,
                    "stage_errors": rs.errors, "lost": len(lost),
                    "gained": sum(ok_s and not ok_b for ok_b, ok_s in zip(*right)),
                    "lost_at": [[round(a, 1), round(e, 1)] for a, e in spans]})
    return out


def _wer(references: tuple[tuple[Path, str], ...], hypotheses: list[str]) -> dict[str, Any]:
    """WER pooled over the reference clips (errors / reference words), and per clip."""
    from speechkit.metrics.wer import word_error_rate
    results = [word_error_rate(text, hyp) for (_, text), hyp in zip(references, hypotheses)]
    errors, words = sum(r.errors for r in results), sum(r.reference_words for r in results)
    return {"value": round(errors / words, 4) if words else None, "errors": errors, "reference_words": words,
            "clips": {_label(clip): r.ratio.value for (clip, _), r in zip(references, results)}}


def _label(clip: str | Path) -> str:
    """A reference clip by its folder and name (``m01/audio.flac``: the demo's files share names)."""
    return f"{Path(clip).parent.name}/{Path(clip).name}"


def run_bench(options: BenchOptions) -> dict[str, Any]:
    """Measure every configuration and the length sweep; write ``bench.json`` and ``bench.md``.

    ``bench.json``: ``machine``, ``options``, ``audio`` (path, seconds), ``configs`` (per
    configuration: median ``wall_s``, ``rtf``, every repeat's wall time, ``load_s``,
    ``peak_rss_mb``, ``rss_after_load_mb``, per-stage seconds and RTF, ``wer``), ``ratios``
    (``<config>_vs_bare_sequential`` and ``<config>_vs_bare_batched`` wall-time ratios, lower is
    faster, ``peak_rss_<config>_vs_bare_batched`` and ``peak_rss_longest_vs_1x``),
    ``length_sweep`` (``audio_s``, ``wall_s``, ``rtf``,
    ``peak_rss_mb`` per length, L3 cascade) and ``targets`` (the issue's targets, met or not).
    """
    import soundfile as sf
    from tqdm import tqdm

    if not options.realdata.is_dir():
        raise SpeechkitError(f"{options.realdata}: folder of real recordings not found (the benchmark takes "
                             f"its enrollment clips and WER references from it); pass its path")
    options.out.mkdir(parents=True, exist_ok=True)
    info = machine(options)
    root = prepare(options)
    context = options.context or (DEMO if (DEMO / "workspace.yaml").is_file() else root)
    references = options.references or default_references(options.realdata)
    spec = {"model": options.model, "device": options.device, "compute_type": options.compute_type,
            "threads": options.threads, "context": str(context),
            "references": [str(clip) for clip, _ in references]}
    audio = {n: root / "audio" / f"x{n}.wav" for n in options.lengths}
    seconds = {n: sf.info(str(path)).frames / SAMPLE_RATE for n, path in audio.items()}
    sweep = "l3_cascade" if "l3_cascade" in options.configs else options.configs[-1]
    longer = [n for n in options.lengths if n > 1]
    bar = tqdm(total=len(options.configs) * (options.repeats + 1) + len(longer), desc="bench",
               unit="step", disable=not options.progress)
    workers: dict[str, Worker] = {}
    raw: dict[tuple[str, int], dict] = {}
    try:
        for config in options.configs:
            workers[config] = Worker({**spec, "config": config, "audio": str(audio[1])},
                                     options.out / "logs" / f"{config}-x1.log")
            bar.update()
        runs: dict[str, list[dict]] = {config: [] for config in options.configs}
        for r in range(options.repeats):  # interleaved, every other round in reverse order
            for config in options.configs[::-1 if r % 2 else 1]:
                runs[config].append(workers[config].run())
                bar.update()
        for config, w in workers.items():
            raw[(config, 1)] = {**w.ready, **w.close(), "runs": runs[config]}
        for n in longer:
            w = workers[f"{sweep}-x{n}"] = Worker({**spec, "config": sweep, "audio": str(audio[n])},
                                                  options.out / "logs" / f"{sweep}-x{n}.log")
            run = w.run()
            raw[(sweep, n)] = {**w.ready, **w.close(), "runs": [run]}
            bar.update()
    finally:
        for w in workers.values():
            w.kill()
        bar.close()
    configs = {}
    for config in options.configs:
        configs[config] = _summary(raw[(config, 1)], seconds[1])
        configs[config]["wer"] = _wer(references, raw[(config, 1)]["hypotheses"])
    per_clip = (_per_clip(references, raw[("bare_sequential", 1)]["hypotheses"], raw[("asr_stage", 1)]["hypotheses"])
                if {"bare_sequential", "asr_stage"} <= set(options.configs) else [])
    lengths = [{"multiple": n, "audio_s": round(seconds[n], 2), "config": sweep,
                **{k: v for k, v in _summary(raw[(sweep, n)], seconds[n]).items()
                   if k in ("wall_s", "rtf", "peak_rss_mb", "rss_after_load_mb")}} for n in options.lengths]
    ratios: dict[str, float | None] = {}
    if "bare_sequential" in configs:
        bare = configs["bare_sequential"]["wall_s"]
        ratios.update({f"{c}_vs_bare_sequential": round(configs[c]["wall_s"] / bare, 3)
                       for c in options.configs if c != "bare_sequential"})
    if "bare_batched" in configs:
        batched = configs["bare_batched"]
        ratios.update({f"{c}_vs_bare_batched": round(configs[c]["wall_s"] / batched["wall_s"], 3)
                       for c in options.configs if c != "bare_batched"})
        ratios.update({f"peak_rss_{c}_vs_bare_batched": round(configs[c]["peak_rss_mb"] / batched["peak_rss_mb"], 3)
                       for c in options.configs if c != "bare_batched"})
    ratios["peak_rss_longest_vs_1x"] = round(lengths[-1]["peak_rss_mb"] / lengths[0]["peak_rss_mb"], 3)
    info["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    source = str(options.audio) if options.audio else f"realdata: sample.wav + {len(AMI_EXCERPTS)} AMI excerpts"
    report = {"machine": info, "options": _options_dict(options),
              "audio": {"path": str(audio[1]), "seconds": round(seconds[1], 2), "source": source},
              "l3_context": _context_summary(context), "configs": configs, "ratios": ratios,
              "length_sweep": lengths, "per_clip": per_clip,
              "targets": _targets(configs, ratios, options.lengths)}
    write_json(options.out / "bench.json", report)
    write_text(options.out / "bench.md", format_markdown(report))
    return report


def _context_summary(root: Path) -> dict[str, Any]:
    """How much L3 context the L3 cascade got (its first meeting's, as a run builds it)."""
    from speechkit.context import build_context
    from speechkit.io.manifest import load_workspace
    from speechkit.recipe import load_recipe
    ws = load_workspace(root)
    ctx = build_context(ws, ws.meetings[0], 3, [], load_recipe("l3").context)
    return {"workspace": str(root), "meeting": ws.meetings[0].id,
            "prompt_words": len((ctx.biasing.prompt or "").split()), "hotwords": len(ctx.biasing.hotwords),
            "enrolled_people": len(ctx.enrollments), "terms": len(ctx.terms)}


def _options_dict(options: BenchOptions) -> dict[str, Any]:
    out = asdict(options)
    out["out"], out["realdata"] = str(options.out), str(options.realdata)
    out["audio"] = str(options.audio) if options.audio else None
    out["references"] = [str(c) for c, _ in options.references] if options.references else None
    out["context"] = str(options.context) if options.context else None
    return out


def _targets(configs: dict, ratios: dict, lengths: tuple[int, ...]) -> dict[str, Any]:
    """The targets of the ASR issue (fidelity, speed, memory) with the measured value and whether
    each is met; a target whose configurations did not run is left out."""
    out: dict[str, Any] = {}
    if {"asr_stage", "bare_sequential"} <= set(configs):
        ours, bare = configs["asr_stage"]["wer"]["errors"], configs["bare_sequential"]["wer"]["errors"]
        out["asr_stage_errors_at_most_bare_sequential"] = {"value": ours, "bare": bare, "met": ours <= bare}
    if "l3_cascade_vs_bare_batched" in ratios:
        value = ratios["l3_cascade_vs_bare_batched"]
        out["l3_cascade_wall_at_most_1.2x_bare_batched"] = {"value": value, "met": value <= 1.2}
    cascades = {c: ratios[f"peak_rss_{c}_vs_bare_batched"] for c in configs
                if c.endswith("_cascade") and f"peak_rss_{c}_vs_bare_batched" in ratios}
    if cascades:
        value = max(cascades.values())
        out["cascade_peak_rss_at_most_1.5x_bare_batched"] = {"value": value, "by_config": cascades, "met": value <= 1.5}
    value = ratios["peak_rss_longest_vs_1x"]
    out[f"peak_rss_{max(lengths)}x_at_most_1.3x_of_1x"] = {"value": value, "met": value <= 1.3}
    words = min(c["wer"]["reference_words"] for c in configs.values())
    out[f"wer_on_at_least_{MIN_WER_WORDS}_words"] = {"value": words, "met": words >= MIN_WER_WORDS}
    return out


def format_markdown(report: dict[str, Any]) -> str:
    """bench.md: the machine, the configurations with their ratios, stages, the sweep, targets."""
    m, a = report["machine"], report["audio"]
    o, c = report["options"], report["l3_context"]
    gpu = f", GPU {m['gpu']}" if m.get("gpu") else ""
    lines = [f"# speechkit bench: {o['model']} on {m['device']}", "",
             f"- machine: {m['cpu']}, {m['cores']} cores, {m['threads']} threads{gpu}",
             f"- load average at start / end: {m['load_average_start']} / {m['load_average_end']}",
             (f"- audio: {a['seconds']} s ({a['source']}); medians of {o['repeats']} runs; "
              "models loaded once per process, load time not included"),
             (f"- L3 context: {c['workspace']} meeting {c['meeting']}: prompt {c['prompt_words']} words, "
              f"{c['hotwords']} hot words, {c['enrolled_people']} enrolled people, {c['terms']} terms"),
             (f"- faster-whisper {m['packages']['faster-whisper']}, "
              f"ctranslate2 {m['packages']['ctranslate2']}, torch {m['packages']['torch']}"), "",
             (f"- WER: Whisper-normalised, pooled over {_wer_words(report)} reference words "
              f"({', '.join(next(iter(report['configs'].values()))['wer']['clips'])})"), "",
             ("| configuration | wall (s) | RTF | vs bare sequential | vs bare batched | peak RSS (MB) "
              "| RSS vs bare batched | WER | errors / words |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    ratios = report["ratios"]

    def ratio(key: str, base: str, name: str) -> str:
        value = 1.0 if name == base else ratios.get(key)
        return "" if value is None else f"{value:.2f}x"

    for name, c in report["configs"].items():
        wer = c["wer"]["value"]
        lines.append(f"| {name} | {c['wall_s']:.2f} | {c['rtf']:.3f} | "
                     f"{ratio(f'{name}_vs_bare_sequential', 'bare_sequential', name)} | "
                     f"{ratio(f'{name}_vs_bare_batched', 'bare_batched', name)} | {c['peak_rss_mb']:.0f} | "
                     f"{ratio(f'peak_rss_{name}_vs_bare_batched', 'bare_batched', name)} | "
                     f"{'' if wer is None else f'{wer:.3f}'} | {c['wer']['errors']} / {c['wer']['reference_words']} |")
    staged = {n: c for n, c in report["configs"].items() if c["stages"]}
    if staged:
        names = sorted({s for c in staged.values() for s in c["stages"]})
        lines += ["", ("Stage seconds (RTF) per configuration (diarization and identification run beside the "
                       "ASR, so a cascade's stage seconds add up to more than its wall time):"), "",
                  "| configuration | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
        for n, c in staged.items():
            cells = [f"{c['stages'][s]['s']:.2f} ({c['stages'][s]['rtf']:.3f})" if s in c["stages"] else ""
                     for s in names]
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines += ["", "Memory by component (MB resident after the runs; the rest of the peak was transient, "
              "e.g. the batched encoder's buffers):", ""]
    for n, c in report["configs"].items():
        held = ", ".join(f"{k} {v:.0f}" for k, v in c["memory_mb"].items())
        torch = "loaded" if "torch" in c["memory_mb"] else "not loaded"
        lines.append(f"- {n}: peak {c['peak_rss_mb']:.0f}; {held}; torch {torch}")
    lines += _asr_cost_lines(report) + _per_clip_lines(report.get("per_clip", []))
    lines += ["", f"Length sweep ({report['length_sweep'][0]['config']}, one process per length):", "",
              "| length | audio (s) | wall (s) | RTF | peak RSS (MB) |", "|---|---:|---:|---:|---:|"]
    for s in report["length_sweep"]:
        lines.append(f"| {s['multiple']}x | {s['audio_s']:.1f} | {s['wall_s']:.1f} | {s['rtf']:.3f} | "
                     f"{s['peak_rss_mb']:.0f} |")
    lines += ["", "Targets:", ""]
    for name, t in report["targets"].items():
        lines.append(f"- {name}: {t['value']} -> {'met' if t['met'] else 'NOT met'}")
    return "\n".join(lines) + "\n"


def _asr_cost_lines(report: dict[str, Any]) -> list[str]:
    """bench.md: the ASR step of each configuration that has one (seconds on the audio, against
    bare batched faster-whisper's whole run) and its decodings: windows, second decodings to
    verify hot words (L2), loop-control re-decodings; on the audio and summed over the reference clips."""
    rows = {n: c for n, c in report["configs"].items() if "asr" in c["stages"]}
    if not rows:
        return []
    batched = report["configs"].get("bare_batched", {}).get("wall_s")
    lines = ["", "ASR step per configuration (on the audio; decodings on the audio / on the reference clips):", "",
             "| configuration | ASR (s) | RTF | vs bare batched | windows | verify decodes (kept / dropped) "
             "| loop re-decodes | skipped speech decoded again (words found) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, c in rows.items():
        asr, counts, refs = c["stages"]["asr"], c.get("asr") or {}, c.get("asr_references") or {}

        def both(key: str, counts: dict[str, Any] = counts, refs: dict[str, Any] = refs) -> str:
            return f"{counts.get(key, 0)} / {refs.get(key, 0)}"
        ratio = f"{asr['s'] / batched:.2f}x" if batched else ""
        redecodes = {k: counts.get(k, 0) + refs.get(k, 0) for k in ("redecoded_unbiased", "redecoded_fallback")}
        lines.append(f"| {name} | {asr['s']:.2f} | {asr['rtf']:.3f} | {ratio} | {both('windows')} | "
                     f"{both('redecoded_verify')} ({counts.get('biased_kept', 0) + refs.get('biased_kept', 0)} / "
                     f"{counts.get('biased_dropped', 0) + refs.get('biased_dropped', 0)}) | "
                     f"{sum(redecodes.values())} | {both('missed_spans')} ({both('missed_words')}) |")
    return lines


def _per_clip_lines(per_clip: list[dict[str, Any]]) -> list[str]:
    """bench.md: bare sequential faster-whisper against the ASR stage, clip by clip."""
    if not per_clip:
        return []
    lines = ["", "ASR stage against bare sequential faster-whisper, per reference clip (lost: reference words "
             "the stage gets wrong and bare gets right; gained: the reverse; where: the lost words' times, s):", "",
             "| clip | words | bare errors | stage errors | lost | gained | where the stage loses words |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for c in per_clip:
        where = ", ".join(f"{a:.1f}" if a == e else f"{a:.1f}-{e:.1f}" for a, e in c["lost_at"]) or "-"
        lines.append(f"| {c['clip']} | {c['words']} | {c['bare_errors']} | {c['stage_errors']} | {c['lost']} | "
                     f"{c['gained']} | {where} |")
    total = {k: sum(c[k] for c in per_clip) for k in ("words", "bare_errors", "stage_errors", "lost", "gained")}
    lines.append(f"| all | {total['words']} | {total['bare_errors']} | {total['stage_errors']} | {total['lost']} | "
                 f"{total['gained']} | |")
    return lines


def _wer_words(report: dict[str, Any]) -> int:
    """The reference words every configuration's WER is pooled over."""
    return next(iter(report["configs"].values()))["wer"]["reference_words"]


def _lengths(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated whole multiples such as 1,4,16, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive multiples such as 1,4,16, got {text!r}")
    return values


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="benchmarks/bench.py", description="Measure, on the same audio, model and threads: bare "
        "faster-whisper (sequential and batched), speechkit's ASR stage, the L1, L2 and L3 cascades (wall "
        "time, real-time factor, peak memory, WER, the ASR step's decodings), each in its own process; "
        "then the L3 cascade on the audio repeated --lengths times. Writes bench.json and bench.md into OUT.")
    p.add_argument("--out", "-o", type=Path, default=Path("runs/bench"),
                   help="folder for bench.json, bench.md and the built audio (default runs/bench)")
    p.add_argument("--model", default="tiny.en", help="ASR model, registry name (default tiny.en)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="device for every stage (default cpu)")
    p.add_argument("--compute-type", help="CTranslate2 compute type (default int8 on cpu, float16 on cuda)")
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads for CTranslate2, OpenMP and MKL in every configuration (default: all cores)")
    p.add_argument("--repeats", type=_positive, default=3,
                   help="timed runs per configuration; medians reported (default 3)")
    p.add_argument("--lengths", type=_lengths, default=(1, 4, 16),
                   help="multiples of the audio for the length sweep, comma-separated (default 1,4,16)")
    p.add_argument("--audio", type=Path, help="base recording (default: 274 s of real speech from --realdata)")
    p.add_argument("--realdata", type=Path, default=REALDATA,
                   help=f"folder of real recordings for enrollments and WER references (default {REALDATA})")
    p.add_argument("--context", type=Path,
                   help="workspace whose first meeting gives the L3 cascade its context (default: "
                        "workspaces/demo if present, else a small one built around the audio)")
    p.add_argument("--configs", default=",".join(CONFIGS),
                   help=f"configurations to run, comma-separated (default {','.join(CONFIGS)})")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    try:
        options = BenchOptions(out=args.out, model=args.model, device=args.device,
                               compute_type=args.compute_type, threads=args.threads, repeats=args.repeats,
                               lengths=args.lengths, audio=args.audio, realdata=args.realdata,
                               context=args.context,
                               configs=tuple(c.strip() for c in args.configs.split(",") if c.strip()))
        run_bench(options)
    except (ValueError, SpeechkitError) as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 2
    print((options.out / "bench.md").read_text(encoding="utf-8"), end="")
    print(f"wrote {options.out}/bench.json and bench.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
