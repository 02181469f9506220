"""docs/architecture.md stays true: its worked examples (a VAD backend added by one module and one
registry entry; a stage with a run file, a metric and a report section added by one module, one
line in STAGES and one in a recipe; a post-run step added by one module, one line in STEPS and one
in a recipe) are run as written, through a recipe, on real speech; and the framework names no
stage and no run file."""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from speechkit import stages, steps
from speechkit.cascade import Cascade
from speechkit.cli import main
from speechkit.io.manifest import load_workspace
from speechkit.recipe import RecipeError, load_recipe
from speechkit.runner import run_workspace
from speechkit.stages import vad

REPO = Path(__file__).resolve().parents[1]


def _example_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (REPO / "docs" / "architecture.md").read_text(), re.S)


@pytest.fixture
def energy_backend(tmp_path, monkeypatch):
    module, entry = _example_blocks()[:2]
    (tmp_path / "vad_energy.py").write_text(module)
    monkeypatch.syspath_prepend(str(tmp_path))
    name, target = re.match(r'\s*"(\w+)": "[\w.]+:(\w+)",', entry).groups()
    monkeypatch.setitem(vad.BACKENDS, name, f"vad_energy:{target}")
    yield name
    sys.modules.pop("vad_energy", None)


def test_the_documented_vad_backend_runs_from_a_recipe(energy_backend, tmp_path, realdata):
    recipe = tmp_path / "energy.yaml"
    recipe.write_text(f"stages:\n  vad: {{backend: {energy_backend}, level_dbfs: -35, threshold: 0.5}}\n"
                      "  asr: {}\n  diarize: {}\n")
    cascade = Cascade(load_recipe(recipe, level=1))
    record = cascade.record(realdata / "faster-whisper" / "jfk.flac")
    regions = cascade.run_stage("vad", record).regions
    assert sum(e - s for s, e in regions) > 6.0  # jfk.flac: 11 s, mostly speech
    assert record.keys["vad"] and record.timings["vad"] >= 0
    silence = tmp_path / "silence.wav"
    sf.write(silence, np.zeros(5 * 16000, np.float32), 16000)
    assert cascade.run_stage("vad", cascade.record(silence)).regions == []

    recipe.write_text(recipe.read_text().replace("level_dbfs", "level_dbfz"))
    with pytest.raises(RecipeError, match=r"stages\.vad\.level_dbfz: unknown option \(did you mean level_dbfs\?\)"):
        load_recipe(recipe)


def _example(heading: str, registry: str) -> tuple[str, str, str]:
    """A worked example of the doc: the module, its registry line and its recipe line, from the
    section ``heading`` up to the next section."""
    text = (REPO / "docs" / "architecture.md").read_text()
    section = text[text.index(heading):]
    section = section[:section.find("\n## ", 1) if "\n## " in section[1:] else len(section)]
    module, entry = re.findall(r"```python\n(.*?)```", section, re.S)[:2]
    [recipe_line] = re.findall(r"```yaml\n(.*?)```", section, re.S)
    assert registry in section, f"{heading}: the example names its registry line's place"
    return module, entry, recipe_line


def _install(example: tuple[str, str, str], registry: dict, tmp_path: Path, monkeypatch) -> tuple[str, str]:
    """The documented module, installed as the doc says: the module and one line in its registry."""
    module, entry, recipe_line = example
    name, target = re.match(r'\s*"(\w+)": "([\w.]+)",', entry).groups()
    local = f"{name}_example"  # the module, importable from a temporary folder
    (tmp_path / f"{local}.py").write_text(module.replace(target, local))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry, name, local)
    return name, recipe_line


@pytest.fixture
def talk_stage(tmp_path, monkeypatch):
    yield _install(_example("## Adding a stage", "STAGES"), stages.STAGES, tmp_path, monkeypatch)
    sys.modules.pop("talk_example", None)


@pytest.fixture
def pace_step(tmp_path, monkeypatch):
    yield _install(_example("## Adding a post-run step", "STEPS"), steps.STEPS, tmp_path, monkeypatch)
    sys.modules.pop("pace_example", None)


def _with(shipped: str, block: str, line: str) -> str:
    """A shipped recipe's text with ``line`` added at the top of its ``block:``."""
    return shipped.replace(f"\n{block}:\n", f"\n{block}:\n{line}", 1)


SHIPPED = (REPO / "speechkit" / "recipes" / "whisper.yaml").read_text()


