"""Reports of a run: report.md and a self-contained report.html with plots; level comparisons.

A report is made from the run folder alone (:class:`~speechkit.io.run_view.RunView`: run.json,
scores.json and the post-run steps' files), by one path whether the run has just finished or a
step ran on it later, so a rebuilt report is the same bytes as a fresh one. It is an ordered list
of sections (:class:`~speechkit.core.section.Section`), each supplied by its owner: the report's
own and the transcript metric families' (:mod:`.sections`), the scored terms the context held
(:mod:`.exposure`), and those the stage and step modules offer (``SECTIONS``: the corrections,
the ASR loop control, the meeting notes, the judged scores, the probing). The plots
(:mod:`.plots`), the HTML page (:mod:`.html`) and the comparison of runs (:mod:`.comparison`)
are apart.
"""
from __future__ import annotations

import importlib

from speechkit.core.section import Section
from speechkit.io.atomic import write_bytes, write_text
from speechkit.io.run_folder import RunFolder
from speechkit.io.run_view import RunView
from speechkit.report import exposure, sections
from speechkit.report.html import html_page
from speechkit.report.plots import bars_with_ci, wer_per_meeting
from speechkit.stages import STAGES
from speechkit.steps import STEPS

__all__ = ["report_sections", "write_report"]


def report_sections() -> list[Section]:
    """Every section, in report order: the report's own and those of the stage and step modules."""
    offered = [section for path in (*STAGES.values(), *STEPS.values())
               for section in getattr(importlib.import_module(path), "SECTIONS", ())]
    return sorted([*sections.SECTIONS, *exposure.SECTIONS, *offered], key=lambda s: s.order)


def write_report(run: RunFolder) -> None:
    """Write report.md, report.html and the plot PNGs of the finished run ``run`` from its folder;
    a plot with nothing to draw is not written (and an earlier report's is removed)."""
    view = RunView.of(run)
    drawn = {"aggregate.png": bars_with_ci({view.recipe_name: view.scores}, "Aggregate metrics"),
             "wer.png": wer_per_meeting(view.scores)}
    images = {name: data for name, data in drawn.items() if data is not None}
    for name in drawn:
        if name in images:
            write_bytes(run.file(name), images[name])
        else:
            run.file(name).unlink(missing_ok=True)  # an earlier report's plot of this folder
    view = RunView(run, view.info, view.scores, {name.removesuffix(".png"): name for name in images})
    rendered = [(section, section.render(view)) for section in report_sections()]
    body = [line for section, lines in rendered if not section.html_only for line in lines]
    page = [line for _, lines in rendered for line in lines]
    write_text(run.file(RunFolder.REPORT), "\n".join(body))
    write_text(run.file(RunFolder.REPORT_HTML),
               html_page(view.title, "\n".join(page), images, sections.speaker_grid(view.scores)))
