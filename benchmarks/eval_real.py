"""Real-speech evaluation of VAD + diarization + identification (issue 13).

    .venv/bin/python benchmarks/eval_real.py --out DIR [--data ../shared/realdata] [--no-demo]

Runs over ``ami-debug`` (ten 30 s AMI excerpts, ``train.rttm`` / ``train.uem``), the pyannote
sample and (unless ``--no-demo``) the six meetings of ``workspaces/demo``, and writes
``DIR/real-speech.md`` (tables) and ``DIR/real-speech.json`` (every figure, per recording too).

Systems (each: Silero VAD -> Resemblyzer windows of 1.5 s every 0.75 s -> clustering -> turns by
the stage's own :class:`~speechkit.stages.diarize.embedding.Diarizer` -> identification):

- ``before``: the stage as it was (``clustering: threshold``: AHC cut at cosine 0.70, clusters
  under 2 s dropped; raw cosine identification at the recipes' former threshold 0.65).
- ``after``: the stage's defaults (``clustering: silhouette``, silhouette-selected AHC), and
  :func:`speechkit.stages.identify.identify` with s-norm (over the bundled cohort plus the other
  enrolled voices, threshold 0.5, split margin 0.5), as the shipped recipes run it.

Baselines: one label for all reference speech ("one-label oracle speech"), one label for all VAD
speech, and each system given the true number of speakers ("oracle count").

DER and JER come from pyannote.metrics with overlap scored, within the UEM (AMI) or the whole
recording, at collar 0 and 0.25 s each side (pyannote's ``collar`` = 0.5). Figures over a set
are pooled (total error time over total reference time); JER is the mean over recordings.

Identification: for each ordered pair of excerpts that share speakers (trn00/trn01/trn03,
trn07/trn08), every speaker with at least 0.5 s of solo speech in the first is enrolled from that
solo speech (joined, embedded once); the second is diarized and its clusters named. "Named right"
is the share of the enrolled speakers' solo speech time in the second excerpt whose hypothesis
name is theirs (mean over the pairs where an enrolled speaker has solo speech there); "false
accept" the share of the solo speech time of speakers who are not enrolled that received a name.
The same with reference solo speech in place of clusters ("oracle segments") bounds what the
scoring can do with perfect diarization.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from speechkit.stages.identify import SPLIT_MARGIN  # noqa: E402 (after the path setup)

DEFAULT_DATA = ROOT.parent / "shared" / "realdata"
AMI = [f"trn{i:02d}" for i in range(10)]
TUNE, HELD_OUT = AMI[:5], AMI[5:]
ID_PAIRS = [("trn00", "trn01"), ("trn01", "trn00"), ("trn00", "trn03"), ("trn03", "trn00"),
            ("trn01", "trn03"), ("trn03", "trn01"), ("trn07", "trn08"), ("trn08", "trn07")]
COLLARS = (0.0, 0.25)
FRAME = 0.01
Turn = tuple[float, float, str]


# ----------------------------------------------------------------------------- references

def read_rttm(path: Path) -> dict[str, list[Turn]]:
    """Turns ``(start, end, speaker)`` per file id of an RTTM file."""
    out: dict[str, list[Turn]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        f = line.split()
        if f and f[0] == "SPEAKER":
            out[f[1]].append((float(f[3]), float(f[3]) + float(f[4]), f[7]))
    return dict(out)


def read_uem(path: Path) -> dict[str, tuple[float, float]]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        f = line.split()
        if len(f) >= 4:
            out[f[0]] = (float(f[2]), float(f[3]))
    return out


def _frames(turns: list[Turn], duration: float) -> tuple[np.ndarray, np.ndarray, list[str]]:
    n = math.ceil(duration / FRAME) + 1
    speakers = sorted({s for *_, s in turns})
    count, who = np.zeros(n, int), np.full(n, -1)
    for s, e, spk in turns:
        a, b = round(s / FRAME), round(e / FRAME)
        count[a:b] += 1
        who[a:b] = speakers.index(spk)
    return count, who, speakers


def _runs(values: np.ndarray) -> list[tuple[int, int, int]]:
    change = np.flatnonzero(np.diff(values)) + 1
    bounds = np.concatenate(([0], change, [len(values)]))
    return [(a, b, int(values[a])) for a, b in itertools.pairwise(bounds)]


def solo_segments(turns: list[Turn], duration: float) -> list[Turn]:
    """Stretches where exactly one reference speaker talks."""
    count, who, speakers = _frames(turns, duration)
    lab = np.where(count == 1, who, -1)
    return [(a * FRAME, b * FRAME, speakers[v]) for a, b, v in _runs(lab) if v >= 0]


def speech_union(turns: list[Turn], duration: float) -> list[tuple[float, float]]:
    count, _, _ = _frames(turns, duration)
    return [(a * FRAME, b * FRAME) for a, b, v in _runs((count > 0).astype(int)) if v == 1]


@dataclass
class Recording:
    name: str
    audio: Path
    reference: list[Turn]
    uem: tuple[float, float]
    group: str  # "ami", "sample" or "demo"

    @property
    def speakers(self) -> list[str]:
        return sorted({s for *_, s in self.reference})


def load_recordings(data: Path, demo: bool = True) -> list[Recording]:
    import soundfile as sf

    recs = []
    ami = data / "ami-debug"
    rttm, uem = read_rttm(ami / "train.rttm"), read_uem(ami / "train.uem")
    for name in AMI:
        recs.append(Recording(name, ami / f"{name}.wav", rttm.get(name, []), uem[name], "ami"))
    sample = data / "pyannote-sample"
    ref = read_rttm(sample / "sample.rttm")["sample"]
    recs.append(Recording("sample", sample / "sample.wav", ref, (0.0, sf.info(sample / "sample.wav").duration),
                          "sample"))
    if demo:
        for folder in sorted((ROOT / "workspaces" / "demo" / "meetings").iterdir()):
            ref = next(iter(read_rttm(folder / "reference.rttm").values()))
            audio = folder / "audio.flac"
            recs.append(Recording(folder.name, audio, ref, (0.0, sf.info(audio).duration), "demo"))
    return recs


# ----------------------------------------------------------------------------- systems

@dataclass
class System:
    """One configuration of the cascade's VAD, clustering and identification."""

    name: str
    vad: dict[str, float] = field(default_factory=lambda: {
        "threshold": 0.5, "min_speech_s": 0.25, "min_silence_s": 1.0, "pad_s": 0.2})
    normalize_dbfs: float | None = None  # raise quieter audio to this level before the VAD
    clustering: dict[str, Any] | None = None  # Diarizer options (DiarizerOptions); None: the defaults
    identification: str = "raw"  # "raw" (cosine, identify()) or "snorm" (identify(normalization="snorm"))
    id_threshold: float = 0.65
    id_split_margin: float | None = None  # identify()'s split_margin (None: one-to-one pairing only)


