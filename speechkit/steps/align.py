"""Question-answer pairs a system extracts from a meeting, aligned with the gold pairs (M3FinMeeting).

The system's pairs are asked of a language model through :class:`speechkit.llm.LLMClient`: the
run's own transcript of the meeting (``[MM:SS] Name: text`` lines, the first
``transcript_bytes``) and a JSON schema of a list of ``{question, answer}`` (at most
``max_pairs``). The gold pairs are the workspace's ``meetings/<id>/questions.json``
(:mod:`speechkit.io.questions`). :func:`align_meeting` gives, per meeting,
``qa_pair_precision/recall/f1`` (the extracted questions against the gold questions) and the
section-summary variant (the run's summary sentences against the gold summary's sentences), both
by :mod:`speechkit.metrics.qa_alignment` at cosine >= 0.75, many-to-many (Chinese and Japanese
units by their character-bigram overlap at its measured threshold; the prompt then asks for the
pairs in the transcript's language). :func:`align_run` does
it for every meeting of a run (the ``align`` post-run step, ``speechkit align RUN``) and writes
``RUN/qa_pairs.json``: per meeting the counts and figures, and over the run the counts summed and
the figures they give.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from speechkit import cjk
from speechkit.core.options import bounded
from speechkit.core.stage import Spec
from speechkit.core.step import Step, StepJob
from speechkit.io.atomic import write_json
from speechkit.io.notes import read_gold_notes, read_notes
from speechkit.io.questions import default_questions_path, read_questions
from speechkit.io.run_folder import TRANSCRIPT, RunFolder
from speechkit.io.run_output import read_transcript
from speechkit.llm import session
from speechkit.llm.client import BadAnswer, ClientOptions, LLMClient, LLMUnavailable, RequestFailed
from speechkit.llm.run import checked_endpoint
from speechkit.llm.schema import answer_token_limit
from speechkit.metrics.qa_alignment import THRESHOLD, Alignment, align_summaries, align_texts
from speechkit.stages.summarize.llm import chunk_lines, transcript_lines
from speechkit.text_similarity import TextSimilarity, text_similarity
from speechkit.transcript import Transcript
from speechkit.workspace import Workspace

PAIRS_PROMPT = """TRANSCRIPT:
{transcript}

