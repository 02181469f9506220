"""speechkit recipe: the `make recipe` entry point: pick the recipe for a level and backend and run it."""
from __future__ import annotations

import argparse
from pathlib import Path

from speechkit.cli.run import SYSTEM_COMMAND, add_run_options, cache_dir, print_summary

DEFAULT_WORKSPACE = Path(__file__).resolve().parents[2] / "workspaces" / "demo"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recipe", help="run the shipped recipe for a context level (what `make recipe` calls)",
                       description="Run the shipped recipe of an ASR backend family at context level L "
                                   "(1, 2, 3 or all) on a workspace. With --level all, runs L1-L3 into "
                                   "OUT/l1, OUT/l2, OUT/l3, which share one stage cache (see --cache-dir), and writes "
                                   "OUT/comparison.md and .html; --ablations adds L3 without each of its "
                                   "streams (voice enrollments, workspace text).")
    p.add_argument("--level", "-L", default="3", choices=("1", "2", "3", "all"), help="context level (default 3)")
    p.add_argument("--asr", default="whisper", metavar="RECIPE",
                   help="the shipped recipe (backend family) to run: whisper (default), ctc, ... "
                        "(the files in speechkit/recipes)")
    p.add_argument("--workspace", "-w", type=Path, default=DEFAULT_WORKSPACE,
                   help="workspace folder (default: the demo workspace shipped in workspaces/demo)")
    p.add_argument("--ablations", action="store_true",
                   help="with --level all: also run L3 without the voice enrollments and without the workspace "
                        "text (context.ablate) into OUT/l3-no-enrollments and OUT/l3-no-text, and show in the "
                        "comparison which stream each metric's L1 -> L3 gain comes from")
    p.add_argument("--show-options", action="store_true",
                   help="print every stage backend's options (type, default, bounds, doc) and exit")
    add_run_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from speechkit.compare import Run, ablation, compare
    from speechkit.executors import Job, make_executor
    from speechkit.io.manifest import load_workspace
    from speechkit.io.run_folder import LevelsFolder, default_folder
    from speechkit.io.scores import Scores
    from speechkit.llm.run import with_failure_policy
    from speechkit.recipe import ABLATIONS, RecipeError, load_recipe, parse_settings
    from speechkit.report.comparison import write_comparison

    if args.show_options:
        from speechkit.cli.options_reference import options_reference
        print(options_reference(), end="")
        return 0
    settings = parse_settings(args.settings)
    if args.ablations and args.level != "all":
        raise RecipeError("--ablations", "needs --level all (the ablation is set against L1 and L3); one ablated "
                                         "run: --level 3 --set context.ablate=enrollments (or text)")
    ws = load_workspace(args.workspace)
    executor = make_executor(args.executor, args.address)
    levels = (1, 2, 3) if args.level == "all" else (int(args.level),)
    folder = LevelsFolder(args.out) if args.out is not None else None
    runs = {}
    for level in levels:
        recipe = with_failure_policy(load_recipe(args.asr, level=level).with_overrides(
            model=args.model, device=args.device).with_settings(settings).with_command_line(
            SYSTEM_COMMAND, args.system_command), args.llm_failures)
        if args.ablations and recipe.context.ablate != "none":
            raise RecipeError("--ablations", f"context.ablate is set to {recipe.context.ablate}: the ablations "
                                             "set it themselves, and L3 is the run without any stream left out")
        if folder is None:
            folder = default_folder(recipe.family, ws.name)
        out = folder.level(level).root if args.level == "all" or args.out is None else args.out
        [result] = executor.run(recipe, [Job(ws, out, cache_dir(args))])
        print(f"== {recipe.name} ({result.out})")
        print_summary(result.scores)
        runs[level] = result
    ablated = {}
    for stream in ABLATIONS if args.ablations else ():
        [ablated[stream]] = executor.run(recipe.with_settings({"context.ablate": stream}, "--ablations"),
                                         [Job(ws, folder.ablation(stream).root, cache_dir(args))])
        print(f"== {recipe.name} without {stream} ({ablated[stream].out})")
        print_summary(ablated[stream].scores)
    if args.level == "all":
        levels_compared = [Run(f"L{n}", folder.level(n).root, Scores(r.scores)) for n, r in runs.items()]
        comparison = compare(levels_compared, min_meetings=recipe.statistics.min_meetings)
        if ablated:
            without = {stream: Run(f"L3 w/o {stream}", folder.ablation(stream).root, Scores(r.scores))
                       for stream, r in ablated.items()}
            comparison.ablation = ablation(levels_compared[0], levels_compared[-1], without,
                                           min_meetings=recipe.statistics.min_meetings)
        write_comparison(folder.root, comparison)
        print(f"wrote {folder.comparison('.md')} and {folder.comparison('.html')}")
    return 0