BEFORE = System("before", clustering={"clustering": "threshold"})
AFTER = System("after", clustering={"clustering": "silhouette", "min_silhouette": 0.3},
               identification="snorm", id_threshold=0.5, id_split_margin=SPLIT_MARGIN)


class Runner:
    """Loads the models once and caches audio, VAD probabilities and window embeddings."""

    def __init__(self, device: str = "cpu") -> None:
        from speechkit.stages import make_backend
        from speechkit.stages.diarize.embedders import make_embedder

        self.vad = make_backend("vad", "silero", device=device)
        self.embedder = make_embedder("resemblyzer", device=device)
        self._audio: dict[Path, np.ndarray] = {}
        self._probs: dict[tuple, tuple[np.ndarray, float]] = {}
        self._emb: dict[tuple, np.ndarray] = {}

    def audio(self, path: Path) -> np.ndarray:
        if path not in self._audio:
            from speechkit.core.audio import load_audio
            self._audio[path] = np.asarray(load_audio(path), dtype=np.float32)
        return self._audio[path]

    @staticmethod
    def level_dbfs(x: np.ndarray) -> float | None:
        energy = float(np.mean(np.square(x, dtype=np.float64)))
        return 10 * math.log10(energy) if energy > 0 else None

    def speech(self, rec: Recording, system: System) -> list[tuple[float, float]]:
        from speechkit.stages.vad import VadOptions, regions_from_probabilities

        x = self.audio(rec.audio)
        key = (rec.audio, system.normalize_dbfs)
        if key not in self._probs:
            y = x
            level = self.level_dbfs(x)
            if system.normalize_dbfs is not None and level is not None and level < system.normalize_dbfs:
                y = (x * 10 ** ((system.normalize_dbfs - level) / 20)).clip(-1, 1).astype(np.float32)
            self._probs[key] = self.vad.probabilities(y)
        probs, step = self._probs[key]
        return regions_from_probabilities(probs, step, VadOptions(**system.vad), len(x) / 16000)

    def diarizer(self, system: System):
        """The stage's Diarizer with the system's options (its defaults where None)."""
        from speechkit.stages.diarize.embedding import Diarizer
        return Diarizer(embedder=self.embedder, **(system.clustering or {}))

    def diarize(self, rec: Recording, system: System, num_speakers: int | None = None):
        from speechkit.stages.diarize.embedding import sliding_windows

        d = self.diarizer(system)
        speech = [(s, e) for s, e in self.speech(rec, system) if e - s >= FRAME]
        if not speech:
            return d.from_embeddings(np.zeros((0, 256), np.float32), [], [], num_speakers)
        windows = sliding_windows(speech, d.options.window_s, d.options.step_s)
        x = self.audio(rec.audio)
        key = (rec.audio, tuple(windows))
        if key not in self._emb:
            self._emb[key] = self.embedder.embed_windows(x, windows, level_dbfs=self.level_dbfs(x))
        return d.from_embeddings(self._emb[key], windows, speech, num_speakers)

    def embed_segments(self, rec: Recording, segments: list[tuple[float, float]]) -> np.ndarray:
        """One embedding of the given stretches joined (as enrollment does)."""
        x = self.audio(rec.audio)
        return self.embedder.embed(np.concatenate([x[int(s * 16000):int(e * 16000)] for s, e in segments]))


