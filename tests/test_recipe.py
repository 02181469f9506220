"""Recipes load and validate; the stage cache reuses results and survives a corrupt entry."""
from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from speechkit.cache import StageCache, digest
from speechkit.errors import FormatError
from speechkit.recipe import RecipeError, load_recipe, recipes_dir
from speechkit.stages import stage_module

REPO = Path(__file__).resolve().parents[1]


SHIPPED = sorted(p.stem for p in recipes_dir().glob("*.yaml"))


def test_recipes_ship_in_the_package_and_the_checkout_link_points_there():
    assert {"whisper", "ctc"} <= set(SHIPPED)
    assert (REPO / "recipes").resolve() == recipes_dir().resolve()


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_recipe_loads_at_every_level(name):
    for level in (1, 2, 3):
        recipe = load_recipe(name, level=level)
        assert recipe.level == level and recipe.name == f"{name}-l{level}"
        if set(recipe.stages) == {"system"}:  # a whole system: the command recipe
            assert recipe.to_dict()["stages"]["system"]["backend"] == "command"
            continue
        assert set(recipe.stages) >= {"vad", "asr", "diarize", "attribute", "identify"}
        assert recipe.to_dict()["stages"]["asr"]["backend"] in stage_module("asr").BACKENDS


@pytest.mark.parametrize("name, family, level", [("l1", "whisper", 1), ("l3", "whisper", 3), ("ctc-l2", "ctc", 2)])
def test_level_names_are_the_family_recipe_at_that_level(name, family, level):
    assert load_recipe(name).to_dict() == load_recipe(family, level=level).to_dict()


def test_a_recipe_without_level_is_refused_at_run_time(tmp_path):
    from speechkit.io.manifest import load_workspace
    from speechkit.runner import run_meetings
    recipe = load_recipe("whisper")
    assert recipe.level is None
    with pytest.raises(RecipeError, match="no context level"):
        run_meetings(recipe, load_workspace(REPO / "workspaces" / "demo"), tmp_path, None, None)


def test_resolved_recipe_records_every_default():
    stages = load_recipe("l1").to_dict()["stages"]
    assert stages["vad"]["hysteresis"] == 0.15 and stages["vad"]["min_silence_s"] == 1.0
    assert stages["identify"] == {"backend": "cosine", "normalization": "snorm", "threshold": 0.5,
                                  "split_margin": 0.5, "prior_threshold": 0.7, "prior_margin": 0.05}
    assert stages["diarize"]["threshold"] is None  # the embedder's own cluster threshold


def test_overrides_do_not_touch_the_original():
    recipe = load_recipe("l1")
    other = recipe.with_overrides(model="base", device="cpu")
    assert other.stages["asr"].options.model == "base" and other.device == "cpu"
    assert recipe.stages["asr"].options.model == "tiny.en"


# One misspelt or mistyped option per stage (and per backend where options differ).
BAD_OPTIONS = [
    ("vad", "{backend: silero, treshold: 0.5}", r"stages\.vad\.treshold: unknown option \(did you mean threshold\?\)"),
    ("vad", "{threshold: high}", r"stages\.vad\.threshold: expected a number"),
    ("asr", "{backend: whisper, beam_sise: 5}", r"stages\.asr\.beam_sise: unknown option \(did you mean beam_size\?\)"),
    ("asr", "{backend: ctc, beam_widht: 5}", r"stages\.asr\.beam_widht: unknown option \(did you mean beam_width\?\)"),
    ("asr", "{backend: nemo}", r"stages\.asr\.backend: unknown backend 'nemo'"),
    ("diarize", "{min_cluster: 2}", r"stages\.diarize\.min_cluster: unknown option \(did you mean min_cluster_s\?\)"),
    ("diarize", "{embedder_options: {wieghts: x}}", r"stages\.diarize\.embedder_options\.wieghts: unknown option"),
    ("diarize", "{backend: pyannote, modle: x}", r"stages\.diarize\.modle: unknown option \(did you mean model\?\)"),
    ("attribute", "{mode: x}", r"stages\.attribute\.mode: unknown option"),
    ("identify", "{treshold: 0.65}", r"stages\.identify\.treshold: unknown option \(did you mean threshold\?\)"),
    ("correct", "{backend: lexicon, min_scor: 0.8}",
     r"stages\.correct\.min_scor: unknown option \(did you mean min_score\?\)"),
    ("correct", "{backend: lexicon, guards: {max_drop: 1}}", r"stages\.correct\.guards\.max_drop: unknown option"),
    ("correct", "{backend: llm, api_key: sk-123}", r"stages\.correct\.api_key: an API key never goes in a recipe"),
]


