"""Action-item description quality: what the judge is asked of each run action item.

The paper's "AI desc." score: a 1-5 judgement of how completely and concretely a predicted
action-item description captures the commitment agreed in the meeting, against the gold action
items. A meeting's run action items are matched one-to-one to its gold ones as the notes scores
match them (:func:`speechkit.metrics.notes.match_action_items`, Hungarian on description
similarity at or above the measure's threshold), so the judged items are those whose assignee
accuracy scores.json counts. Each matched pair is one request showing the judge

- the excerpt of the meeting's reference transcript around where the item was agreed: the
  segment sharing the most content words with the gold description and ``excerpt_segments``
  segments either side, without speakers, cut after ``max_excerpt_chars`` (``[cut]``);
- the gold item's description and due date, and the run item's description and due date;
  the **assignee is shown on neither side** and the rules say it is not judged: assignee
  accuracy scores it, and a description judged with its assignee would count that twice;
- the rubric (:data:`RUBRIC`): anchors for 1, 3 and 5, the paper's Appendix I style.

A run item that matched no gold one is judged too, against the meeting's transcript alone: the
excerpt around the segment sharing the most content words with the *run* item, and the rubric
:data:`UNMATCHED_RUBRIC` (is it a commitment the meeting agreed, complete and concrete?). judged.json
and the scores keep the two apart: ``description_quality`` over the matched items (the paper's
figure), ``description_quality_all_items`` over every item the run wrote down.

The answer is one integer 1-5 under a JSON schema (``description_quality``). The judge's self-check
(:meth:`speechkit.steps.judge.Judge.check`) scores a gold item against itself and against
:data:`WRONG_ITEM`: a judge that does not tell them apart fails it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from speechkit.metrics.notes import match_action_items
from speechkit.notes import ActionItem, GoldNotes, Notes
from speechkit.stages.summarize.metrics import FAILED, NO_GOLD, NO_RUN_NOTES
from speechkit.text_similarity import TextSimilarity, content_words
from speechkit.transcript import Transcript

#: The item prompt's name in judged.json; raised when its wording changes.
ITEM_PROMPT = "speechkit-item-judge/2"
#: The self-check's wrong item: no meeting's commitment.
WRONG_ITEM = ActionItem("book a table for the summer party and order the cake")
NO_REFERENCE = "(the meeting has no reference transcript)"
#: The rubric's anchors, as the prompt and docs/llm.md state them.
RUBRIC = (
    (5, "the same commitment, complete and concrete: the task, what it acts on and the specifics the gold item "
        "holds (a system, a number, a due date); other words for the same are fine"),
    (3, "recognisably the same commitment, but vague or incomplete: what it acts on or a specific is left out or "
        "wrong (\"add a load test\" for \"add a load test for Kafka by Wednesday\")"),
    (1, "not the gold commitment: another task, or too vague to tell which (\"follow up on it\")"),
)

#: The anchors for a run item no gold item matched, judged against the transcript alone.
UNMATCHED_RUBRIC = (
    (5, "a commitment the transcript shows the meeting agreed (someone is to do something), complete and concrete: "
        "the task, what it acts on and the specifics the transcript gives"),
    (3, "recognisably something the meeting agreed, but vague or incomplete, or only discussed and not agreed"),
    (1, "no commitment the transcript holds: invented, a status report or a decision written as a task, or too "
        "vague to tell which"),
)

ITEM_SYSTEM_PROMPT = ("You judge the action items that a system wrote down for workplace meetings against the "
                      "action item the meeting agreed. You answer only with the JSON object asked for.")

ITEM_USER_PROMPT = """TRANSCRIPT EXCERPT (the reference transcript where the meeting agreed on the action item):
{excerpt}

GOLD ACTION ITEM (what the meeting agreed someone is to do):
{gold}

SYSTEM ACTION ITEM (to judge):
{system}

Score how completely and concretely the SYSTEM ACTION ITEM's description captures the commitment of the GOLD \
ACTION ITEM, an integer from 1 (worst) to 5 (best):
{rubric}
Rules:
- Do not judge who is to do it: the assignee is scored apart and is shown on neither side.
- Do not judge length or wording; a name or term written more fully, consistent with the transcript, is no error.
Answer with a JSON object with the key {key}."""

UNMATCHED_USER_PROMPT = """TRANSCRIPT EXCERPT (the reference transcript where the meeting most likely spoke of it):
{excerpt}

No action item the meeting agreed was matched to this one.

SYSTEM ACTION ITEM (to judge):
{system}

