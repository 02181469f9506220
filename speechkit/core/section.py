"""Report sections: each supplied by its owner (the report's core, a metric family, a stage, a step).

A :class:`Section` renders Markdown lines from the run's :class:`~speechkit.io.run_view.RunView`
(none: the section has nothing to say). The report (:mod:`speechkit.report`) joins every
section's lines in the order of their ``order`` numbers; ``html_only`` sections (the stage
cache's counts, which a rerun changes) go into report.html only. A stage or step module offers
its sections as ``SECTIONS``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from speechkit.io.run_view import RunView


@dataclass(frozen=True)
class Section:
    """``render(view)``: the section's Markdown lines; ``order``: where it stands in the report."""

    order: int
    render: Callable[[RunView], list[str]]
    html_only: bool = False