# ----------------------------------------------------------------------------- metrics

def _annotation(turns: list[Turn]):
    from pyannote.core import Annotation, Segment

    ann = Annotation()
    for i, (s, e, spk) in enumerate(turns):
        if e > s:
            ann[Segment(s, e), i] = spk
    return ann


def der_components(rec: Recording, hyp: list[Turn], collar: float) -> dict[str, float]:
    from pyannote.core import Segment, Timeline
    from pyannote.metrics.diarization import DiarizationErrorRate, JaccardErrorRate

    uem = Timeline([Segment(*rec.uem)])
    ref = _annotation(rec.reference)
    c = DiarizationErrorRate(collar=2 * collar, skip_overlap=False)(ref, _annotation(hyp), uem=uem, detailed=True)
    jer = (JaccardErrorRate(collar=2 * collar, skip_overlap=False)(ref, _annotation(hyp), uem=uem)
           if rec.reference else 0.0)
    return {"total": c["total"], "missed": c["missed detection"], "false_alarm": c["false alarm"],
            "confusion": c["confusion"], "jer": float(jer)}


def pool(rows: list[dict[str, float]]) -> dict[str, float]:
    total = sum(r["total"] for r in rows)
    out = {k: sum(r[k] for r in rows) / total for k in ("missed", "false_alarm", "confusion")} if total else {}
    out["der"] = sum(out.values()) if total else 0.0
    out["jer"] = float(np.mean([r["jer"] for r in rows])) if rows else 0.0
    out["total_s"] = total
    return out


def _turns(diarization) -> list[Turn]:
    return [(t.start, t.end, t.speaker) for t in diarization.turns]


def evaluate_diarization(runner: Runner, recs: list[Recording], systems: list[System]) -> dict[str, Any]:
    """Per recording and pooled DER components for every system and baseline."""
    makers: dict[str, Callable[[Recording], list[Turn]]] = {
        "one label, oracle speech": lambda r: [(s, e, "A") for s, e in speech_union(r.reference, r.uem[1])],
        "one label, VAD speech": lambda r: [(s, e, "A") for s, e in runner.speech(r, systems[-1])],
    }
    for system in systems:
        makers[system.name] = lambda r, s=system: _turns(runner.diarize(r, s))
        makers[f"{system.name}, oracle count"] = lambda r, s=system: _turns(runner.diarize(r, s, len(r.speakers)))
    result: dict[str, Any] = {}
    for label, make in makers.items():
        per = {}
        for rec in recs:
            hyp = make(rec)
            per[rec.name] = {f"collar_{c}": der_components(rec, hyp, c) for c in COLLARS}
            per[rec.name]["speakers_est"] = len({s for *_, s in hyp})
            per[rec.name]["speakers_true"] = len(rec.speakers)
        result[label] = per
    return result