List the questions this meeting answers (who is to do what, what was decided, the numbers and \
dates stated), each with the answer the transcript gives, as a JSON object: \
{{"pairs": [{{"question": "...", "answer": "..."}}]}} (at most {most}).{language}"""
#: Added to the prompt for a transcript with Chinese or Japanese text, so the pairs are in its language.
PAIRS_IN_LANGUAGE = " Write the questions and answers in the language of the transcript."
PAIRS_SYSTEM = "You read meeting transcripts and list the questions they answer. You write only what was said."


@dataclass(frozen=True)
class QAPair:
    """A question and its answer."""

    question: str
    answer: str


def pairs_schema(most: int) -> dict[str, Any]:
    """The JSON schema of an extraction answer: ``{"pairs": [{question, answer}, ...]}``, at most ``most``."""
    pair = {"type": "object", "properties": {"question": {"type": "string", "maxLength": 300},
                                             "answer": {"type": "string", "maxLength": 300}},
            "required": ["question", "answer"], "additionalProperties": False}
    return {"type": "object", "properties": {"pairs": {"type": "array", "maxItems": most, "items": pair}},
            "required": ["pairs"], "additionalProperties": False}


def extract_pairs(client: LLMClient, transcript: Transcript, most: int = 10,
                  transcript_bytes: int = 6000) -> list[QAPair]:
    """The pairs the model extracts from ``transcript``; :class:`BadAnswer` if the answer is not a
    list of pairs (what :meth:`LLMClient.complete` raises besides)."""
    chunks = chunk_lines(transcript_lines(transcript), transcript_bytes)
    text = "\n".join(chunks[0]) if chunks else "(nothing)"
    prompt = PAIRS_PROMPT.format(transcript=text, most=most, language=PAIRS_IN_LANGUAGE if cjk.has_cjk(text) else "")
    answer = client.complete([{"role": "system", "content": PAIRS_SYSTEM}, {"role": "user", "content": prompt}],
                             pairs_schema(most), name="pairs")
    raw = answer.get("pairs")
    if not isinstance(raw, list):
        raise BadAnswer("wrong-shape", f"no list of pairs: {str(answer)[:80]!r}")
    pairs = [QAPair(" ".join(p["question"].split()), " ".join(p["answer"].split())) for p in raw
             if isinstance(p, dict) and isinstance(p.get("question"), str) and isinstance(p.get("answer"), str)
             and p["question"].strip()]
    return pairs[:most]


def align_meeting(run: RunFolder, ws: Workspace, meeting: str, predicted: list[QAPair], similarity: TextSimilarity,
                  threshold: float = THRESHOLD) -> dict[str, Any]:
    """``qa_pairs`` and ``summary`` alignments of one meeting of ``run`` (``Alignment.as_dict``;
    None where the workspace has no gold questions, or no gold notes, or the run no notes)."""
    m = ws.meeting(meeting)
    gold_path = ws.root / default_questions_path(meeting)
    out: dict[str, Any] = {"qa_pairs": None, "summary": None}
    if gold_path.is_file():
        gold = [q.question for q in read_questions(gold_path, meeting).questions]
        out["qa_pairs"] = align_texts([p.question for p in predicted], gold, similarity, threshold).as_dict()
    notes_path = run.notes(meeting)
    if m.notes is not None and notes_path.is_file():
        out["summary"] = align_summaries(read_notes(notes_path, meeting).summary,
                                         read_gold_notes(m.notes, meeting).summary, similarity, threshold).as_dict()
    return out


BACKENDS = {"llm": "speechkit.steps.align:LLMPairs"}
DEFAULT_BACKEND = "llm"


@dataclass(frozen=True)
class PairsOptions(ClientOptions):
    """Options of ``speechkit align``: the LLM client's (endpoint, model, deadline, retries, failure
    policy) and these. ``max_pairs`` [1, 100]: most pairs asked per meeting. ``transcript_bytes``
    [200, 10^7]: most UTF-8 bytes of the transcript in the prompt. ``threshold`` [0, 1]: the
    similarity at which two units align (the paper's 0.75). ``max_tokens``: None, the longest
    answer the schema allows."""

    max_pairs: int = bounded(10, ge=1, le=100)
    transcript_bytes: int = bounded(6000, ge=200, le=10_000_000)
    threshold: float = bounded(THRESHOLD, ge=0.0, le=1.0)


def _pooled(per_meeting: list[dict[str, Any] | None], threshold: float, similarity: str) -> dict[str, Any] | None:
    """The alignment of the run: the meetings' counts summed (None when no meeting has one); the
    similarity and threshold the meetings used where they all used one (CJK meetings use their own)."""
    found = [a for a in per_meeting if a is not None]
    if not found:
        return None
    counts = {key: sum(a[key] for a in found) for key in ("predicted", "gold", "aligned_predicted", "aligned_gold")}
    used = {(a["similarity"], a["threshold"]) for a in found}
    if len(used) == 1:
        similarity, threshold = used.pop()
    return Alignment(**counts, threshold=threshold, similarity=similarity).as_dict()


class LLMPairs:
    """The ``llm`` backend of the alignment: a language model lists the pairs of each transcript."""

    Options = PairsOptions

    def __init__(self, options: PairsOptions, similarity: TextSimilarity | None = None) -> None:
        self.options = options
        self.similarity = similarity or text_similarity("auto")
        self.client = LLMClient(options if options.max_tokens else
                                options.with_overrides(max_tokens=answer_token_limit(pairs_schema(options.max_pairs))))

    def extract(self, transcript: Transcript) -> list[QAPair]:
        """The pairs the model lists for ``transcript`` (:func:`extract_pairs`)."""
        return extract_pairs(self.client, transcript, self.options.max_pairs, self.options.transcript_bytes)


def align_run(run: RunFolder, ws: Workspace, pairs: LLMPairs, transcripts: Mapping[str, Transcript],
              found: str) -> dict[str, Any]:
    """Extract the pairs of each of ``transcripts`` (meeting -> the run's transcript), align them
    and the run's summaries with the gold ones, and write the run's ``qa_pairs.json``, counting
    the requests in the current LLM session (a step's own, :mod:`speechkit.postrun`). ``found``:
    what probing the endpoint found (an unavailable one stops before anything is written; under
    ``allow``: no pairs asked, the meetings say why); a failed request or an answer that is not
    pairs leaves the meeting's pairs n/a with the reason (and, under ``fail``, stops)."""
    options, client = pairs.options, pairs.client
    meetings: dict[str, Any] = {}
    for meeting, transcript in transcripts.items():
        extracted, reason = None, found if found.startswith("failed") else None
        if reason is None:
            try:
                extracted = pairs.extract(transcript)
            except RequestFailed as e:
                if options.failures == "fail":
                    raise LLMUnavailable(f"{client.base_url}: model {client.model}: {e.detail}") from None
                reason = f"no pairs: {e.detail}"[:300]
            except BadAnswer as e:
                reason = f"no pairs: {e.detail}"[:300]
        entry = align_meeting(run, ws, meeting, extracted or [], pairs.similarity, options.threshold)
        if extracted is None:
            entry["qa_pairs"] = None
        meetings[meeting] = {**entry, "pairs": None if extracted is None else [vars(p) for p in extracted],
                             "reason": reason}
    usage = session.current().usage(client.base_url, client.model)
    document = {"schema": "speechkit.qa_pairs/1", "level": run.level(), "workspace": str(ws.root),
                "endpoint": {"base_url": "local server" if client.endpoint.local else client.base_url,
                             "model": client.model, "models_reported": sorted(usage.reported),
                             "requests": usage.requests, "failed": usage.failed},
                "options": {name: getattr(options, name) for name in ("max_pairs", "transcript_bytes", "threshold")},
                "similarity": pairs.similarity.name,
                "run": {kind: _pooled([m[kind] for m in meetings.values()], options.threshold, pairs.similarity.name)
                        for kind in ("qa_pairs", "summary")},
                "meetings": meetings}
    write_json(run.file(RunFolder.PAIRS), document)
    return document


class AlignStep(Step):
    """The ``align`` step: the run's QA pairs and summaries aligned with the gold ones, into ``qa_pairs.json``."""

    name = "align"
    reads = (TRANSCRIPT,)
    writes = (RunFolder.PAIRS,)
    backends = BACKENDS

    def __init__(self, spec: Spec) -> None:
        super().__init__(spec)
        self.pairs = self.backend()
        self.transcripts: dict[str, Transcript] = {}
        self.found = ""

    def check(self, run: RunFolder, job: StepJob) -> None:
        """Read the run's transcripts and probe the endpoint."""
        self.transcripts = {m: read_transcript(run, m) for m in run.meetings(job.workspace)}
        self.found = checked_endpoint(self.pairs.client, self.pairs.options.failures, "align")

    def run(self, run: RunFolder, job: StepJob) -> dict[str, Any]:
        return align_run(run, job.workspace, self.pairs, self.transcripts, self.found)


STEP = AlignStep