Score how well the SYSTEM ACTION ITEM's description captures a commitment the meeting agreed, as the TRANSCRIPT \
EXCERPT shows it, an integer from 1 (worst) to 5 (best):
{rubric}
Rules:
- Do not judge who is to do it: the assignee is scored apart and is not shown.
- Do not judge length or wording; a name or term written more fully, consistent with the transcript, is no error.
Answer with a JSON object with the key {key}."""


@dataclass(frozen=True)
class ItemToJudge:
    """A run action item and the gold one it matched (``gold`` None: it matched none), their
    description ``similarity`` and the reference ``excerpt`` around the gold item (around the run
    item when it matched none)."""

    gold: ActionItem | None
    predicted: ActionItem
    similarity: float | None
    excerpt: str

    @property
    def matched(self) -> bool:
        return self.gold is not None

    def as_dict(self) -> dict[str, Any]:
        """judged.json's record of the item (without the assignees, which are not judged)."""
        return {"matched": self.matched, "gold": item_fields(self.gold) if self.gold else None,
                "predicted": item_fields(self.predicted),
                "similarity": round(self.similarity, 4) if self.similarity is not None else None}


def item_fields(item: ActionItem) -> dict[str, Any]:
    """What of an item is judged: its description and due date."""
    return {"description": item.description, "due": item.due}


def item_text(item: ActionItem) -> str:
    """An item as the prompt shows it: the description, and its due date where it has one; no assignee."""
    return " ".join(item.description.split()) + (f" (due: {item.due})" if item.due else "")


def excerpt(reference: Transcript | None, item: ActionItem, around: int, most: int) -> str:
    """The lines of ``reference`` around the segment sharing the most content words with ``item``'s
    description (the first such; ``around`` segments either side), cut after ``most`` characters."""
    texts = [" ".join(s.text.split()) for s in reference.segments if s.text.strip()] if reference else []
    if not texts:
        return NO_REFERENCE
    wanted = content_words(item.description)
    best = max(range(len(texts)), key=lambda i: (len(wanted & content_words(texts[i])), -i))
    text = "\n".join(texts[max(0, best - around):best + around + 1])
    return text if len(text) <= most else text[:most].rstrip() + " [cut]"


def items_reason(notes: Notes | None, gold: GoldNotes | None) -> str | None:
    """Why no item of a meeting can be judged before matching (None: there are items on both sides)."""
    if gold is None:
        return NO_GOLD
    if not gold.action_items:
        return "the gold notes of this meeting have no action items"
    if notes is None:
        return NO_RUN_NOTES
    if notes.failed is not None:
        return f"{FAILED}: {notes.failed}"
    if not notes.action_items:
        return "the run's notes of this meeting have no action items"
    return None


def items_to_judge(notes: Notes, gold: GoldNotes | None, reference: Transcript | None, similarity: TextSimilarity,
                   around: int, most: int) -> tuple[ItemToJudge, ...]:
    """The run's action items matched to the gold ones (in the gold items' order), then, where the
    meeting has a reference transcript, the run's items that matched none (in the run's order), each
    with its excerpt."""
    golds = gold.action_items if gold else ()
    pairs = sorted(match_action_items(notes.action_items, golds, similarity), key=lambda p: p[1]) if golds else []
    matched = tuple(ItemToJudge(golds[j], notes.action_items[i], sim, excerpt(reference, golds[j], around, most))
                    for i, j, sim in pairs)
    taken = {i for i, _, _ in pairs}
    unmatched = tuple(ItemToJudge(None, item, None, excerpt(reference, item, around, most))
                      for i, item in enumerate(notes.action_items) if i not in taken) if reference else ()
    return matched + unmatched


def rubric_text(rubric: Sequence[tuple[int, str]] = RUBRIC) -> str:
    """The rubric's lines as the prompt holds them."""
    return "\n".join([*(f"- {score}: {text}." for score, text in rubric), "- 4 and 2: between the anchors."])


def item_messages(gold: ActionItem | None, system: ActionItem, text: str, key: str) -> list[dict[str, str]]:
    """The request's messages judging ``system``'s description against ``gold`` with the excerpt
    ``text`` (``gold`` None: against the excerpt alone, :data:`UNMATCHED_RUBRIC`)."""
    if gold is None:
        user = UNMATCHED_USER_PROMPT.format(excerpt=text, system=item_text(system),
                                            rubric=rubric_text(UNMATCHED_RUBRIC), key=f'"{key}"')
    else:
        user = ITEM_USER_PROMPT.format(excerpt=text, gold=item_text(gold), system=item_text(system),
                                       rubric=rubric_text(), key=f'"{key}"')
    return [{"role": "system", "content": ITEM_SYSTEM_PROMPT}, {"role": "user", "content": user}]


def first_item(items: Sequence[tuple[ItemToJudge, ...]]) -> ItemToJudge | None:
    """The first matched item to judge of the meetings' ``items`` (the self-check's), None when there is none."""
    return next((i for found in items for i in found if i.matched), None)
