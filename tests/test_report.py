"""The report renders in a real browser: headless Chromium screenshots report.html with its plots."""
from __future__ import annotations

import shutil
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest

from speechkit.compare import Run, compare
from speechkit.io.stm import read_stm, write_stm
from speechkit.recipe import load_recipe
from speechkit.report import write_comparison, write_report
from speechkit.scoring import score_files

CHROMIUM = shutil.which("chromium")
# Matplotlib's first two default bar colours (C0 blue, C1 orange), as RGB.
BAR_COLOURS = ((31, 119, 180), (255, 127, 14))


@pytest.fixture(scope="module")
def scores(realdata, tmp_path_factory):
    """Real scores: the sample reference against a copy with the second half's words dropped."""
    ref = read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]
    hyp = type(ref)("sample", [s if i % 2 else type(s)(s.start, s.end, s.speaker, " ".join(s.text.split()[:2]))
                               for i, s in enumerate(ref.segments)])
    folder = tmp_path_factory.mktemp("hyp")
    write_stm(folder / "hyp.stm", [hyp])
    return score_files(realdata / "pyannote-sample" / "sample.stm", folder / "hyp.stm")


def _screenshot(html, png):
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={png.parent / 'chromium-profile'}", "--window-size=1200,1600",
                    f"--screenshot={png}", html.as_uri()], check=True, capture_output=True, timeout=120)
    import matplotlib.image
    return (matplotlib.image.imread(png)[..., :3] * 255).round().astype(int)


def _pixels_of(image, colour) -> int:
    return int(np.all(np.abs(image - np.array(colour)) <= 3, axis=-1).sum())


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is installed by `make setup`")
def test_report_html_renders_its_plots_in_chromium(scores, tmp_path):
    ws = SimpleNamespace(name="sample", meetings=[1])
    write_report(tmp_path, load_recipe("l1"), ws, scores)
    assert "| WER |" in (tmp_path / "report.md").read_text()
    image = _screenshot(tmp_path / "report.html", tmp_path / "shot.png")
    # the bars of the embedded plots are drawn on screen: their colour covers a visible area
    assert _pixels_of(image, BAR_COLOURS[0]) > 500
    assert (image.reshape(-1, 3) != 255).any(axis=1).mean() > 0.05  # not a blank page


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is installed by `make setup`")
def test_comparison_renders_one_bar_series_per_level(scores, tmp_path):
    write_comparison(tmp_path, compare([Run(level, tmp_path / level.lower(), scores) for level in ("L1", "L3")]))
    assert "| WER |" in (tmp_path / "comparison.md").read_text()
    image = _screenshot(tmp_path / "comparison.html", tmp_path / "shot.png")
    assert _pixels_of(image, BAR_COLOURS[0]) > 300 and _pixels_of(image, BAR_COLOURS[1]) > 300
