"""The model registry: offline listing, resolution order, the base-model join, clear errors."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from speechkit import registry
from speechkit.cli import main
from speechkit.errors import ModelNotAvailableError

BRIEF_MODELS = ["whisper-tiny.en", "whisper-base", "whisper-small", "whisper-medium", "whisper-large-v3",
                "silero-vad", "speechbrain-vad-crdnn", "pyannote-segmentation-3.0",
                "pyannote-speaker-diarization-3.1", "resemblyzer", "speechbrain-ecapa-voxceleb",
                "speechbrain-wav2vec2-commonvoice-14-en", "wav2vec2-base-960h"]


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Empty local model folder and Hugging Face cache; the hub is unreachable."""
    import huggingface_hub.constants
    monkeypatch.setenv("SPEECHKIT_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return tmp_path


def test_registry_lists_every_model_with_its_facts() -> None:
    records = registry.load_registry()
    assert set(BRIEF_MODELS) <= set(records)
    for record in records.values():
        assert record.stage in {"vad", "asr", "diarize", "embed", "correct"}
        assert record.package or record.hub, record.name
        assert record.licence and record.size_mb > 0
        assert set(record.requires) <= set(records)
    assert records["whisper-base"].package.join  # the two-part package


def test_every_split_model_joins_the_parts_of_its_own_packages_in_order() -> None:
    """A model split across packages (whisper-base in 2, qwen2.5-coder-1.5b-instruct in 22) names each
    part in the package that ships it, every listed package once, in the packages' order."""
    split = {r.name: r.package for r in registry.load_registry().values() if r.package and r.package.join}
    assert {"whisper-base", "qwen2.5-coder-1.5b-instruct"} <= set(split)
    for name, package in split.items():
        modules = [d.replace("-", "_") for d in package.pip]
        for parts in package.join.values():
            assert [part.split("/", 1)[0] for part in parts] == modules, name
        assert package.locate.split("/", 1)[0] in modules, name


def test_list_works_offline(offline: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["models", "list"]) == 0
    models, backends, recipes = capsys.readouterr().out.split("\n\n")
    assert recipes.startswith("RECIPE")
    lines = {line.split()[0]: line for line in models.splitlines()}
    assert set(BRIEF_MODELS) <= set(lines)
    assert "yes (package)" in lines["whisper-tiny.en"]
    assert "yes (package)" in lines["whisper-base"]
    assert "yes (package)" in lines["silero-vad"]
    assert " no " in lines["whisper-large-v3"] and "3.1 GB" in lines["whisper-large-v3"]
    usable = {tuple(line.split()[:3]) for line in backends.splitlines()[1:]}
    assert {("vad", "silero", "yes"), ("asr", "whisper", "yes"), ("asr", "ctc", "no"),
            ("diarize", "pyannote", "no"), ("correct", "llm", "yes")} <= usable
    assert "speechkit models fetch wav2vec2-base-960h" in backends
    assert main(["models", "list", "--stage", "vad"]) == 0
    models, backends = capsys.readouterr().out.split("\n\n")
    assert {line.split()[0] for line in models.splitlines()[1:]} == {
        "silero-vad", "speechbrain-vad-crdnn", "pyannote-segmentation-3.0"}
    assert {line.split()[1] for line in backends.splitlines()[1:]} == {"silero", "speechbrain", "pyannote"}


def test_hub_only_model_offline_says_how_to_get_it(offline: Path) -> None:
    assert not registry.available("whisper-small")
    with pytest.raises(ModelNotAvailableError) as info:
        registry.resolve("whisper-small")
    message = str(info.value)
    assert "`speechkit models fetch whisper-small`" in message
    assert str(offline / "models" / "whisper-small") in message
    assert "Systran/faster-whisper-small" in message


def test_fetch_without_network_is_a_clear_error(offline: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ModelNotAvailableError, match="could not download 'whisper-small'"):
        registry.fetch("whisper-small")
    assert main(["models", "fetch", "whisper-small"]) == 2
    assert "could not download 'whisper-small'" in capsys.readouterr().err
    # a model that is already here needs no network
    assert registry.fetch("whisper-tiny.en") == registry.resolve("whisper-tiny.en")


def test_tiny_en_resolves_to_the_package_folder() -> None:
    path = registry.resolve("whisper-tiny.en")
    assert {"model.bin", "config.json", "tokenizer.json"} <= {p.name for p in path.iterdir()}
    assert registry.source_of("whisper-tiny.en") == "package"


def test_base_is_joined_once_atomically(offline: Path) -> None:
    parts = [registry._module_path(p) for p in registry.get("whisper-base").package.join["model.bin"]]
    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(registry.resolve("whisper-base")))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    target = offline / "models" / "whisper-base"
    assert results == [target, target]
    assert (target / "model.bin").stat().st_size == sum(p.stat().st_size for p in parts)
    assert {p.name for p in target.iterdir()} == {"model.bin", "config.json", "tokenizer.json",
                                                  "vocabulary.txt"}
    assert [p.name for p in target.parent.iterdir()] == ["whisper-base"]  # no temporary folders left
    stamp = (target / "model.bin").stat().st_mtime_ns
    assert registry.resolve("whisper-base") == target
    assert (target / "model.bin").stat().st_mtime_ns == stamp  # not rebuilt


