"""speechkit bench: speed and memory of speechkit's ASR stage and cascades against bare faster-whisper."""
from __future__ import annotations

import argparse
from pathlib import Path


def _lengths(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole multiples such as 1,4,16, got {text!r}")
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive multiples such as 1,4,16, got {text!r}")
    return values


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
    from speechkit.bench import CONFIGS, REALDATA

    p = sub.add_parser("bench", help="speed and memory benchmark against bare faster-whisper",
                       description="Measure, on the same audio, model and threads: bare faster-whisper "
                                   "(sequential and batched), speechkit's ASR stage, the L1 and the L3 "
                                   "cascade (wall time, real-time factor, peak memory, WER), each in its "
                                   "own process; then the L3 cascade on the audio repeated --lengths "
                                   "times. Writes bench.json and bench.md into OUT.")
    p.add_argument("--out", "-o", type=Path, default=Path("runs/bench"),
                   help="folder for bench.json, bench.md and the built audio (default runs/bench)")
    p.add_argument("--model", default="tiny.en", help="ASR model, registry name (default tiny.en)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="device for every stage (default cpu)")
    p.add_argument("--compute-type", help="CTranslate2 compute type (default int8 on cpu, float16 on cuda)")
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads for CTranslate2 and torch in every configuration (default: all cores)")
    p.add_argument("--repeats", type=_positive, default=3,
                   help="timed runs per configuration; medians reported (default 3)")
    p.add_argument("--lengths", type=_lengths, default=(1, 4, 16),
                   help="multiples of the audio for the length sweep, comma-separated (default 1,4,16)")
    p.add_argument("--audio", type=Path,
                   help="base recording (default: 274 s of real speech from the realdata folder)")
    p.add_argument("--realdata", type=Path, default=REALDATA,
                   help=f"folder of real recordings for enrollments and WER references (default {REALDATA})")
    p.add_argument("--context", type=Path,
                   help="workspace whose first meeting gives the L3 cascade its context (default: "
                        "workspaces/demo if present, else a small one built around the audio)")
    p.add_argument("--configs", default=",".join(CONFIGS),
                   help=f"configurations to run, comma-separated (default {','.join(CONFIGS)})")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from speechkit.bench import BenchOptions, run_bench
    from speechkit.errors import SpeechkitError

    try:
        options = BenchOptions(out=args.out, model=args.model, device=args.device,
                               compute_type=args.compute_type, threads=args.threads, repeats=args.repeats,
                               lengths=args.lengths, audio=args.audio, realdata=args.realdata,
                               context=args.context,
                               configs=tuple(c.strip() for c in args.configs.split(",") if c.strip()))
    except ValueError as exc:
        raise SpeechkitError(str(exc)) from None
    run_bench(options)
    print((options.out / "bench.md").read_text(encoding="utf-8"), end="")
    print(f"wrote {options.out}/bench.json and bench.md")
    return 0
