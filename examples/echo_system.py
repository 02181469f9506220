"""A meeting system in one file, to show what speechkit gives a system of your own and what it
reads back (docs/systems.md). It hears nothing: it echoes what its context level gave it.

    python examples/echo_system.py INPUTS OUTPUTS

INPUTS is one meeting's inputs folder (``speechkit export inputs``, or the ``command`` backend):
``inputs.json``, ``context.txt`` and, at L2 and L3, ``earlier/`` with this system's own outputs
for the earlier meetings. Into OUTPUTS it writes the files ``inputs.json`` names under
``writes``: the transcript (SegLST), the speaker turns (RTTM), the notes and the answers.

Its transcript is one turn over the whole recording whose words are the level's vocabulary
(nothing at L1), said by the first person of the roster (L3); its notes summarize the CONTEXT
block and count the earlier meetings it produced; each question gets the first roster name.
Only the standard library: a system of yours may be written in anything that reads JSON.
"""
from __future__ import annotations

import json
import sys
import wave
from pathlib import Path


def seconds(audio: str) -> float:
    """The recording's length (1 s where the standard library cannot read it: not a WAV file)."""
    try:
        with wave.open(audio) as w:
            return round(w.getnframes() / w.getframerate(), 3)
    except (wave.Error, EOFError):
        return 1.0


def main(inputs: Path, outputs: Path) -> None:
    given = json.loads((inputs / "inputs.json").read_text(encoding="utf-8"))
    meeting, writes = given["meeting"], given["writes"]
    words = " ".join(given["hotwords"][:20]) or "hello"
    name = next(iter(given["names"]), None)
    end = seconds(given["audio"])
    segment = {"session_id": meeting, "speaker": "spk0", "start_time": 0.0, "end_time": end, "words": words}
    if name is not None:
        segment["speaker_name"] = name
    earlier = [json.loads((inputs / "earlier" / f"{mid}.json").read_text(encoding="utf-8"))
               for mid in given["earlier"]]
    context = (inputs / "context.txt").read_text(encoding="utf-8")
    notes = {"format": "speechkit-notes/1", "meeting": meeting,
             "summary": f"{context.splitlines()[0] if context else 'No context.'} "
                        f"Earlier meetings: {len(earlier)} ({sum(len(t) for t in earlier)} segments).",
             "action_items": [{"description": "follow up", "assignee": name}] if name else [],
             "decisions": [], "outline": [f"## {meeting}"]}
    answers = {"format": "speechkit-answers/1", "meeting": meeting,
               "answers": {q["id"]: name or "nobody" for q in given["questions"]}}
    files = {writes["transcript"]: json.dumps([segment], indent=1),
             writes["turns"]: f"SPEAKER {meeting} 1 0.000 {end:.3f} <NA> <NA> spk0 <NA> <NA>\n",
             writes["notes"]: json.dumps(notes, indent=1), writes["answers"]: json.dumps(answers, indent=1)}
    for rel, text in files.items():
        (outputs / rel).parent.mkdir(parents=True, exist_ok=True)
        (outputs / rel).write_text(text, encoding="utf-8")
    print(f"{meeting}: {len(words.split())} words, {len(earlier)} earlier meetings", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
