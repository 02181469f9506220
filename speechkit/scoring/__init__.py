"""Score hypotheses against references: a run folder against its workspace, or one reference/hypothesis pair.

Scoring is layered as meeteval separates io, compute and rendering: :mod:`.inputs` (a run folder
and a workspace, or two files -> one :class:`~speechkit.metrics.family.MeetingInputs` per meeting),
:mod:`.compute` (every metric family of :mod:`.catalogue`, then the aggregate over meetings with
bootstrap CIs -> the scores.json mapping of docs/scores-schema.md) and :mod:`.render` (the text
table). The scores read back are :class:`speechkit.io.scores.Scores`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from speechkit.errors import FormatError
from speechkit.io.atomic import check_output_file, write_json
from speechkit.io.manifest import load_workspace
from speechkit.io.run_folder import RunFolder
from speechkit.metrics.options import ScoreOptions
from speechkit.scoring.compute import SCHEMA, score_meetings
from speechkit.scoring.inputs import pair_inputs, workspace_files, workspace_inputs
from speechkit.scoring.render import format_table
from speechkit.workspace import Workspace

__all__ = ["SCHEMA", "ScoreOptions", "format_table", "score_files", "score_meetings", "score_workspace"]


def _written(scores: dict[str, Any], out: str | Path | None) -> dict[str, Any]:
    if out is not None:
        write_json(out, scores)
    return scores


def score_workspace(workspace: Workspace | str | Path, run: RunFolder | str | Path,
                    options: ScoreOptions = ScoreOptions(), out: str | Path | None = None) -> dict[str, Any]:
    """Score a run folder against a workspace's references; with ``out`` the scores are also
    written there (atomically, never over an input).

    ``workspace`` is a loaded workspace or its folder / manifest; ``run`` a run folder, or a folder
    of hypotheses laid out as one with the transcripts at its top
    (:meth:`~speechkit.io.run_folder.RunFolder.of_hypotheses`: ``<id>.json``, ``<id>.rttm``, notes
    and answers where a run folder has them).
    """
    ws = workspace if isinstance(workspace, Workspace) else load_workspace(workspace)
    folder = run if isinstance(run, RunFolder) else RunFolder.of_hypotheses(run)
    if not folder.root.is_dir():
        raise FormatError(folder.root, "run folder not found")
    if out is not None:  # before any work; never over an input
        check_output_file(out, workspace_files(ws, folder))
    pairs = workspace_inputs(ws, folder, options)
    # The run folder is not recorded: scores.json lies in it, and two runs of one recipe into two
    # folders must give the same bytes.
    source = {"workspace": str(ws.root)}
    scores = score_meetings(pairs, {p.id: p for p in ws.people}, ws.terms, options, source, ws, folder)
    return _written(scores, out)


def score_files(reference: str | Path, hypothesis: str | Path, session: str | None = None,
                options: ScoreOptions = ScoreOptions(), out: str | Path | None = None) -> dict[str, Any]:
    """Score a hypothesis file against a reference file, in any supported formats.

    With ``session``, only that session is scored (see :func:`~speechkit.scoring.inputs.pair_inputs`
    for how files are paired). There is no term set, so number and term recall are not
    applicable. DER/JER score an RTTM hypothesis (other formats' segments only with
    ``options.der_from_segments``); named-speaker accuracy and consistency need a hypothesis that
    names someone. With ``out`` the scores are also written there (atomically).
    """
    ref_path, hyp_path = Path(reference), Path(hypothesis)
    if out is not None:  # before any work; never over an input
        check_output_file(out, {"the reference": ref_path, "the hypothesis": hyp_path})
    pairs, people = pair_inputs(ref_path, hyp_path, session, options)
    source = {"reference": str(ref_path.resolve()), "hypothesis": str(hyp_path.resolve())}
    return _written(score_meetings(pairs, people, None, options, source), out)
