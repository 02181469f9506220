"""The run folder: every file a run writes, where it lies, and the one default naming.

One level's run folder (:class:`RunFolder`, ``RUN``)::

    transcripts/<meeting>.json   SegLST (speaker, speaker_name, word_times)
    transcripts/<meeting>.stm    STM
    transcripts/<meeting>.rttm   RTTM: the speaker turns of diarization (who spoke when), named
    context/<meeting>.json       what the context builder added (sizes, budgets; the notes context) and
                                 which of the meeting's scored terms each stream held (metrics/exposure.py)
    notes/<meeting>.json         the meeting's notes (``speechkit-notes/1``), when the recipe summarizes
    answers/<meeting>.json       a whole system's own answers to the meeting's questions (``speechkit-answers/1``)
    <stage>/<meeting><suffix>    the per-meeting files a stage of a plug-in declares (:class:`MeetingFile`)
    cache/<stage>/<key>.json     stored stage results (unless the run is given another cache folder)
    qa.json, qa_pairs.json, judged.json, probe.json, <step>.json   the post-run steps' files
    scores.json                  docs/scores-schema.md
    report.md, report.html, aggregate.png, wer.png   the report
    run.json                     recipe, package versions, model hashes, runtime, timings, cache, stages,
                                 the scored-term exposure summed

The folder of ``speechkit recipe --level all`` (:class:`LevelsFolder`) holds the level folders
``l1``, ``l2``, ``l3``, their shared stage cache ``cache/`` and the comparison
(``comparison.md``/``.html``/``.json``/``.png``); with ``--ablations`` also the L3 ablation's run
folders ``l3-no-enrollments`` and ``l3-no-text`` (L3 with one stream left out, ``context.ablate``).
Every run, at one level or all, goes by default
to ``runs/<recipe family>-<workspace>/l<level>`` (:func:`default_run`); runs in the default
folders share the stage cache ``runs/cache``.

A folder of hypotheses a user's own system wrote (``speechkit score --run DIR``) may hold its
transcripts at its top instead of in ``transcripts/`` (:meth:`RunFolder.of_hypotheses`): that is
the layout a meeting system writes (docs/systems.md), and the layout of the earlier outputs its
inputs hold (:mod:`speechkit.io.system_files`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from speechkit.errors import FormatError
from speechkit.io.jsonfile import read_json
from speechkit.io.names import child_path

if TYPE_CHECKING:
    from speechkit.workspace import Workspace

#: The folder of the default run folders (and of the stage cache they share).
RUNS = Path("runs")
LEVEL_FOLDERS = {1: "l1", 2: "l2", 3: "l3"}
#: The run folders of the L3 ablation, by the stream left out (``context.ablate``).
ABLATION_FOLDERS = {"enrollments": "l3-no-enrollments", "text": "l3-no-text"}


@dataclass(frozen=True)
class MeetingFile:
    """A file a run writes per meeting: ``folder/<meeting><suffix>`` in the run folder."""

    folder: str
    suffix: str

    @property
    def pattern(self) -> str:
        """The file's place as messages name it: ``notes/<id>.json``."""
        return f"{self.folder}/<id>{self.suffix}"

    def path(self, root: str | Path, meeting: str) -> Path:
        """The file of ``meeting`` under the run folder ``root`` (refused for an unsafe id)."""
        return child_path(Path(root) / self.folder, meeting, self.suffix)


TRANSCRIPT = MeetingFile("transcripts", ".json")
TRANSCRIPT_STM = MeetingFile("transcripts", ".stm")
TURNS_RTTM = MeetingFile("transcripts", ".rttm")
NOTES = MeetingFile("notes", ".json")
ANSWERS = MeetingFile("answers", ".json")
CONTEXT = MeetingFile("context", ".json")