@pytest.mark.parametrize("stage, options, pattern", BAD_OPTIONS)
def test_a_bad_option_in_any_stage_fails_on_load(tmp_path, stage, options, pattern):
    stages = {"vad": "{}", "asr": "{}", "diarize": "{}", stage: options}
    text = "stages:\n" + "".join(f"  {name}: {value}\n" for name, value in stages.items())
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(RecipeError, match=rf"bad\.yaml: {pattern}"):
        load_recipe(tmp_path / "bad.yaml")


def test_a_bad_recipe_exits_2_with_one_line_before_any_audio_is_read(tmp_path, capsys):
    from speechkit.cli import main
    (tmp_path / "r.yaml").write_text("stages: {vad: {}, asr: {}, diarize: {}, identify: {treshold: 0.6}}\n")
    code = main(["run", str(tmp_path / "r.yaml"), "--level", "1", "--workspace", str(REPO / "workspaces" / "demo"),
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().count("\n") == 0 and "stages.identify.treshold: unknown option (did you mean threshold?)" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("text, pattern", [
    ("level: 4\nstages: {}\n", r"bad\.yaml: level: expected 1, 2 or 3"),
    ("level: 1\nstages: {vad: {}, asr: {}}\n", r"stages\.diarize: missing"),
    ("level: 1\nstages: {vad: {}, asr: {}, diarize: {}, identify: {}, translate: {}}\n",
     r"stages\.translate: unknown stage"),
    ("level: 1\nstagess: {}\n", r"unknown key\(s\) stagess"),
    ("level: 1\nstages: {vad: {}, asr: {}, diarize: {}, identify: {}}\ncontext: {tokens: 3}\n",
     r"context\.tokens: unknown option \(did you mean prompt_tokens\?\)"),
])
def test_bad_recipes_name_file_and_field(tmp_path, text, pattern):
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(FormatError, match=pattern):
        load_recipe(tmp_path / "bad.yaml")


STAGES_OK = "stages: {vad: {}, asr: {}, diarize: {}, identify: {}}\n"


# Values that loaded before and crashed (or misbehaved) later: each refused on load, with its path.
BAD_VALUES = [
    # the context block
    ("context: {hotwords: many}", r"context\.hotwords: expected an integer, got 'many'"),
    ("context: {prompt_tokens: -5}", r"context\.prompt_tokens: expected an integer in \[0, 100000\], got -5"),
    ("context: {hotwords: -3}", r"context\.hotwords: expected an integer in \[0, 10000\], got -3"),
    ("context: {prompt_tokens: x}", r"context\.prompt_tokens: expected an integer, got 'x'"),
    ("context: {hotwords: [1]}", r"context\.hotwords: expected an integer, got \[1\]"),
    ("context: {prompt_tokens: .inf}", r"context\.prompt_tokens: expected an integer, got inf"),
    ("context: {prior_min_confidence: .nan}", r"context\.prior_min_confidence: expected a finite number, got nan"),
    ("context: {rare_zipf: 1.0e+400}", r"context\.rare_zipf: expected a finite number, got inf"),
    ("context: {hotword: 3}", r"context\.hotword: unknown option \(did you mean hotwords\?\)"),
    ("context: [hotwords]", r"context: expected a mapping of option names to values, got \['hotwords'\]"),
    # resources
    ("resources: {asr: {num_gpus: .nan}}", r"resources\.asr\.num_gpus: expected a finite number"),
    ("resources: {asr: {gpus: 1}}", r"resources\.asr\.gpus: unknown option \(did you mean num_gpus\?\)"),
    ("resources: {asr: {batch_size: 1.0e+308}}", r"resources\.asr\.batch_size: expected an integer, got 1e\+308"),
    ("resources: {asr: {concurrency: 0}}", r"resources\.asr\.concurrency: expected an integer in \[1, 100000\]"),
    ("resources: {asr: 4}", r"resources\.asr: expected a mapping of option names to values, got 4"),
    # numbers out of range, not finite, or huge
    ("stages: {vad: {}, asr: {backend: ctc, chunk_s: 1.0e+308}, diarize: {}}",
     r"stages\.asr\.chunk_s: expected a number in \(0, 600\], got 1e\+308"),
    ("stages: {vad: {}, asr: {backend: ctc, chunk_s: 1e308}, diarize: {}}",  # YAML reads 1e308 as text
     r"stages\.asr\.chunk_s: expected a number, got '1e308'"),
    ("stages: {vad: {}, asr: {backend: whisper, cpu_threads: -1}, diarize: {}}",
     r"stages\.asr\.cpu_threads: expected an integer in \[0, 1024\], got -1"),
    ("stages: {vad: {}, asr: {backend: whisper, seed: 100000000000000000000000}, diarize: {}}",
     r"stages\.asr\.seed: expected an integer in \[0, 9223372036854775808\)"),
    ("stages: {vad: {}, asr: {backend: whisper, temperatures: [0.0, .nan]}, diarize: {}}",
     r"stages\.asr\.temperatures\[1\]: expected a finite number"),
    ("stages: {vad: {threshold: .nan}, asr: {}, diarize: {}}", r"stages\.vad\.threshold: expected a finite number"),
    ("stages: {vad: {chunk_s: .inf}, asr: {}, diarize: {}}", r"stages\.vad\.chunk_s: expected a finite number"),
    ("stages: {vad: {}, asr: {}, diarize: {threshold: .nan}}", r"stages\.diarize\.threshold: expected a finite number"),
    ("stages: {vad: {}, asr: {}, diarize: {}, identify: {threshold: .nan}}",
     r"stages\.identify\.threshold: expected a finite number"),
    ("stages: {vad: {}, asr: {}, diarize: {}, identify: {prior_threshold: 1.5}}",
     r"stages\.identify\.prior_threshold: expected a number in \[-1, 1\], got 1\.5"),
    ("stages: {vad: {}, asr: {}, diarize: {}, correct: {backend: lexicon, lm_order: 7}}",
     r"stages\.correct\.lm_order: expected an integer in \[2, 5\], got 7"),
    ("stages: {vad: {}, asr: {}, diarize: {}, correct: {backend: lexicon, guards: {max_drop_fraction: -0.1}}}",
     r"stages\.correct\.guards\.max_drop_fraction: expected a number in \[0, 1\]"),
    # choices (Literal fields)
    ("stages: {vad: {}, asr: {}, diarize: {clustering: silhoutte}}",
     r"stages\.diarize\.clustering: expected one of silhouette, nme-sc, threshold, got 'silhoutte' "
     r"\(did you mean silhouette\?\)"),
    ("stages: {vad: {}, asr: {}, diarize: {}, identify: {normalization: znorm}}",
     r"stages\.identify\.normalization: expected one of snorm, none, got 'znorm'"),
    ("stages: {vad: {}, asr: {backend: ctc, compute_type: float64}, diarize: {}}",
     r"stages\.asr\.compute_type: expected one of default, float32, float16, bfloat16, got 'float64'"),
    ("stages: {vad: {}, asr: {backend: whisper, compute_type: int4}, diarize: {}}",
     r"stages\.asr\.compute_type: expected one of int8, .*, got 'int4'"),
    ("stages: {vad: {}, asr: {}, diarize: {}, correct: {backend: llm, mode: chose}}",
     r"stages\.correct\.mode: expected one of rewrite, choose, got 'chose' \(did you mean choose\?\)"),
    # the level, the device, the YAML itself
    ("level: true", r"level: expected 1, 2 or 3, got True"),
    ("level: 2.0", r"level: expected 1, 2 or 3, got 2\.0"),
    ("level: '2'", r"level: expected 1, 2 or 3, got '2'"),
    ("device: [cuda]", r"device: expected a string"),
    ("stages: " + "[" * 20000 + "]" * 20000, r"invalid YAML: values nested too deeply"),
    ("context: {hotwords: 3, hotwords: 4}", r"invalid YAML: duplicate key 'hotwords'"),
    ("statistics: {min_meetings: -1}", r"statistics\.min_meetings: expected an integer in \[0, 100000\], got -1"),
    ("statistics: {min_meeting: 3}", r"statistics\.min_meeting: unknown option"),
]


@pytest.mark.parametrize("text, pattern", BAD_VALUES)
def test_bad_values_are_refused_on_load_with_the_path_of_the_key(tmp_path, text, pattern):
    """Each case replaces one top-level key of a valid recipe."""
    key = text.split(":", 1)[0]
    base = {"stages": STAGES_OK, "level": "level: 1\n"}
    body = "".join(line for k, line in base.items() if k != key) + text + "\n"
    (tmp_path / "bad.yaml").write_text(body)
    with pytest.raises(RecipeError, match=rf"bad\.yaml(:\d+)?: {pattern}"):
        load_recipe(tmp_path / "bad.yaml")


def _option_classes() -> set[type]:
    """Every option dataclass a recipe can reach: each backend's, nested ones, context and resources."""
    from speechkit.core.options import StageOptions
    from speechkit.recipe import ContextBudget, StageResources, Statistics
    from speechkit.stages import STAGES, backend_class, stage_module
    from speechkit.stages.diarize.embedders import EMBEDDERS, embedder_class

    found = {ContextBudget, StageResources, Statistics} | {embedder_class(name).Options for name in EMBEDDERS}
    found |= {backend_class(stage, b).Options for stage in STAGES for b in stage_module(stage).BACKENDS}
    todo = list(found)
    while todo:
        for hint in typing.get_type_hints(todo.pop()).values():
            if isinstance(hint, type) and issubclass(hint, StageOptions) and hint not in found:
                found.add(hint)
                todo.append(hint)
    return found


def _numeric(hint) -> bool:
    args = typing.get_args(hint)
    return hint in (int, float) or any(_numeric(a) for a in args if a is not type(None))


def test_every_number_option_has_bounds_and_every_default_is_valid():
    from speechkit.core.options import Bounds

    classes = _option_classes()
    assert len(classes) >= 15
    unbounded = [f"{cls.__name__}.{f.name}" for cls in classes for f in dataclasses.fields(cls)
                 if _numeric(typing.get_type_hints(cls)[f.name]) and not isinstance(f.metadata.get("bounds"), Bounds)]
    assert unbounded == []
    for cls in classes:
        assert cls.from_dict({}) == cls()  # defaults pass every check


def test_options_built_in_python_are_checked_too():
    from speechkit.core.options import OptionError
    from speechkit.stages.diarize.embedding import DiarizerOptions
    from speechkit.stages.vad import VadOptions

    with pytest.raises(OptionError, match=r"^threshold: expected a finite number, got nan$"):
        VadOptions(threshold=float("nan"))
    with pytest.raises(OptionError, match=r"^clustering: expected one of silhouette, nme-sc, threshold"):
        DiarizerOptions(clustering="kmeans")
    assert VadOptions(threshold=1).threshold == 1.0 and isinstance(VadOptions(threshold=1).threshold, float)
    with pytest.raises(OptionError, match=r"options\.smoothing: expected an integer in \[1, 1001\], got 0"):
        DiarizerOptions().with_overrides(smoothing=0)


@pytest.mark.parametrize("text, where", [
    ("stages: {vad: {}, asr: {}, diarize: {}, identify: {threshold: .nan}}\n", "stages.identify.threshold"),
    ("stages: {vad: {}, asr: {backend: ctc, chunk_s: 1.0e+308}, diarize: {}}\n", "stages.asr.chunk_s"),
    (STAGES_OK + "context: {prompt_tokens: x, hotwords: [1]}\n", "context.prompt_tokens"),
    (STAGES_OK + "context: {hotwords: -3}\n", "context.hotwords"),
    ("stages: " + "[" * 20000 + "]" * 20000 + "\n", "invalid YAML"),
])
def test_a_recipe_value_that_would_crash_later_exits_2_with_one_line(tmp_path, capsys, text, where):
    from speechkit.cli import main
    (tmp_path / "r.yaml").write_text(text)
    code = main(["run", str(tmp_path / "r.yaml"), "--level", "1", "--workspace", str(REPO / "workspaces" / "demo"),
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().count("\n") == 0 and f"r.yaml: {where}: " in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_fixed_level_must_be_the_integer_1_2_or_3():
    recipe = load_recipe("whisper")
    assert recipe.at_level(2).level == 2
    for bad in (True, 2.0, "2", 0):
        with pytest.raises(ValueError, match="level must be 1, 2 or 3"):
            recipe.at_level(bad)


def test_unknown_recipe_lists_shipped_ones():
    with pytest.raises(FormatError, match=r"recipe not found \(recipes shipped: .*whisper"):
        load_recipe("l9")


def test_cache_reuses_results_and_recovers_from_a_corrupt_entry(tmp_path):
    cache = StageCache(tmp_path)
    calls = []
    compute = lambda: calls.append(1) or {"regions": [[0.0, 1.5]]}  # noqa: E731
    key = digest("audio-hash", {"threshold": 0.5})
    assert cache.get_or_compute("vad", key, compute) == {"regions": [[0.0, 1.5]]}
    assert StageCache(tmp_path).get_or_compute("vad", key, compute) == {"regions": [[0.0, 1.5]]}
    assert len(calls) == 1
    (tmp_path / "vad" / f"{key}.json").write_text('{"regions": [[0.0,')  # torn write from an old tool
    assert StageCache(tmp_path).get_or_compute("vad", key, compute) == {"regions": [[0.0, 1.5]]}
    assert len(calls) == 2
    assert digest("audio-hash", {"threshold": 0.6}) != key


def test_the_fewest_meetings_for_significance_is_a_recipe_option(tmp_path):
    recipe = load_recipe("whisper", level=3)
    assert recipe.statistics.min_meetings == 5 and recipe.to_dict()["statistics"] == {"min_meetings": 5}
    assert recipe.with_settings({"statistics.min_meetings": 2}).statistics.min_meetings == 2
    (tmp_path / "few.yaml").write_text("level: 1\nstatistics: {min_meetings: 2}\n" + STAGES_OK)
    assert load_recipe(tmp_path / "few.yaml").statistics.min_meetings == 2
    with pytest.raises(RecipeError, match=r"statistics\.min_meetings: expected an integer"):
        recipe.with_settings({"statistics.min_meetings": "many"})


def test_the_l3_ablation_is_a_context_option_recorded_with_the_recipe(tmp_path):
    """``context.ablate`` is set in the recipe or by --set, checked, and round-trips through run.json's
    recipe; each stream it leaves out has its run folder under a --level all folder."""
    from speechkit.io.run_folder import ABLATION_FOLDERS, LevelsFolder, level_folders
    from speechkit.recipe import ABLATIONS, Recipe
    recipe = load_recipe("whisper", level=3)
    assert recipe.context.ablate == "none" and recipe.to_dict()["context"]["ablate"] == "none"
    ablated = recipe.with_settings({"context.ablate": "text"})
    assert ablated.to_dict()["context"]["ablate"] == "text"
    assert Recipe.from_dict(ablated.to_dict()).context.ablate == "text"
    (tmp_path / "a.yaml").write_text("level: 3\ncontext: {ablate: enrollments}\n" + STAGES_OK)
    assert load_recipe(tmp_path / "a.yaml").context.ablate == "enrollments"
    with pytest.raises(RecipeError, match=r"context\.ablate: expected one of none, enrollments, text.*did you mean"):
        recipe.with_settings({"context.ablate": "txt"})
    assert ABLATIONS == ("enrollments", "text") and set(ABLATION_FOLDERS) == set(ABLATIONS)
    folders = {LevelsFolder(tmp_path).ablation(s).root.name for s in ABLATIONS}
    assert folders == {"l3-no-enrollments", "l3-no-text"} and not folders & {"l1", "l2", "l3", "cache"}
    for name in ("l3-no-text", "l1", "l3"):  # the steps' commands take every finished run of the folder
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text("{}")
    assert [run.root.name for run in level_folders(tmp_path)] == ["l1", "l3", "l3-no-text"]


def test_recipe_all_with_ablations_runs_l3_without_each_stream_and_compares(tmp_path, monkeypatch, capsys):
    """`speechkit recipe --level all --ablations`: L1, L2, L3, then L3 with ``context.ablate`` set to
    each stream, into their level folders, and the comparison with the ablation's section (an
    executor that writes each run's hypotheses, the references with words dropped, and scores them)."""
    import json

    import speechkit.executors
    from speechkit.cli import main
    from speechkit.io import read_transcripts
    from speechkit.io.manifest import load_workspace
    from speechkit.io.seglst import write_seglst
    from speechkit.runner import RunResult
    from speechkit.scoring import score_workspace
    from speechkit.transcript import Segment, Transcript

    ran = []

    class Scripted:
        name = "local"

        def run(self, recipe, jobs, progress=True):
            ran.append((recipe.level, recipe.context.ablate, jobs[0].out.name, jobs[0].cache))
            keep = {"none": 9, "enrollments": 7, "text": 3}[recipe.context.ablate] - (3 - recipe.level)
            ws = jobs[0].workspace
            for meeting in ws.scored_meetings:
                [ref] = read_transcripts(meeting.reference).values()
                segments = [Segment(s.start, s.end, s.speaker, " ".join(w for i, w in enumerate(s.text.split())
                                                                        if i % keep), speaker_name=s.speaker)
                            for s in ref.segments]
                write_seglst(jobs[0].out / "transcripts" / f"{meeting.id}.json", [Transcript(meeting.id, segments)])
            return [RunResult(jobs[0].out, score_workspace(ws, jobs[0].out, out=jobs[0].out / "scores.json"), {})]

    monkeypatch.setattr(speechkit.executors, "make_executor", lambda name, address: Scripted())
    demo = REPO / "workspaces" / "demo"
    out = tmp_path / "levels"
    assert main(["recipe", "--level", "all", "--ablations", "--workspace", str(demo), "--out", str(out)]) == 0
    assert ran == [(1, "none", "l1", out / "cache"), (2, "none", "l2", out / "cache"), (3, "none", "l3", out / "cache"),
                   (3, "enrollments", "l3-no-enrollments", out / "cache"), (3, "text", "l3-no-text", out / "cache")]
    md = (out / "comparison.md").read_text()
    assert "## The L3 ablation: which stream the L1 -> L3 gain comes from" in md
    assert "| metric | L1 | L3 w/o enrollments | L3 w/o text | L3 | gain L3 - L1 |" in md
    assert "| kind | L1 | L2 | L3 | L3 w/o enrollments | L3 w/o text |" in md
    ablation = json.loads((out / "comparison.json").read_text())["ablation"]
    values = ablation["values"]
    assert values["L3"]["wer"] < values["L3 w/o enrollments"]["wer"] < values["L3 w/o text"]["wer"]
    assert ablation["without"]["text"]["path"] == str(out / "l3-no-text")
    assert "whisper-l3 without text" in capsys.readouterr().out
    scored = json.loads((out / "l3-no-text" / "scores.json").read_text())["meetings"]
    assert list(scored) == [m.id for m in load_workspace(demo).scored_meetings]
