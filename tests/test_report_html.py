"""report.html is the report's Markdown rendered, not shown literally: headless Chromium loads it and the
text a reader sees holds no Markdown syntax, and every Markdown table is an HTML table."""
from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
import yaml

from speechkit.io.rttm import write_rttm
from speechkit.io.run_folder import RunFolder
from speechkit.io.seglst import write_seglst
from speechkit.io.stm import read_stm
from speechkit.report import write_report
from speechkit.scoring import score_workspace
from speechkit.transcript import Segment, Transcript

CHROMIUM = shutil.which("chromium")


class _Page(HTMLParser):
    """The visible text of a page and its tags, counted."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: dict[str, int] = {}
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self._hidden += tag in ("style", "script", "title")

    def handle_endtag(self, tag):
        self._hidden -= tag in ("style", "script", "title")

    def handle_data(self, data):
        if not self._hidden:
            self.text.append(data)


@pytest.fixture(scope="module")
def run(tmp_path_factory, make_real_workspace):
    """A finished run folder of the real workspace: named transcripts (one person misnamed in m2),
    speaker turns, scores.json and a run.json with correction edits; its report written from them."""
    root = tmp_path_factory.mktemp("html")
    ws = make_real_workspace(root / "ws")
    out = root / "run"
    transcripts = out / "transcripts"
    transcripts.mkdir(parents=True)
    names = {"p_diane": "Diane", "p_sheila": "Sheila"}
    for meeting in yaml.safe_load((ws / "workspace.yaml").read_text())["meetings"]:
        mid = meeting["id"]
        ref = read_stm(ws / meeting["reference"])[mid]
        wrong = {"p_diane": "Sheila"} if mid == "m2" else {}
        segments = [Segment(s.start, s.end, f"S{s.speaker}", " ".join(s.text.split()[:-1] if k % 2 else s.text.split()),
                            speaker_name=wrong.get(s.speaker, names[s.speaker])) for k, s in enumerate(ref.segments)]
        write_seglst(transcripts / f"{mid}.json", [Transcript(mid, segments)])
        write_rttm(transcripts / f"{mid}.rttm", [Transcript(mid, [Segment(s.start, s.end, s.speaker) for s in segments],
                                                            has_words=False)])
    score_workspace(ws, out, out=out / "scores.json")
    edits = [{"segment": 1, "start": 0, "end": 2, "old": "new jersey", "new": "New Jersey", "gate": "respelling",
              "score": 1.0}]
    (out / "run.json").write_text(json.dumps({
        "recipe": {"name": "whisper-l3", "level": 3, "stages": {"correct": {"backend": "lexicon"}}},
        "workspace": {"name": "pyannote-sample"},
        "stages": {"correct": {"m1": {"backend": "lexicon", "turns": 9, "edits": 1, "turns_changed": 1,
                                      "details": {"edits": edits}}}}}))
    write_report(RunFolder(out))
    return out


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is installed by `make setup`")
def test_report_html_renders_the_markdown_in_chromium(run, tmp_path):
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", (run / "report.html").as_uri()],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    page = _Page()
    page.feed(dom)
    text = "".join(page.text)
    markdown = (run / "report.md").read_text()
    # the Markdown holds what must not show literally
    assert "**L1**" in markdown and "`pyannote-sample`" in markdown and "`New Jersey`" in markdown
    assert "**" not in text and "`" not in text and "|---" not in text and "](" not in text
    assert "Workspace pyannote-sample (2 meetings)" in text and "L1: the meeting's audio alone." in text
    assert "New Jersey" in text
    # every Markdown table is a table element (plus the coloured speaker grid), with header cells
    tables = sum(1 for line in markdown.splitlines() if line.startswith("|---"))
    assert tables >= 8 and page.tags["table"] == tables + 1
    assert page.tags["th"] > 3 * tables
    assert page.tags.get("img") == 2 and dom.count("data:image/png;base64,") == 2
    assert "Sheila ✗" in text  # the wrong name is marked
    assert page.tags["h2"] >= 8 and page.tags["li"] >= 3
