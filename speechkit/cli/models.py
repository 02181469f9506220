"""``speechkit models``: list the models of the registry and fetch them from the hub."""
from __future__ import annotations

import argparse

EPILOG = """\
examples:
  speechkit models list                  what each stage can use, what is here offline, which backends
                                         work, what each shipped recipe needs
  speechkit models list --stage asr
  speechkit models fetch whisper-small   download on a machine with a network (Hugging Face cache)

Models are looked up in pip packages, then in $SPEECHKIT_MODELS_DIR/NAME (default
~/.cache/speechkit/models/NAME), then in the Hugging Face cache; the registry is models/registry.yaml.
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "models", help="list the models the stages can use; fetch them on a machine with a network",
        description="The model registry: which models each stage can use and which are on this machine.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(handler=list_models, stage=None)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="table of models (stage, backend, available offline, size, "
                                               "licence) and of the backends usable on this machine")
    listing.add_argument("--stage", choices=("vad", "asr", "diarize", "embed", "correct"),
                         help="show only the models of this stage")
    listing.set_defaults(handler=list_models)
    fetching = actions.add_parser("fetch", help="download models from the Hugging Face Hub into its cache")
    fetching.add_argument("names", nargs="+", metavar="NAME", help="registry name(s), as `models list` shows")
    fetching.set_defaults(handler=fetch_models)


def list_models(args: argparse.Namespace) -> int:
    from speechkit import registry
    rows = [("NAME", "STAGE", "BACKEND", "OFFLINE", "SIZE", "LICENCE")]
    for record in registry.load_registry().values():
        if args.stage and record.stage != args.stage:
            continue
        source = registry.source_of(record.name)
        rows.append((record.name, record.stage, record.backend, f"yes ({source})" if source else "no",
                     _size(record.size_mb), record.licence))
    _table(rows)
    from speechkit.doctor import check_backends
    backends = [("STAGE", "BACKEND", "USABLE HERE", "WHY NOT / HOW TO GET IT")]
    for check in check_backends():
        stage, backend = check.name.split(" ", 1)
        if not args.stage or args.stage == stage or (args.stage == "embed" and backend.startswith("embedding+")):
            backends.append((stage, backend, "yes" if check.ok else "no",
                             "" if check.ok else f"{check.detail}: {check.fix}"))
    print()
    _table(backends)
    if not args.stage:
        print()
        _table(recipe_needs())
    return 0


def recipe_needs() -> list[tuple[str, ...]]:
    """A row per shipped recipe: the registry models it loads, whether they are here (else the
    command that fetches them on a machine with a network), and the models its LLM stages ask
    an endpoint for (``environment``: the one ``SPEECHKIT_LLM_MODEL`` names, else the local one)."""
    from speechkit.llm.run import llm_stages
    from speechkit.preflight import missing_models, needed_models
    from speechkit.recipe import load_recipe, recipes_dir

    rows = [("RECIPE", "MODELS IT NEEDS", "HERE", "ENDPOINT MODELS")]
    for path in sorted(recipes_dir().glob("*.yaml")):
        recipe = load_recipe(path)
        needed = ", ".join(dict.fromkeys(name for name, _ in needed_models(recipe))) or "-"
        missing = list(dict.fromkeys(name for name, _ in missing_models(recipe)))
        asked = ", ".join(dict.fromkeys(o.model or "environment" for o in llm_stages(recipe).values())) or "-"
        rows.append((path.stem, needed, f"no: speechkit models fetch {' '.join(missing)}" if missing else "yes",
                     asked))
    return rows


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


def fetch_models(args: argparse.Namespace) -> int:
    from speechkit import registry
    for name in args.names:
        print(f"{name}: {registry.fetch(name)}")
    return 0


def _size(mb: float) -> str:
    return f"{mb / 1000:.1f} GB" if mb >= 1000 else f"{mb:g} MB"