def summarize(per_system: dict[str, Any], recs: list[Recording]) -> dict[str, Any]:
    sets = {"ami-tune (trn00-04)": TUNE, "ami-held-out (trn05-09)": HELD_OUT, "ami (all)": AMI,
            "pyannote sample": ["sample"], "demo": [r.name for r in recs if r.group == "demo"]}
    out: dict[str, Any] = {}
    present = {r.name for r in recs}
    for label, per in per_system.items():
        out[label] = {}
        for set_name, names in sets.items():
            names = [n for n in names if n in present]
            if not names:
                continue
            entry = {f"collar_{c}": pool([per[n][f"collar_{c}"] for n in names]) for c in COLLARS}
            entry["count_within_one"] = sum(abs(per[n]["speakers_est"] - per[n]["speakers_true"]) <= 1 for n in names)
            entry["count_exact"] = sum(per[n]["speakers_est"] == per[n]["speakers_true"] for n in names)
            entry["recordings"] = len(names)
            entry["counts"] = {n: [per[n]["speakers_est"], per[n]["speakers_true"]] for n in names}
            out[label][set_name] = entry
    return out


# ----------------------------------------------------------------------------- speaker counts

def speaker_seconds(rec: Recording) -> dict[str, tuple[float, float]]:
    """Per reference speaker: seconds of speech (overlapped speech included) and of solo speech."""
    speech: dict[str, float] = defaultdict(float)
    solo: dict[str, float] = defaultdict(float)
    for s, e, spk in rec.reference:
        speech[spk] += e - s
    for s, e, spk in solo_segments(rec.reference, rec.uem[1]):
        solo[spk] += e - s
    return {spk: (round(float(speech[spk]), 2), round(float(solo[spk]), 2)) for spk in sorted(speech)}


# Counts that only look at the reference: how many speakers a system could find at best if it
# finds exactly the speakers with enough speech, and a constant guess.
COUNT_BOUNDS: dict[str, Callable[[dict[str, tuple[float, float]]], int]] = {
    "speakers with >= 2 s of speech (overlap included)": lambda t: sum(v[0] >= 2.0 for v in t.values()),
    "speakers with >= 1.5 s of solo speech (one window)": lambda t: sum(v[1] >= 1.5 for v in t.values()),
    "speakers with >= 1 s of solo speech": lambda t: sum(v[1] >= 1.0 for v in t.values()),
    "constant 3": lambda t: 3,
}


def count_bounds(recs: list[Recording]) -> dict[str, Any]:
    """Speaker seconds per AMI excerpt and, for each rule of :data:`COUNT_BOUNDS`, its counts
    (at least 1) and on how many excerpts they are within one of the truth."""
    ami = [r for r in recs if r.group == "ami"]
    seconds = {r.name: speaker_seconds(r) for r in ami}
    rules = {}
    for rule, count in COUNT_BOUNDS.items():
        counts = {r.name: max(1, int(count(seconds[r.name]))) for r in ami}
        rules[rule] = {"counts": counts,
                       "within_one": sum(int(abs(counts[r.name] - len(r.speakers)) <= 1) for r in ami)}
    return {"speaker_seconds": seconds, "rules": rules}


# ----------------------------------------------------------------------------- identification

def _name_clusters(system: System, centroids: dict[str, np.ndarray], enrollments: dict[str, np.ndarray]):
    from speechkit.stages.identify import identify
    normalization = "snorm" if system.identification == "snorm" else "none"
    return identify(centroids, enrollments, threshold=system.id_threshold, normalization=normalization,
                    split_margin=system.id_split_margin)


