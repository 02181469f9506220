"""The Ray executor against the local one, on a local two-node Ray cluster over loopback.

Two workspaces of real speech cut from pyannote's sample.wav (see tests/test_runner.py): ``ws-a``
and ``ws-b``, the same two recordings in opposite calendar order, so each meeting's L2 context
differs between them. The tests marked ``ray`` start the cluster (a head and one worker node, one
CPU each); they run only when selected: ``pytest -m ray tests/test_ray.py``.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from speechkit.errors import FormatError, SpeechkitError
from speechkit.executors import Job, LocalExecutor, make_executor
from speechkit.io.manifest import load_workspace
from speechkit.recipe import StageResources, load_recipe

REPO = Path(__file__).resolve().parents[1]
# The driver must reach a cluster bound to 127.0.0.1: without this Ray rewrites a loopback address
# to the machine's own IP address (read when ray is imported, so set before the import).
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "PYTHONPATH": str(REPO)}


def outputs(out: Path) -> dict[str, bytes | dict]:
    """What must not depend on the executor: transcripts, context logs, scores."""
    files = {str(p.relative_to(out)): p.read_bytes() for p in (*(out / "transcripts").iterdir(),
                                                                  *(out / "context").iterdir())}
    return {**files, "scores": scores(json.loads((out / "scores.json").read_text()))}


def scores(data: dict) -> dict:
    """Scores without their ``source`` (the paths of the run folder)."""
    return {k: v for k, v in data.items() if k != "source"}


def run_json(out: Path) -> dict:
    return json.loads((out / "run.json").read_text())


def _workspace(root: Path, make_real_workspace, name: str, reverse: bool) -> Path:
    make_real_workspace(root)
    manifest = yaml.safe_load((root / "workspace.yaml").read_text())
    manifest["name"] = name
    if reverse:  # the same meetings, the other way round in the calendar
        dates = [m["date"] for m in manifest["meetings"]]
        manifest["meetings"] = [dict(m, date=d) for m, d in zip(reversed(manifest["meetings"]), dates)]
    (root / "workspace.yaml").write_text(yaml.safe_dump(manifest))
    return root


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory, make_real_workspace):
    root = tmp_path_factory.mktemp("ws")
    return [load_workspace(_workspace(root / name, make_real_workspace, name, reverse))
            for name, reverse in (("ws-a", False), ("ws-b", True))]


@pytest.fixture(scope="module")
def local_runs(workspaces, tmp_path_factory):
    out = tmp_path_factory.mktemp("local")
    return LocalExecutor().run(load_recipe("l2"), [Job(ws, out / ws.name) for ws in workspaces], progress=False)


@pytest.fixture(scope="module")
def ray_cluster():
    """A head node and one worker node on 127.0.0.1, one CPU each, no dashboard, torn down always."""
    if importlib.util.find_spec("ray") is None:
        pytest.fail("the Ray tests need Ray: pip install -c constraints.txt '.[ray]'")
    assert "ray" not in sys.modules, "ray was imported before RAY_ENV was set: the driver would not find the cluster"
    saved = {key: os.environ.get(key) for key in (*RAY_ENV, "RAY_TMPDIR")}
    temp = tempfile.mkdtemp(prefix="skray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    os.environ.update(RAY_ENV, RAY_TMPDIR=temp)
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(shutdown_at_exit=True)
    try:
        node = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 80 * 1024 ** 2}
        cluster.add_node(include_dashboard=False, **node)
        cluster.add_node(**node)
        ray.init(address=cluster.address)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(temp, ignore_errors=True)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _workers(cluster, title: str) -> list[int]:
    """Pids of the cluster's worker processes whose title contains ``title``."""
    from ray._private import ray_constants
    raylets = {info.process.pid for node in (cluster.head_node, *cluster.worker_nodes)
               for info in node.all_processes[ray_constants.PROCESS_TYPE_RAYLET]}
    found = []
    for proc in Path("/proc").iterdir():
        try:
            parent = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if parent in raylets and title in cmdline:
            found.append(int(proc.name))
    return found


@pytest.mark.decodes
@pytest.mark.ray
@pytest.mark.timeout(600)
def test_ray_run_matches_the_local_run(ray_cluster, workspaces, local_runs, tmp_path):
    jobs = [Job(ws, tmp_path / ws.name) for ws in workspaces]
    results = make_executor("ray").run(load_recipe("l2"), jobs, progress=False)
    assert [r.out for r in results] == [job.out for job in jobs]
    for local, remote in zip(local_runs, results):
        assert outputs(remote.out) == outputs(local.out)
        assert scores(remote.scores) == scores(local.scores)
        assert remote.scores == local.scores  # scores.json holds no run-folder path
        ray_run, local_run = run_json(remote.out), run_json(local.out)
        assert ray_run["executor"] == "ray" and local_run["executor"] == "local"
        # Phase 1 stored its stages under the keys the cascade reads: nothing was computed twice.
        assert ray_run["cache"] == local_run["cache"]
        assert set(ray_run["timings"]["meetings"]["m1"]) >= {"vad", "diarize", "asr"}
    # Each worker kept its workspace's calendar order: m1 has no predecessor in ws-a, m2 in ws-b.
    additions = {(r.out.name, m): {a["source"] for a in json.loads((r.out / "context" / f"{m}.json").read_text())[
        "additions"]} for r in results for m in ("m1", "m2")}
    assert "prior speaker centroids" in additions["ws-a", "m2"] and "prior speaker centroids" in additions["ws-b", "m1"]
    assert "prior speaker centroids" not in additions["ws-a", "m1"] | additions["ws-b", "m2"]


