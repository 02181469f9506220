"""speechkit doctor: check the installation and say how to fix what is missing."""
from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check packages, tools, offline models and devices",
                       description="Check the installation: Python packages, system tools (ffmpeg, "
                                   "espeak-ng, ...), models available offline and GPU devices. Prints what "
                                   "is missing and how to fix it; exits 1 if something the default recipes "
                                   "need is missing.")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from speechkit.doctor import run_checks

    checks = run_checks()
    group = None
    for c in checks:
        if c.group != group:
            group = c.group
            print(f"\n{group}s")
        mark = "ok " if c.ok else ("MISSING" if c.required else "absent ")
        print(f"  [{mark}] {c.name:<28} {c.detail}")
        if not c.ok and c.fix:
            print(f"            fix: {c.fix}")
    missing = [c.name for c in checks if c.required and not c.ok]
    print("\n" + (f"missing (required): {', '.join(missing)}" if missing
                  else "everything the default recipes need is here"))
    return 1 if missing else 0