def evaluate_identification(runner: Runner, recs: list[Recording], system: System,
                            min_enroll_s: float = 0.5) -> dict[str, Any]:
    by_name = {r.name: r for r in recs}
    out: dict[str, Any] = {"pairs": {}, "oracle_pairs": {}}
    for mode in ("system", "oracle"):
        accs, fa, impostor = [], 0.0, 0.0
        for a, b in ID_PAIRS:
            ra, rb = by_name[a], by_name[b]
            solo_a: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for s, e, spk in solo_segments(ra.reference, ra.uem[1]):
                solo_a[spk].append((s, e))
            enrollments = {spk: runner.embed_segments(ra, segs) for spk, segs in solo_a.items()
                           if sum(e - s for s, e in segs) >= min_enroll_s}
            solo_b = solo_segments(rb.reference, rb.uem[1])
            frames = np.full(math.ceil(rb.uem[1] / FRAME) + 1, None, dtype=object)
            if mode == "system":
                d = runner.diarize(rb, system)
                names = _name_clusters(system, d.centroids, enrollments)
                for t in d.turns:
                    frames[round(t.start / FRAME):round(t.end / FRAME)] = names.get(t.speaker)
            else:
                segs_b: dict[str, list[tuple[float, float]]] = defaultdict(list)
                for s, e, spk in solo_b:
                    if e - s >= 0.1:
                        segs_b[spk].append((s, e))
                vecs = {spk: runner.embed_segments(rb, v) for spk, v in segs_b.items()}
                names = _name_clusters(system, vecs, enrollments)
                for spk, v in segs_b.items():
                    for s, e in v:
                        frames[round(s / FRAME):round(e / FRAME)] = names.get(spk)
            right = total = fa_pair = imp_pair = 0.0
            for s, e, spk in solo_b:
                i, j = round(s / FRAME), round(e / FRAME)
                if spk in enrollments:
                    total += (j - i) * FRAME
                    right += float(np.sum(frames[i:j] == spk)) * FRAME
                else:
                    imp_pair += (j - i) * FRAME
                    fa_pair += float(np.sum(np.not_equal(frames[i:j], None))) * FRAME
            fa += fa_pair
            impostor += imp_pair
            if total > 0:
                accs.append(right / total)
            out["pairs" if mode == "system" else "oracle_pairs"][f"{a}->{b}"] = {
                "enrolled": sorted(enrollments), "named_right": right / total if total else None,
                "target_solo_s": round(total, 2), "impostor_solo_s": round(imp_pair, 2),
                "false_accept_s": round(fa_pair, 2)}
        key = "system" if mode == "system" else "oracle"
        out[key] = {"named_right": float(np.mean(accs)) if accs else 0.0, "pairs_scored": len(accs),
                    "false_accept": fa / impostor if impostor else 0.0}
    return out


def evaluate_demo_naming(runner: Runner, recs: list[Recording], system: System) -> float | None:
    """Share of the demo meetings' solo speech time named as the right person (enrollments of
    the demo workspace, people keyed by id as in the reference RTTMs)."""
    demo = [r for r in recs if r.group == "demo"]
    if not demo:
        return None
    folder = ROOT / "workspaces" / "demo" / "enrollments"
    enrollments = {}
    for clip in sorted(folder.glob("p*.flac")):
        enrollments[clip.stem] = runner.embedder.embed(runner.audio(clip))
    right = total = 0.0
    for rec in demo:
        d = runner.diarize(rec, system)
        names = _name_clusters(system, d.centroids, enrollments)
        frames = np.full(math.ceil(rec.uem[1] / FRAME) + 1, None, dtype=object)
        for t in d.turns:
            frames[round(t.start / FRAME):round(t.end / FRAME)] = names.get(t.speaker)
        for s, e, spk in solo_segments(rec.reference, rec.uem[1]):
            i, j = round(s / FRAME), round(e / FRAME)
            total += (j - i) * FRAME
            right += float(np.sum(frames[i:j] == spk)) * FRAME
    return right / total if total else None


# ----------------------------------------------------------------------------- report