@pytest.mark.decodes
@pytest.mark.ray
@pytest.mark.timeout(600)
@pytest.mark.parametrize("level", [1, 3])
def test_ray_run_matches_the_local_run_at_levels_1_and_3(ray_cluster, workspaces, level, tmp_path):
    """L1: all ASR in phase 1. L3: the first meeting's ASR (roster prompt) in phase 1, enrollments."""
    recipe, ws = load_recipe(f"l{level}"), workspaces[1]
    [local] = LocalExecutor().run(recipe, [Job(ws, tmp_path / "local")], progress=False)
    [remote] = make_executor("ray").run(recipe, [Job(ws, tmp_path / "ray")], progress=False)
    assert outputs(remote.out) == outputs(local.out)
    assert run_json(remote.out)["cache"] == run_json(local.out)["cache"]


@pytest.mark.decodes
@pytest.mark.ray
@pytest.mark.timeout(600)
def test_killed_worker_loses_no_finished_meeting_and_the_rerun_completes(ray_cluster, workspaces, local_runs,
                                                                          tmp_path):
    ws, local = workspaces[0], local_runs[0]
    out = tmp_path / "run"
    first, second = (out / "transcripts" / f"{m.id}.json" for m in ws.meetings)
    log = tmp_path / "run.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "speechkit", "run", "l2", "--workspace", str(ws.root),
                                 "--out", str(out), "--executor", "ray", "--address", ray_cluster.address],
                                stdout=sink, stderr=subprocess.STDOUT)
    try:
        while not first.exists():
            assert proc.poll() is None, log.read_text()[-3000:]
            time.sleep(0.02)
        workers = _workers(ray_cluster, "WorkspaceWorker")
        assert len(workers) == 1, workers
        os.kill(workers[0], signal.SIGKILL)
        assert not second.exists(), "the second meeting finished before the kill: nothing was interrupted"
        finished = {p.name: p.read_bytes() for p in (out / "transcripts").glob(f"{first.stem}.*")}
        assert len(finished) == 3, finished
        assert proc.wait(timeout=400) == 0, log.read_text()[-3000:]  # Ray restarted the worker and retried
    finally:
        if proc.poll() is None:
            proc.kill()
    assert {name: (local.out / "transcripts" / name).read_bytes() for name in finished} == finished
    assert outputs(out) == outputs(local.out)

    [again] = make_executor("ray").run(load_recipe("l2"), [Job(ws, out)], progress=False)
    assert run_json(out)["cache"]["misses"] == {}
    assert outputs(out) == outputs(local.out) and scores(again.scores) == scores(local.scores)
    assert not list(out.rglob(".*.tmp"))


def test_recipe_resources_are_read_and_validated(tmp_path):
    recipe = tmp_path / "r.yaml"
    base = (REPO / "recipes" / "whisper.yaml").read_text()
    recipe.write_text(base + "resources: {asr: {num_gpus: 1, batch_size: 4, concurrency: 2},\n"
                             "            workspace: {num_cpus: 2}}\n")
    loaded = load_recipe(recipe)
    assert loaded.resources == {"asr": StageResources(num_gpus=1, batch_size=4, concurrency=2),
                                "workspace": StageResources(num_cpus=2)}
    assert loaded.with_overrides(model="tiny").resources == loaded.resources
    assert load_recipe("l2").resources == {}
    for bad, where in [("resources: {gpu: {num_gpus: 1}}", "resources.gpu"),
                       ("resources: {asr: {gpus: 1}}", "resources.asr.gpus"),
                       ("resources: {asr: {num_gpus: -1}}", "resources.asr.num_gpus"),
                       ("resources: {asr: {batch_size: 0}}", "resources.asr.batch_size"),
                       ("resources: {asr: {concurrency: 1.5}}", "resources.asr.concurrency"),
                       ("resources: [asr]", "resources")]:
        recipe.write_text(base + bad + "\n")
        with pytest.raises(FormatError, match=f"r.yaml: {where}: "):
            load_recipe(recipe)


def test_unknown_executor_and_stray_address_are_refused():
    with pytest.raises(SpeechkitError, match="unknown executor 'dask'"):
        make_executor("dask")
    with pytest.raises(SpeechkitError, match="needs --executor ray"):
        make_executor("local", address="10.0.0.1:6379")
