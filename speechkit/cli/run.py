"""speechkit run: run one recipe over a workspace, score it and write a report."""
from __future__ import annotations

import argparse
from pathlib import Path

#: The flag that names the program a whole system's backend runs (``--system-command``: only the
#: command line names it, :func:`speechkit.core.options.command_line`).
SYSTEM_COMMAND = "--system-command"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a recipe over a workspace, score it and write a report",
                       description="Run the cascade named by RECIPE over every meeting of a workspace in "
                                   "calendar order, write per-meeting SegLST/STM/RTTM, scores.json, "
                                   "report.md/.html and run.json into OUT. A rerun reuses the stage cache.")
    p.add_argument("recipe", help="recipe YAML file, or a shipped name (whisper, ctc; l1..l3 and ctc-l1..ctc-l3 "
                                  "fix the level)")
    p.add_argument("--level", "-L", type=int, choices=(1, 2, 3),
                   help="context level (required unless the recipe or its name fixes one)")
    p.add_argument("--workspace", "-w", type=Path, required=True, help="workspace folder (with workspace.yaml)")
    add_run_options(p)
    p.set_defaults(handler=run)


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options shared by `run` and `recipe`: output folder, model and device overrides, executor."""
    p.add_argument("--out", "-o", type=Path, help="run folder (default runs/<recipe>-<workspace>)")
    p.add_argument("--cache-dir", type=Path,
                   help="stage cache folder, which runs may share (default: OUT/cache, shared by the levels "
                        "of --level all; runs/cache for runs in the default folders)")
    p.add_argument("--model", help="override the ASR model of the recipe (registry name or path)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="override the recipe's device")
    add_set_option(p)
    p.add_argument(SYSTEM_COMMAND, metavar="'PROGRAM ARGS'", type=program_words,
                   help="the program the command recipe runs once per meeting as `PROGRAM ARGS INPUTS OUTPUTS` "
                        "(docs/systems.md); given here only, never in a recipe")
    p.add_argument("--llm-failures", choices=("fail", "allow"),
                   help="LLM stages: fail the run when the endpoint or model is unavailable or requests fail "
                        "(fail, the recipes' default), or go on and state the failed share in the report (allow)")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="where stages run: this process (local, the default) or a Ray cluster (ray; "
                        "needs speechkit[ray], see docs/ray.md)")
    p.add_argument("--address", help="Ray cluster to join with --executor ray (e.g. head-node:6379; "
                                     "default: $RAY_ADDRESS, else a Ray instance on this machine)")


def add_set_option(p: argparse.ArgumentParser) -> None:
    """``--set KEY=VALUE``, repeatable: a recipe option (shared by `run`, `recipe` and `transcribe`)."""
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                   help="set a recipe option, checked as the recipe file's are (repeatable): asr.language=de, "
                        "diarize.max_speakers=3, context.hotwords=10, steps.judge.model=NAME (adds the step); "
                        "VALUE is read as YAML; "
                        "`speechkit recipe --show-options` lists every option")


def program_words(text: str) -> tuple[str, ...]:
    """``--system-command``'s value split as a POSIX shell splits it (no shell runs it)."""
    import shlex
    try:
        words = tuple(shlex.split(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"cannot split {text[:80]!r}: {exc}") from None
    if not words:
        raise argparse.ArgumentTypeError("expected a program and its arguments, got nothing")
    return words


def cache_dir(args: argparse.Namespace) -> Path:
    """The stage cache of a run: ``--cache-dir``; else the cache in the folder the user named
    (``--out``); else the one that every run under the default ``runs/`` shares."""
    from speechkit.io.run_folder import RUNS
    if args.cache_dir is not None:
        return args.cache_dir
    return args.out / "cache" if args.out is not None else RUNS / "cache"


def print_summary(scores: dict) -> None:
    """Print the aggregate figures with their 95% CIs (n/a with the reason)."""
    from speechkit.io.markdown import estimate
    from speechkit.io.scores import Scores
    from speechkit.scoring.catalogue import catalogue

    cat = catalogue()
    for key in cat.table_order:
        print(f"  {cat.metrics[key].label:<22} {estimate(Scores(scores), cat.metrics[key])}")


def run(args: argparse.Namespace) -> int:
    from speechkit.executors import Job, make_executor
    from speechkit.io.manifest import load_workspace
    from speechkit.llm.run import with_failure_policy
    from speechkit.recipe import load_recipe, parse_settings
    from speechkit.runner import default_out

    recipe = load_recipe(args.recipe, level=args.level).with_overrides(model=args.model, device=args.device)
    recipe = recipe.with_settings(parse_settings(args.settings)).with_command_line(SYSTEM_COMMAND, args.system_command)
    recipe = with_failure_policy(recipe, args.llm_failures)
    ws = load_workspace(args.workspace)
    executor = make_executor(args.executor, args.address)
    [result] = executor.run(recipe, [Job(ws, args.out or default_out(recipe, ws), cache_dir(args))])
    print_summary(result.scores)
    print(f"wrote {result.out}/ (scores.json, report.md, report.html, run.json, transcripts/)")
    return 0