class RunFolder:
    """One level's run folder (the module docstring's layout)."""

    RUN = "run.json"
    SCORES = "scores.json"
    REPORT = "report.md"
    REPORT_HTML = "report.html"
    QA = "qa.json"
    PAIRS = "qa_pairs.json"
    JUDGED = "judged.json"
    PROBE = "probe.json"

    def __init__(self, root: str | Path, transcripts: str | Path | None = None) -> None:
        self.root = Path(root)
        self.transcripts = Path(transcripts) if transcripts is not None else self.root / TRANSCRIPT.folder

    @classmethod
    def of_hypotheses(cls, path: str | Path) -> RunFolder:
        """The run folder ``path``, or a folder holding its hypotheses at its top (``<meeting>.json``,
        ``<meeting>.rttm``; notes and answers as in a run folder) when it has no ``transcripts/``."""
        root = Path(path)
        return cls(root) if (root / TRANSCRIPT.folder).is_dir() else cls(root, root)

    def __repr__(self) -> str:
        return f"RunFolder({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunFolder) and (self.root, self.transcripts) == (other.root, other.transcripts)

    def __hash__(self) -> int:
        return hash((self.root, self.transcripts))

    def meeting_file(self, file: MeetingFile, meeting: str) -> Path:
        """``file`` of ``meeting`` in this run."""
        return file.path(self.root, meeting)

    def transcript(self, meeting: str, suffix: str = TRANSCRIPT.suffix) -> Path:
        """The meeting's transcript (SegLST ``.json``; ``.stm``; the speaker turns ``.rttm``)."""
        return child_path(self.transcripts, meeting, suffix)

    def notes(self, meeting: str) -> Path:
        """The meeting's notes (``speechkit-notes/1``)."""
        return self.meeting_file(NOTES, meeting)

    def answers(self, meeting: str) -> Path:
        """A whole system's own answers to the meeting's questions (``speechkit-answers/1``)."""
        return self.meeting_file(ANSWERS, meeting)

    def context(self, meeting: str) -> Path:
        """What the context level gave the meeting."""
        return self.meeting_file(CONTEXT, meeting)

    def file(self, name: str) -> Path:
        """A file of the whole run (``scores.json``, a step's ``judged.json``) by its name."""
        return child_path(self.root, name)

    @property
    def run_json(self) -> Path:
        return self.file(self.RUN)

    @property
    def scores(self) -> Path:
        return self.file(self.SCORES)

    @property
    def cache(self) -> Path:
        """The run's own stage cache (used unless the run is given another)."""
        return self.root / "cache"

    @property
    def llm_cache(self) -> Path:
        """The response cache of the LLM requests of commands over the finished run."""
        return self.cache / "llm"

    def is_finished(self) -> bool:
        """Whether the run wrote its run.json (it is written last but the report)."""
        return self.run_json.is_file()

    def info(self) -> dict[str, Any]:
        """The run's run.json; a missing or malformed one is a :class:`FormatError`."""
        if not self.run_json.is_file():
            raise FormatError(self.run_json, "not found; is this a run folder (speechkit run / recipe --out)?")
        info = read_json(self.run_json)
        if not isinstance(info, dict):
            raise FormatError(self.run_json, "expected an object")
        return info

    def level(self) -> int:
        """The context level run.json's recipe records."""
        recipe = self.info().get("recipe")
        level = recipe.get("level") if isinstance(recipe, dict) else None
        if type(level) is not int or not 1 <= level <= 3:
            raise FormatError(self.run_json, f"level {level!r} is not 1, 2 or 3", field="recipe.level")
        return level

    def workspace(self, workspace: str | Path | None = None) -> Workspace:
        """The workspace of the run: ``workspace`` when given, else the one run.json names (a
        relative ``workspace.root`` is relative to the run folder)."""
        from speechkit.io.manifest import load_workspace
        if workspace is None:
            if not self.run_json.is_file():
                raise FormatError(self.run_json, "not found; name the run's workspace with --workspace")
            info = read_json(self.run_json)
            named = info.get("workspace") if isinstance(info, dict) else None
            root = named.get("root") if isinstance(named, dict) else None
            if not isinstance(root, str) or not root:
                raise FormatError(self.run_json, "names no workspace (workspace.root); give it with --workspace")
            workspace = self.root / root  # an absolute root stays as it is
        return load_workspace(workspace)

    def meetings(self, ws: Workspace) -> list[str]:
        """The meetings of ``ws`` this run transcribed, in the workspace's calendar order."""
        return [m.id for m in ws.scored_meetings if self.transcript(m.id).is_file()]


class LevelsFolder:
    """The folder of ``speechkit recipe --level all``: a run folder per level, their shared stage
    cache and the comparison of the levels."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def level(self, level: int) -> RunFolder:
        """The run folder of ``level``."""
        return RunFolder(self.root / LEVEL_FOLDERS[level])

    def ablation(self, stream: str) -> RunFolder:
        """The run folder of L3 without ``stream`` (``enrollments`` or ``text``)."""
        return RunFolder(self.root / ABLATION_FOLDERS[stream])

    @property
    def cache(self) -> Path:
        """The stage cache the levels share."""
        return self.root / "cache"

    def comparison(self, suffix: str) -> Path:
        """``comparison<suffix>``: ``.md``, ``.html``, ``.json``, ``.png``."""
        return self.root / f"comparison{suffix}"


def default_folder(family: str, workspace: str) -> LevelsFolder:
    """The default folder of a recipe family's runs of a workspace: ``runs/<family>-<workspace>``."""
    return LevelsFolder(child_path(RUNS, f"{family}-{workspace}"))


def default_run(family: str, workspace: str, level: int) -> RunFolder:
    """The default run folder of one level: ``runs/<family>-<workspace>/l<level>``."""
    return default_folder(family, workspace).level(level)


def level_folders(path: str | Path) -> list[RunFolder]:
    """The run folders under ``path``: itself when it holds run.json, else its level folders
    ``l1``, ``l2``, ``l3`` and the L3 ablation's that do (what ``speechkit recipe --level all
    [--ablations]`` writes)."""
    path = Path(path)
    if not path.is_dir():
        raise FormatError(path, "run folder not found")
    if RunFolder(path).is_finished():
        return [RunFolder(path)]
    folder = LevelsFolder(path)
    runs = [*(folder.level(n) for n in LEVEL_FOLDERS), *(folder.ablation(s) for s in ABLATION_FOLDERS)]
    levels = [run for run in runs if run.is_finished()]
    if not levels:
        raise FormatError(path, "not a run folder: no run.json, and no level folders l1, l2, l3 holding one")
    return levels
