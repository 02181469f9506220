"""A stage cache shared by runs: the levels of one workspace reuse each other's identical VAD,
ASR and diarization results (keys say nothing of the run folder), the outputs are the bytes a
run with its own cache writes, and concurrent writers never let a reader see a torn entry."""
from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

from speechkit.cache import StageCache
from speechkit.io.atomic import write_json
from speechkit.io.manifest import load_workspace
from speechkit.recipe import load_recipe
from speechkit.runner import run_workspace


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, make_real_workspace):
    return load_workspace(make_real_workspace(tmp_path_factory.mktemp("ws")))


@pytest.fixture(scope="module")
def shared(workspace, tmp_path_factory) -> tuple[Path, dict[int, dict]]:
    """L1 then L2 into their own run folders, one cache folder beside them; each run's run.json."""
    root = tmp_path_factory.mktemp("runs")
    runs = {}
    for level in (1, 2):
        result = run_workspace(load_recipe(f"l{level}"), workspace, root / f"l{level}", progress=False,
                               cache_dir=root / "cache")
        runs[level] = json.loads((result.out / "run.json").read_text())
    return root, runs


@pytest.mark.decodes
def test_the_second_level_takes_vad_and_diarization_from_the_shared_cache(shared, real_meetings):
    root, runs = shared
    n = len(real_meetings)
    assert runs[1]["cache"]["misses"]["vad"] == n and runs[1]["cache"]["misses"]["diarize"] == n
    assert runs[2]["cache"]["hits"]["vad"] == n and runs[2]["cache"]["hits"]["diarize"] == n
    assert "vad" not in runs[2]["cache"]["misses"] and "diarize" not in runs[2]["cache"]["misses"]
    # the first meeting has no earlier one, so its L2 biasing is L1's: the same ASR result
    assert runs[2]["cache"]["hits"].get("asr", 0) >= 1
    assert not (root / "l1" / "cache").exists() and not (root / "l2" / "cache").exists()
    assert len(list((root / "cache" / "vad").glob("*.json"))) == n


@pytest.mark.decodes
def test_a_shared_cache_gives_the_bytes_of_a_run_with_its_own(shared, workspace):
    root, _ = shared
    alone = run_workspace(load_recipe("l2"), workspace, root / "l2-alone", progress=False)
    assert (alone.out / "cache" / "vad").is_dir()  # its own cache: everything computed again
    for path in sorted((root / "l2" / "transcripts").iterdir()):
        assert path.read_bytes() == (alone.out / "transcripts" / path.name).read_bytes(), path.name
    assert (root / "l2" / "scores.json").read_bytes() == (alone.out / "scores.json").read_bytes()


def _rewrite(path: Path, values: list, rounds: int) -> None:
    for i in range(rounds):
        write_json(path, values[i % len(values)])


def test_readers_never_see_a_torn_entry_while_another_run_writes_it(tmp_path):
    values = [{"regions": [[i, i + 0.5] for i in range(20000)], "tag": tag} for tag in ("a", "b")]
    cache = StageCache(tmp_path / "cache")
    path = tmp_path / "cache" / "vad" / "k.json"
    write_json(path, values[0])
    writers = [multiprocessing.get_context("fork").Process(target=_rewrite, args=(path, values, 40))
               for _ in range(2)]
    for w in writers:
        w.start()
    reads = 0
    while any(w.is_alive() for w in writers) or reads < 20:
        value = cache.get_or_compute("vad", "k", lambda: pytest.fail("a torn entry was read as missing"))
        assert value["tag"] in ("a", "b") and len(value["regions"]) == 20000
        reads += 1
    for w in writers:
        w.join()
        assert w.exitcode == 0
    assert cache.hits["vad"] == reads and not cache.misses


def test_a_cache_folder_that_cannot_be_written_is_one_error_line_before_anything_runs(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    workspace = Path(__file__).resolve().parents[1] / "workspaces" / "demo"
    proc = subprocess.run([sys.executable, "-m", "speechkit", "run", "l1", "-w", str(workspace),
                           "--out", str(tmp_path / "run"), "--cache-dir", str(blocker / "cache")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == f"speechkit run: error: {blocker / 'cache'}: cannot create it: " \
                                                   f"{blocker} is not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # no run folder, no cache
