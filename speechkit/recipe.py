"""Recipes: YAML files that name the stages of a cascade, their backends and options.

A recipe is data, not code: one file per backend family (``whisper``, ``ctc``, ...), the context
level given when it is run. Its keys:

```yaml
name: whisper
device: auto                  # auto | cpu | cuda, passed to every stage
level: 3                      # optional: a fixed context level (else given at run time)
stages:                       # each stage: a backend and its options (docs/architecture.md)
  vad: {backend: silero, threshold: 0.5}
  asr: {backend: whisper, model: tiny.en}
  diarize: {backend: embedding, embedder: resemblyzer}
  identify: {threshold: 0.65}                 # optional: defaults
  attribute: {}                               # optional: defaults
  correct: {backend: lexicon}                 # optional; runs when the context has a vocabulary
context: {prompt_tokens: 200, hotwords: 40, prior_terms: 20}   # budgets, see speechkit.context
resources:                    # optional; what the Ray executor requests per stage (docs/ray.md)
  asr: {num_gpus: 1, num_cpus: 1, batch_size: 4, concurrency: 2}
steps:                        # optional: post-run steps, run in this order before scoring (speechkit.steps)
  qa: {backend: extractive}   # answer the workspace's gold questions from the run's output
```

Every key is checked on load, before any audio is read: an unknown option (with the nearest known
one as a hint), a value of the wrong type, not finite or out of range, a choice that is not one,
in a stage, the ``context`` block (:class:`ContextBudget`) or ``resources``
(:class:`StageResources`), is a :class:`RecipeError` naming the file and the option's path
(``recipes/x.yaml: context.hotwords: expected an integer in [0, 10000], got -3``, exit code 2);
see :mod:`speechkit.core.options`. The file is read as the workspace manifest is
(:mod:`speechkit.io.yamlfile`: a regular file, no duplicate keys, alias bombs or deep nesting).
The recipes shipped with speechkit live in the package (``speechkit/recipes``,
also reachable as ``recipes/`` in a checkout); ``l1``..``l3`` and ``ctc-l1``..``ctc-l3`` name a
shipped recipe at a level.

``resources`` names stages (the Ray executor runs those that read the recording over every
meeting first: docs/ray.md) and ``workspace`` (the worker that runs a workspace's meetings in
calendar order with their context); see :class:`StageResources`. The local executor ignores it.
``steps`` names the post-run steps (:mod:`speechkit.steps`), each a mapping of its options.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from speechkit.core.options import OptionError, StageOptions, bounded
from speechkit.core.stage import Spec
from speechkit.errors import FormatError, brief
from speechkit.io._lines import read_text
from speechkit.io.names import id_problem
from speechkit.io.yamlfile import parse_yaml
from speechkit.level_rules import RuleSet
from speechkit.metrics.bootstrap import MIN_MEETINGS
from speechkit.stages import DEFAULT_STAGES, OPTIONAL_STAGES, STAGES, parse_stage, whole_stages
from speechkit.steps import STEPS, parse_step

RECIPE_KEYS = {"name", "level", "device", "stages", "context", "resources", "steps", "statistics"}
#: What ``resources`` names besides the stages: the worker that runs a workspace's meetings.
WORKSPACE_WORKER = "workspace"
LEVELS = (1, 2, 3)
#: ``context.ablate``: the L3 stream left out (none: the whole L3 context).
Ablation = Literal["none", "enrollments", "text"]
#: The streams the L3 ablation leaves out, one run each (``speechkit recipe --level all --ablations``).
ABLATIONS: tuple[str, ...] = get_args(Ablation)[1:]
_LEVEL_NAME = re.compile(r"^(?:(?P<family>[\w.-]+)-)?l(?P<level>[123])$")


class RecipeError(FormatError):
    """A recipe cannot be used: missing, malformed, or an option is unknown or invalid."""

    exit_code = 2


def recipes_dir() -> Path:
    """The folder of the recipes shipped in the package."""
    return Path(str(resources.files("speechkit") / "recipes"))


@dataclass(frozen=True)
class ContextBudget(StageOptions):
    """How much context each level may add (every addition is logged with its size): the
    recipe's ``context`` block, checked on load like a stage's options (bounds in brackets).

    ``prompt_tokens`` [0, 100000]: approximate token budget of the ASR prompt (words x 1.3).
    ``hotwords`` [0, 10000]: most hot words given to the recognizer.
    ``prior_terms`` [0, 10000]: most frequent rare words taken from the system's own earlier
    transcripts (L2+).
    ``rare_zipf`` [0, 8]: a word is rare when its wordfreq Zipf frequency is below this.
    ``prior_min_confidence`` [0, 1]: least ASR word confidence for a word of an earlier transcript
    to be learnt from (rare words and LM text, L2+); words in windows the ASR loop control flagged
    never are.
    ``prior_min_segments`` [1, 10000]: least number of segments (of any earlier meetings) in which a
    rare word must have been recognised confidently to become a hot word and correction term.
    ``notes_prior_bytes``, ``notes_roster_bytes``, ``notes_emails_bytes``, ``notes_agenda_bytes``
    [0, 1000000]: UTF-8 bytes of the notes context (the ``summarize`` stage's) for the system's
    own notes of earlier meetings (L2+), the roster, the digest of the emails and the meeting's
    title, kind and agenda (L3); never cut inside a character, the roster only by whole people.
    ``invite_speaker_count``: at L3 the number of people a meeting invited (its manifest's
    attendees) is the diarizer's speaker count; an invited person who never speaks then splits
    another voice in two (false: the count is estimated, as at L1 and L2).
    ``ablate`` (none, enrollments, text): the L3 ablation, one L3 stream left out
    (:func:`speechkit.context.build_context`): ``enrollments`` the voice enrollments; ``text`` the
    workspace text (roster names, jargon, the documents' terms, the prompt, their LM text and hot
    words, the notes context's roster, emails and agenda), keeping the L2 streams, the enrollments
    and the invite's speaker count. L1 and L2 have neither stream, so it changes nothing there.
    ``rules`` (speechkit, paper): the levels' rules (:mod:`speechkit.level_rules`): speechkit's, or
    the OSynth paper's as written (section 4.2, Appendix V; docs/systems.md, "Level rules").
    """

    prompt_tokens: int = bounded(200, ge=0, le=100_000)
    hotwords: int = bounded(40, ge=0, le=10_000)
    prior_terms: int = bounded(20, ge=0, le=10_000)
    rare_zipf: float = bounded(3.0, ge=0.0, le=8.0)
    prior_min_confidence: float = bounded(0.8, ge=0.0, le=1.0)
    prior_min_segments: int = bounded(2, ge=1, le=10_000)
    notes_prior_bytes: int = bounded(1000, ge=0, le=1_000_000)
    notes_roster_bytes: int = bounded(600, ge=0, le=1_000_000)
    notes_emails_bytes: int = bounded(1200, ge=0, le=1_000_000)
    notes_agenda_bytes: int = bounded(400, ge=0, le=1_000_000)
    invite_speaker_count: bool = True
    ablate: Ablation = "none"
    rules: RuleSet = "speechkit"


@dataclass(frozen=True)
class Statistics(StageOptions):
    """How `--level all` compares the levels: the recipe's ``statistics`` block.

    ``min_meetings`` [0, 100000]: fewest meetings for which a paired delta may be called
    significant; over fewer, the interval is shown and no star, with the reason (a bootstrap over
    two or three meetings gives intervals too narrow to mean anything).
    """

    min_meetings: int = bounded(MIN_MEETINGS, ge=0, le=100_000)


@dataclass(frozen=True)
class StageResources(StageOptions):
    """What one Ray worker of a stage asks for, and how many of them may run (bounds in brackets).

    ``num_cpus``, ``num_gpus`` [0, 1024]: reserved per worker (fractions allowed; a worker without
    a GPU runs on the CPU under ``device: auto``). ``batch_size`` [1, 100000]: meetings
    (workspaces, for ``workspace``) handed to a worker per call. ``concurrency`` [1, 100000]: most
    workers at once (None: as many as the cluster fits and there is work for).
    """

    num_cpus: float = bounded(1.0, ge=0.0, le=1024.0)
    num_gpus: float = bounded(0.0, ge=0.0, le=1024.0)
    batch_size: int = bounded(1, ge=1, le=100_000)
    concurrency: int | None = bounded(None, ge=1, le=100_000)


@dataclass(frozen=True)
class Recipe:
    """A validated recipe: each stage's :class:`~speechkit.stages.Spec`, defaults filled in.

    ``level`` is None until a level is chosen (:meth:`at_level`); running needs one.
    """

    name: str
    level: int | None
    stages: dict[str, Spec]
    context: ContextBudget = field(default_factory=ContextBudget)
    device: str = "auto"
    path: Path | None = None
    resources: dict[str, StageResources] = field(default_factory=dict)
    steps: dict[str, Spec] = field(default_factory=dict)
    statistics: Statistics = field(default_factory=Statistics)

    @property
    def family(self) -> str:
        """The recipe's name without the level :meth:`at_level` added (``whisper`` of ``whisper-l3``):
        what its default run folder is named after."""
        return self.name.removesuffix(f"-l{self.level}") if self.level is not None else self.name

    def at_level(self, level: int) -> Recipe:
        """The recipe run at context ``level``; its name gets ``-lN``."""
        if not is_level(level):
            raise ValueError(f"level must be 1, 2 or 3, got {level!r}")
        name = self.name if self.level == level else f"{self.name}-l{level}"
        return replace(self, level=level, name=name)

    def with_overrides(self, model: str | None = None, device: str | None = None) -> Recipe:
        """The recipe with the ASR model and/or the device replaced."""
        stages = dict(self.stages)
        if model and "asr" not in stages:
            raise RecipeError(self.path or "recipe", "--model sets the ASR model; this recipe has no ASR stage",
                              field="stages")
        if model:
            from speechkit.registry import check_path
            check_path(model)  # a device or FIFO fails now, not when the ASR stage reads it
            stages["asr"] = parse_stage("asr", {**stages["asr"].as_dict(), "model": model})
        return replace(self, stages=stages, device=device or self.device)

    def with_settings(self, settings: Mapping[str, Any], source: str = "--set", *, runs_steps: bool = True) -> Recipe:
        """The recipe with options set by dotted key (``asr.language``, ``diarize.max_speakers``,
        ``context.hotwords``; ``stages.`` may lead; ``steps.judge.model`` sets a post-run step's
        option, adding the step when the recipe has none), each checked as the recipe file's would be
        (unknown key with a hint, type, bounds). Setting a stage's or step's ``backend`` starts it
        from the new backend's defaults. ``runs_steps=False``: the command runs no post-run step
        (one recording, a server), so a step's option is refused rather than ignored. A problem is a
        :class:`RecipeError` naming ``source``."""
        stages, context, statistics, steps = dict(self.stages), self.context, self.statistics, dict(self.steps)
        for key, value in settings.items():
            parts = key.removeprefix("stages.").split(".", 1)
            try:
                if parts[0] == "steps":
                    if not runs_steps:
                        raise OptionError(key, "this command runs no post-run steps (they score a workspace's "
                                               "meetings: speechkit recipe, speechkit run)")
                    steps = _set_step_option(steps, key, value)
                elif parts[0] == "context" and len(parts) == 2:
                    context = context.with_overrides(**{parts[1]: value})
                elif parts[0] == "statistics" and len(parts) == 2:
                    statistics = statistics.with_overrides(**{parts[1]: value})
                elif parts[0] in STAGES and len(parts) == 2:
                    stages[parts[0]] = _with_option(stages, *parts, value, parse_stage)
                else:
                    close = difflib.get_close_matches(parts[0], [*STAGES, "context", "statistics"], n=1)
                    hint = f" (did you mean {close[0]}?)" if close else ""
                    raise OptionError(key, f"expected STAGE.OPTION, steps.STEP.OPTION, context.OPTION or "
                                           f"statistics.OPTION; stages: {', '.join(STAGES)}{hint}")
            except OptionError as exc:
                field = exc.field if exc.field.startswith(("stages.", "steps.", "context.", "statistics.")) else key
                block = "statistics." if parts[0] == "statistics" else "context."
                raise RecipeError(source, exc.problem, field=field.replace("options.", block, 1)) from None
        return replace(self, stages=stages, context=context, statistics=statistics, steps=steps)

    def with_command_line(self, flag: str, value: tuple[str, ...] | None) -> Recipe:
        """The recipe with the option only the command line sets by ``flag``
        (:func:`speechkit.core.options.command_line`: ``--system-command``, the program a backend runs)
        given ``value`` (None: the flag was not given). A stage that needs it and gets none, or a
        value no stage takes, is a :class:`RecipeError`."""
        takes = [name for name, spec in self.stages.items() if flag in spec.options.command_line_flags()]
        if value is None and takes:
            spec = self.stages[takes[0]]
            raise RecipeError(self.path or "recipe", f"the {spec.backend} backend runs the program named on the "
                                                     f"command line ({flag} 'PROGRAM ARGS'); none given",
                              field=f"stages.{takes[0]}")
        if value is not None and not takes:
            raise RecipeError(flag, f"recipe {self.name!r} runs no program (the command recipe does: "
                                    f"speechkit recipe --asr command {flag} 'python my_system.py')")
        if value is None:
            return self
        stages = {name: replace(spec, options=spec.options.with_command_line(flag, value)) if name in takes else spec
                  for name, spec in self.stages.items()}
        return replace(self, stages=stages)

    def to_dict(self) -> dict[str, Any]:
        """The fully resolved recipe (every option with its value), as run.json records it;
        :meth:`from_dict` reads it back."""
        return {"name": self.name, "level": self.level, "device": self.device,
                "stages": {name: spec.as_dict() for name, spec in self.stages.items()},
                "context": self.context.as_dict(),
                "resources": {name: r.as_dict() for name, r in self.resources.items()},
                **({"steps": {name: spec.as_dict() for name, spec in self.steps.items()}} if self.steps else {}),
                "statistics": self.statistics.as_dict()}

    @classmethod
    def from_dict(cls, data: Any, source: str | Path = "recipe") -> Recipe:
        """The recipe a mapping gives (a recipe file's, or run.json's ``recipe``: what
        :meth:`to_dict` wrote), checked as a recipe file is; problems name ``source``."""
        return parse_recipe(data, Path(source))


def load_recipe(path: str | Path, level: int | None = None) -> Recipe:
    """Load a recipe from a YAML file, or a shipped one by name (``whisper``, ``ctc``, ``l3``,
    ``ctc-l1``); ``level`` sets the context level (else the file's, or the name's)."""
    path, named_level = _locate(Path(path))
    level = level if level is not None else named_level
    try:
        data, _ = parse_yaml(read_text(path), path, RecipeError)
    except RecipeError:
        raise
    except FormatError as exc:  # not a regular UTF-8 file of bounded size
        if not path.exists():
            known = ", ".join(sorted(p.stem for p in recipes_dir().glob("*.yaml")))
            raise RecipeError(path, f"recipe not found (recipes shipped: {known}; "
                                    f"l1-l3 and ctc-l1..ctc-l3 name them at a level)") from None
        raise RecipeError(path, exc.problem) from None
    recipe = replace(parse_recipe(data, path), path=path.resolve())
    return recipe.at_level(level) if level is not None else recipe


def parse_recipe(data: Any, path: Path) -> Recipe:
    """A recipe from its mapping (a file's, or run.json's), every key checked; problems are a
    :class:`RecipeError` naming ``path``."""
    if not isinstance(data, dict):
        raise RecipeError(path, "expected a mapping")
    if "api_key" in data:
        raise RecipeError(path, "an API key never goes in a recipe: put it in the environment variable "
                                "SPEECHKIT_LLM_API_KEY (or one named by the corrector's api_key_env)", field="api_key")
    unknown = set(data) - RECIPE_KEYS
    if unknown:
        hint = (" (the post-run steps go under steps:, e.g. steps: {qa: {backend: extractive}})"
                if "qa" in unknown else "")
        raise RecipeError(path, f"unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
                                f"allowed: {', '.join(sorted(RECIPE_KEYS))}{hint}")
    file_level = data.get("level")
    if file_level is not None and not is_level(file_level):
        raise RecipeError(path, f"expected 1, 2 or 3, got {brief(file_level, 60)}", field="level")
    device = data.get("device", "auto")
    if not isinstance(device, str):
        raise RecipeError(path, f"expected a string (auto, cpu, cuda or cuda:N), got {brief(device, 60)}",
                          field="device")
    stages = data.get("stages")
    if not isinstance(stages, dict):
        raise RecipeError(path, "expected a mapping of stage name to options", field="stages")
    for name in stages:
        if name not in STAGES:
            raise RecipeError(path, f"unknown stage; expected one of {', '.join(STAGES)}", field=f"stages.{name}")
    whole = [name for name in whole_stages() if name in stages]
    if whole and len(stages) > 1:
        others = ", ".join(name for name in stages if name != whole[0])
        raise RecipeError(path, f"a whole system runs alone; the recipe also names {others}",
                          field=f"stages.{whole[0]}")
    for name in STAGES:
        if not whole and name not in stages and name not in OPTIONAL_STAGES:
            raise RecipeError(path, "missing", field=f"stages.{name}")
    specs = {}
    try:
        for name in STAGES:
            if name in stages or (name in DEFAULT_STAGES and not whole):
                specs[name] = parse_stage(name, stages.get(name))
        budget = ContextBudget.from_dict(data.get("context"), "context")
        workers = _resources(data.get("resources"))
        steps = _steps(data.get("steps"))
        statistics = Statistics.from_dict(data.get("statistics"), "statistics")
    except OptionError as exc:
        raise RecipeError(path, exc.problem, field=exc.field) from None
    name = data.get("name") or path.stem
    if id_problem(name):
        raise RecipeError(path, f"{id_problem(name)} (it names the default run folder)", field="name")
    return Recipe(name=name, level=file_level, stages=specs, context=budget, device=device,
                  resources=workers, steps=steps, statistics=statistics)


def _set_step_option(steps: dict[str, Spec], key: str, value: Any) -> dict[str, Spec]:
    """``steps`` with ``key`` (``steps.STEP.OPTION``) set to ``value``, checked as a recipe's
    ``steps:`` block is; a step the recipe lacks is added with its defaults first. Raises
    :class:`~speechkit.core.options.OptionError`."""
    parts = key.split(".", 2)
    if len(parts) != 3 or parts[1] not in STEPS:
        close = difflib.get_close_matches(parts[1], list(STEPS), n=1) if len(parts) > 1 else []
        hint = f" (did you mean steps.{close[0]}?)" if close else ""
        raise OptionError(key, f"expected steps.STEP.OPTION; steps: {', '.join(STEPS)}{hint}")
    _, name, option = parts
    updated = {**steps, name: _with_option(steps, name, option, value, parse_step)}
    return {step: updated[step] for step in STEPS if step in updated}


def _with_option(specs: Mapping[str, Spec], name: str, option: str, value: Any,
                 parse: Callable[[str, dict[str, Any]], Spec]) -> Spec:
    """The spec ``name`` (a stage or a step) with ``option`` set to ``value``, checked by ``parse``:
    the other options kept, or the new backend's defaults when ``option`` is ``backend`` or
    ``specs`` has no ``name`` yet."""
    current = specs[name].as_dict() if name in specs and option != "backend" else {}
    return parse(name, {**current, option: value})


def parse_settings(texts: Iterable[str], source: str = "--set") -> dict[str, Any]:
    """``KEY=VALUE`` texts (``asr.language=de``) as a mapping, each value read as YAML (``3`` is a
    number, ``null`` is None, ``[0.0, 0.2]`` a list); for :meth:`Recipe.with_settings`."""
    out: dict[str, Any] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise RecipeError(source, f"expected KEY=VALUE (e.g. asr.language=de), got {brief(text, 60)}")
        out[key.strip()], _ = parse_yaml(value, f"{source} {key.strip()}", RecipeError)
    return out


def _locate(path: Path) -> tuple[Path, int | None]:
    """The file of a recipe given by path or shipped name, and the level a name like ``l3`` sets."""
    if path.suffix or path.exists():
        return path, None
    if id_problem(path.name) or str(path) != path.name:
        raise RecipeError(path, "no such recipe file, and not the name of a shipped recipe")
    match = _LEVEL_NAME.match(path.name)
    if match:
        return recipes_dir() / f"{match['family'] or 'whisper'}.yaml", int(match["level"])
    return recipes_dir() / f"{path.name}.yaml", None


def is_level(value: object) -> bool:
    """Whether ``value`` is a context level: the integer 1, 2 or 3 (not ``true``, not ``2.0``)."""
    return type(value) is int and value in LEVELS


def _steps(data: Any) -> dict[str, Spec]:
    """The checked ``steps`` mapping of a recipe, in the order the steps run (:data:`speechkit.steps.STEPS`)."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise OptionError("steps", f"expected a mapping of step name to options, got {brief(data, 60)}")
    for name in data:
        if name not in STEPS:
            raise OptionError(f"steps.{name}", f"unknown step; expected one of {', '.join(STEPS)}")
    return {name: parse_step(name, data[name]) for name in STEPS if name in data}


def _resources(data: Any) -> dict[str, StageResources]:
    """The checked ``resources`` mapping of a recipe (an :class:`OptionError` names a bad entry)."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise OptionError("resources", f"expected a mapping of stage name to resources, got {brief(data, 60)}")
    known = (*STAGES, WORKSPACE_WORKER)
    for name in data:
        if name not in known:
            raise OptionError(f"resources.{name}", f"unknown name; expected one of {', '.join(known)}")
    return {name: StageResources.from_dict(options, f"resources.{name}") for name, options in data.items()}