def run(data: Path = DEFAULT_DATA, demo: bool = True, systems: list[System] | None = None,
        device: str = "cpu") -> dict[str, Any]:
    systems = systems or [BEFORE, AFTER]
    started = time.time()
    recs = load_recordings(data, demo)
    runner = Runner(device)
    per = evaluate_diarization(runner, recs, systems)
    report: dict[str, Any] = {
        "collars_s_each_side": list(COLLARS),
        "systems": {s.name: s.__dict__ for s in systems},
        "diarization": summarize(per, recs),
        "per_recording": per,
        "identification": {s.name: evaluate_identification(runner, recs, s) for s in systems},
        "demo_named_right": {s.name: evaluate_demo_naming(runner, recs, s) for s in systems},
        "count_bounds": count_bounds(recs),
    }
    report["seconds"] = round(time.time() - started, 1)
    return report


def markdown(report: dict[str, Any]) -> str:
    lines = ["# Real-speech evaluation", "",
             ("DER components pooled over recordings (overlap scored); collar in seconds each side. "
             "Count: estimated speakers within one of the truth / recordings."), ""]
    for set_name in ("ami (all)", "ami-tune (trn00-04)", "ami-held-out (trn05-09)", "pyannote sample", "demo"):
        rows = [(label, d[set_name]) for label, d in report["diarization"].items() if set_name in d]
        if not rows:
            continue
        lines += [f"## {set_name}", "",
                  "| system | DER c0.25 | missed | false alarm | confusion | JER c0.25 | DER c0 | JER c0 "
                  "| count within 1 |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for label, e in rows:
            c, z = e["collar_0.25"], e["collar_0.0"]
            lines.append(f"| {label} | {c['der']:.3f} | {c['missed']:.3f} | {c['false_alarm']:.3f} | "
                         f"{c['confusion']:.3f} | {c['jer']:.3f} | {z['der']:.3f} | {z['jer']:.3f} | "
                         f"{e['count_within_one']}/{e['recordings']} |")
        lines.append("")
    lines += ["## Speaker counts (estimated/true)", "", "| system | " + " | ".join(
        next(iter(report["diarization"].values()))["ami (all)"]["counts"]) + " |",
        "|---|" + "---|" * 10]
    for label, d in report["diarization"].items():
        lines.append(f"| {label} | " + " | ".join(f"{a}/{b}" for a, b in d["ami (all)"]["counts"].values()) + " |")
    bounds = report["count_bounds"]
    lines += ["", "## What the reference allows a speaker count to reach", "",
              "Seconds of speech / of solo speech per reference speaker:", ""]
    lines += [f"- {name}: " + ", ".join(f"{spk} {a:.1f}/{b:.1f}" for spk, (a, b) in spk_s.items())
              for name, spk_s in bounds["speaker_seconds"].items()]
    lines += ["", "| count rule (from the reference) | " + " | ".join(bounds["speaker_seconds"]) + " | within 1 |",
              "|---|" + "---|" * (len(bounds["speaker_seconds"]) + 1)]
    for rule, b in bounds["rules"].items():
        lines.append(f"| {rule} | " + " | ".join(str(c) for c in b["counts"].values())
                     + f" | {b['within_one']}/{len(b['counts'])} |")
    lines += ["", "## Cross-excerpt identification", "",
              "| system | named right (clusters) | false accept (clusters) | named right (oracle segments) "
              "| false accept (oracle segments) | demo named right |",
              "|---|---|---|---|---|---|"]
    for name, r in report["identification"].items():
        demo = report["demo_named_right"].get(name)
        lines.append(f"| {name} | {r['system']['named_right']:.3f} ({r['system']['pairs_scored']} pairs) | "
                     f"{r['system']['false_accept']:.3f} | {r['oracle']['named_right']:.3f} | "
                     f"{r['oracle']['false_accept']:.3f} | {'-' if demo is None else f'{demo:.3f}'} |")
    lines += ["", "Per pair (clusters, after): " + ", ".join(
        f"{p} {v['named_right']:.2f}" if v["named_right"] is not None else f"{p} -"
        for p, v in report["identification"][list(report["identification"])[-1]]["pairs"].items()), "",
        f"Run time {report['seconds']} s.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder for real-speech.md and real-speech.json")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the realdata folder (default ../shared/realdata)")
    p.add_argument("--no-demo", action="store_true", help="skip the demo workspace's meetings")
    p.add_argument("--device", default="cpu")
    args = p.parse_args(argv)
    report = run(args.data, not args.no_demo, device=args.device)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "real-speech.json").write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    text = markdown(report)
    (args.out / "real-speech.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