def test_local_folder_and_hub_cache_are_found(offline: Path) -> None:
    local = offline / "models" / "whisper-medium"
    local.mkdir(parents=True)
    (local / "model.bin").write_bytes(b"x")
    assert registry.resolve("whisper-medium") == local
    assert registry.source_of("whisper-medium") == "local"

    repo = offline / "hf" / "models--speechbrain--spkrec-ecapa-voxceleb"
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "hyperparams.yaml").write_text("x: 1\n")
    assert registry.resolve("speechbrain-ecapa-voxceleb") == repo / "snapshots" / commit
    assert registry.source_of("speechbrain-ecapa-voxceleb") == "hub cache"


def test_aliases_and_model_hash(offline: Path) -> None:
    assert registry.resolve("tiny.en") == registry.resolve("whisper-tiny.en")
    assert registry.get("large-v3").name == "whisper-large-v3"
    local = offline / "models" / "whisper-medium"
    local.mkdir(parents=True)
    (local / "config.json").write_text("{}")
    (local / "model.bin").write_bytes(bytes(3 << 20))
    first = registry.model_hash("medium")
    assert first == registry.model_hash("whisper-medium") and len(first) == 16
    with open(local / "model.bin", "r+b") as handle:  # change the last MiB of a large file
        handle.seek(-10, 2)
        handle.write(b"x")
    assert registry.model_hash("medium") != first
    assert registry.model_hash("silero-vad") == registry.model_hash("silero-vad")


def test_paths_and_unknown_names(tmp_path: Path) -> None:
    assert registry.resolve(tmp_path) == tmp_path
    with pytest.raises(ModelNotAvailableError, match=r"model whisper-huge: not in the registry.*whisper-tiny\.en"):
        registry.resolve("whisper-huge")
    with pytest.raises(ModelNotAvailableError, match="no such model file or folder"):
        registry.resolve(tmp_path / "missing")
    with pytest.raises(ModelNotAvailableError, match="no such model file or folder"):
        registry.resolve("./models/missing")
    assert registry.get("Systran/faster-whisper-tiny.en").name == "whisper-tiny.en"  # a hub id names its model


@pytest.mark.timeout(60)
def test_a_device_or_fifo_is_no_model_and_is_never_read(tmp_path: Path) -> None:
    """`--model /dev/zero` used to be hashed with one read() until the kernel killed the process."""
    import os
    import shutil

    os.mkfifo(tmp_path / "fifo")
    for path in ("/dev/zero", tmp_path / "fifo"):
        with pytest.raises(ModelNotAvailableError, match="not a model file or folder"):
            registry.resolve(path)
        with pytest.raises(ModelNotAvailableError, match="not a model file or folder"):
            registry.model_hash(path)
        assert registry.identity(path) == str(path)
    # in a model folder, a FIFO is not a file of the model: hashed like the folder without it
    folder = registry.resolve("tiny.en")
    shutil.copytree(folder, tmp_path / "model")
    plain = registry.model_hash(tmp_path / "model")
    assert plain == registry.model_hash(folder)
    os.mkfifo(tmp_path / "model" / "pipe.bin")
    assert registry.model_hash(tmp_path / "model") == plain