@pytest.mark.decodes
def test_the_documented_stage_writes_its_file_has_its_metric_and_its_section(talk_stage, tmp_path, make_real_workspace,
                                                                             real_meetings, capsys):
    name, recipe_line = talk_stage
    ws = load_workspace(make_real_workspace(tmp_path / "ws"))
    recipe = tmp_path / "talk.yaml"
    recipe.write_text(_with(SHIPPED, "stages", recipe_line))
    first = run_workspace(load_recipe(recipe, level=3), ws, tmp_path / "run", progress=False)
    run = json.loads((first.out / "run.json").read_text())
    per_meeting = run["stages"][name]
    assert set(per_meeting) == set(real_meetings)
    for mid, speakers in per_meeting.items():
        transcript = first.results[mid].transcript  # corrected or not, the speakers are the same
        assert set(speakers) <= {s.speaker_name or s.speaker for s in transcript.segments}
        assert all(e["words"] >= 2 and e["seconds"] > 0 for e in speakers.values())
        # its file per meeting, in the run folder
        assert json.loads((first.out / name / f"{mid}.json").read_text())["speakers"] == speakers
    stored = sorted((first.out / "cache" / name).glob("*.json"))
    assert len(stored) == len(real_meetings) and run["cache"]["misses"][name] == len(real_meetings)
    # its metric: per meeting and over the run, after the notes metrics, with its n/a reasons
    scores = first.scores
    keys = list(scores["aggregate"])
    assert keys.index("named_talk_share") > keys.index("summary_number_recall")
    for mid in real_meetings:
        talk = scores["meetings"][mid]["details"]["talk"]
        assert 0 < talk["named"] <= talk["words"]  # L3 names the enrolled voices
        assert scores["meetings"][mid]["named_talk_share"]["value"] == talk["named"] / talk["words"]
    assert 0 < scores["aggregate"]["named_talk_share"]["value"] <= 1
    # its section, where its order puts it: after the corrections, before the ASR loop control
    report = (first.out / "report.md").read_text()
    assert report.index("## Corrections") < report.index("## Talk time") < report.index("## ASR loop")
    assert "| named talk share |" in report  # in the aggregate table, as every metric is
    assert main(["score", "--workspace", str(ws.root), "--run", str(first.out), "--out", str(tmp_path / "s.json"),
                 "--resamples", "0"]) == 0
    assert "\nTalk time\nmeeting" in capsys.readouterr().out  # a table of its own

    again = run_workspace(load_recipe(recipe, level=3), ws, first.out, progress=False)
    rerun = json.loads((again.out / "run.json").read_text())
    assert rerun["cache"]["hits"][name] == len(real_meetings) and rerun["stages"][name] == per_meeting

    recipe.write_text(recipe.read_text().replace("min_words", "min_word"))
    with pytest.raises(RecipeError, match=rf"stages\.{name}\.min_word: unknown option \(did you mean min_words\?\)"):
        load_recipe(recipe)


@pytest.mark.decodes
def test_the_documented_step_runs_from_a_recipe_and_from_the_command_line_alike(pace_step, tmp_path,
                                                                                make_real_workspace, real_meetings):
    """The step in a recipe's steps: and the same step run later on a finished run give the same
    file and the same report, bytes for bytes."""
    name, recipe_line = pace_step
    ws = load_workspace(make_real_workspace(tmp_path / "ws"))
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (tmp_path / "whisper.yaml").write_text(_with(SHIPPED, "steps", recipe_line))
    (shipped / "whisper.yaml").write_text(SHIPPED)
    cache = tmp_path / "cache"
    fresh = run_workspace(load_recipe(tmp_path / "whisper.yaml", level=1), ws, tmp_path / "fresh", cache_dir=cache,
                          progress=False)
    later = run_workspace(load_recipe(shipped / "whisper.yaml", level=1), ws, tmp_path / "later", cache_dir=cache,
                          progress=False)
    assert not (later.out / f"{name}.json").exists() and "## Pace" not in (later.out / "report.md").read_text()
    assert main(["step", name, str(later.out), "--set", "min_seconds=2"]) == 0
    document = json.loads((fresh.out / f"{name}.json").read_text())
    assert set(document["words_per_minute"]) == set(real_meetings)
    assert all(60 < wpm < 300 for wpm in document["words_per_minute"].values())  # people speak at this pace
    assert (later.out / f"{name}.json").read_bytes() == (fresh.out / f"{name}.json").read_bytes()
    report = (fresh.out / "report.md").read_text()
    assert "## Pace" in report and report.index("## Meeting notes") < report.index("## Pace")
    assert (later.out / "report.md").read_text() == report
    assert main(["step", name, str(later.out), "--set", "min_second=2"]) == 2  # checked as a recipe's


# The modules of the framework that run the plug-ins: none may name a stage (a string that is
# one, an attribute or a name that is one), nor spell a run file.
FRAMEWORK = ("speechkit/runner.py", "speechkit/cascade.py", "speechkit/executors", "speechkit/report",
             "speechkit/scoring")


def _framework_files() -> list[Path]:
    return [f for part in FRAMEWORK for f in sorted((REPO / part).rglob("*.py") if (REPO / part).is_dir()
                                                      else [REPO / part])]


def test_the_framework_names_no_stage():
    names = set(stages.STAGES)
    found = []
    for path in _framework_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            hit = ((isinstance(node, ast.Constant) and node.value in names)
                   or (isinstance(node, ast.Attribute) and node.attr in names)
                   or (isinstance(node, ast.Name) and node.id in names))
            if hit:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "\n".join(found)


def test_only_the_run_folder_module_spells_a_run_file():
    """The run files' names and folders appear in io/run_folder.py alone (the format id
    ``speechkit-notes/1`` and names such as ``read_transcripts`` are no run file)."""
    pattern = (r'(?<![\w-])notes/|"(?:scores|run|qa|qa_pairs|judged|probe)\.json"|"report\.(?:md|html)"'
               r'|(?<!\w)transcripts"')
    hits = subprocess.run(["git", "grep", "-nP", pattern, "--", "speechkit"],
                          cwd=REPO, capture_output=True, text=True).stdout.splitlines()
    assert hits and {line.split(":", 1)[0] for line in hits} == {"speechkit/io/run_folder.py"}, hits
