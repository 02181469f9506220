"""The report's own sections (the run's header, the aggregate, the per-meeting table, the LLM
notice, the stage cache) and those of the transcript metric families (word and diarization
errors, per speaker, missed terms, speaker identity); each a :class:`~speechkit.core.section.Section`.

What each section shows, in report order: where the errors are, the aggregate metrics grouped
by which direction is better, each n/a with its reason; WER split into substitutions, deletions
and insertions; DER into missed speech, false alarm and confusion, beside the trivial baselines
(one label over the reference speech, one over the system's speech); a per-speaker table; the
missed terms; the names given to each person per meeting with the wrong ones marked.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from speechkit.core.section import Section
from speechkit.io.markdown import cell, code, estimate, not_applicable_lines, per_meeting_table, share
from speechkit.io.run_view import RunView
from speechkit.io.scores import Scores
from speechkit.llm.run import failure_notice
from speechkit.metrics.diarization import BASELINES
from speechkit.metrics.speakers import wrong_names
from speechkit.metrics.word_kinds import KINDS, OPERATIONS
from speechkit.scoring.catalogue import DIRECTIONS, catalogue, metric

#: The context levels, one sentence each (README.md says the same).
LEVELS = {
    1: "the meeting's audio alone.",
    2: "L1 plus the system's own outputs for the earlier meetings of the workspace (the words it was sure "
       "of, its speakers' voices and labels, its notes).",
    3: "L2 plus the workspace's artifacts: the roster, voice enrollments, jargon, the meeting's invite (its "
       "size is the diarizer's speaker count) and agenda, and the emails and slides dated up to the meeting.",
}


def lower_is_better() -> str:
    """The labels of the metrics where lower is better, as prose (``WER, cpWER, tcpWER, DER and JER``)."""
    cat = catalogue()
    labels = [cat.metrics[k].label for k in cat.table_order if cat.metrics[k].better == "lower"]
    return " and ".join(filter(None, [", ".join(labels[:-1]), labels[-1]]))


def _notice(view: RunView) -> list[str]:
    """The report's first line when LLM requests failed or an endpoint failed its probe."""
    notice = failure_notice(view.info.get("llm"))
    return [notice, ""] if notice else []


#: The L3 ablation's runs (``context.ablate``), one sentence each.
ABLATED = {"enrollments": "the voice enrollments left out.",
           "text": "the workspace text left out (roster names, jargon, documents, prompt; the notes context's roster, "
                   "emails and agenda), the voice enrollments and the invite's speaker count kept."}


#: What each ``context.rules`` is, as the report's header says it (docs/systems.md, "Level rules").
RULE_SETS = {"speechkit": "speechkit's levels",
             "paper": "the OSynth paper's as written: no invite speaker count, every enrolled person's enrollment, "
                      "no L2 voice memory, identification asked at every level, the general n-gram at every level, "
                      "only the batch-length guard on corrections"}


def _endpoints(view: RunView) -> list[str]:
    """The endpoints the run's system asked (run.json's ``llm`` block), one line; none without."""
    used = ((view.info.get("llm") or {}).get("endpoints")) or []
    if not used:
        return []
    return ["Endpoints: " + "; ".join(f"`{u['model']}` at {u['base_url']} ({u['requests']} requests, "
                                       f"{u['cache_hits']} answered from the cache)" for u in used) + ".", ""]


def _header(view: RunView) -> list[str]:
    settings = view.scores.settings
    level = view.level
    ablate = (view.recipe.get("context") or {}).get("ablate")
    rules = (view.recipe.get("context") or {}).get("rules") or "speechkit"
    return [f"# {view.title}", "", f"Workspace `{view.workspace_name}` ({len(view.scores.meetings)} meetings), "
            f"recipe `{view.recipe_name}`" + (f", context level L{level}: {LEVELS[level]}" if level in LEVELS else ".")
            + (f" Ablation (`context.ablate: {ablate}`): {ABLATED[ablate]}" if ablate in ABLATED else "")
            + f" Level rules: `{rules}` ({RULE_SETS.get(rules, 'unknown')}).",
            "", *_endpoints(view), "Context levels:", "", *(f"- **L{n}**: {text}" for n, text in LEVELS.items()), "",
            "Scoring settings:", "",
            *(f"- {key}: {value}" for key, value in settings.items()
              if value is not None and not isinstance(value, dict)),
            ""]


def _aggregate(view: RunView) -> list[str]:
    """The aggregate metrics, one table per direction; DER and JER beside their trivial baselines."""
    scores = view.scores
    lines = ["## Aggregate (95% bootstrap CI over meetings)", "",
             "*pooled* is the micro ratio (errors or hits summed over the meetings, over the summed reference: "
             "a long meeting weighs more); *mean of meetings* is the mean of the meetings' own values (every "
             "meeting weighs alike), the figure the OSynth paper's tables hold.", ""]
    baselines, cat = scores.baselines, catalogue()
    for direction, keys in cat.by_direction(cat.table_order).items():
        with_baselines = bool(baselines) and any(k in ("der", "jer") for k in keys)
        lines += [f"### {DIRECTIONS[direction].capitalize()}", "",
                  "| metric | pooled [95% CI] | mean of meetings [95% CI] |"
                  + (" trivial baselines [95% CI] |" if with_baselines else ""),
                  "|---|---|---|" + ("---|" if with_baselines else "")]
        for key in keys:
            row = (f"| {metric(key).label_in(scores.settings)} | {estimate(scores, metric(key))} | "
                   f"{estimate(scores, metric(key), mean=True)} |")
            if with_baselines:
                row += " " + "; ".join(f"{label} {metric(key).format_estimate(baselines[b].get(key))}"
                                       for b, label in BASELINES.items()
                                       if key in ("der", "jer") and b in baselines) + " |"
            lines.append(row)
        lines.append("")
    if "aggregate" in view.plots:
        lines += [f"![aggregate]({view.plots['aggregate']})", ""]
    return lines


def _per_meeting(view: RunView) -> list[str]:
    shown = [metric(k) for k in catalogue().transcript_keys]
    lines = ["## Per meeting", "", f"Lower is better for {lower_is_better()}; higher for the others.", "",
             *per_meeting_table(view.scores, shown), "", *not_applicable_lines(view.scores, shown)]
    if "wer" in view.plots:
        lines += ["", f"![per-meeting WER]({view.plots['wer']})"]
    return lines + [""]


def _component_rows(scores: Scores, key: str, detail: str, parts: tuple[str, ...], total: str,
                    unit: str = "") -> list[str]:
    """Table rows: per meeting where ``details[detail]`` was computed, its ``total``, the metric and each
    of its ``parts`` as a share of the total; then the sums of scores.json ``components``."""
    shown = metric(key)

    def row(name: str, d: Mapping[str, Any], value: float | None) -> str:
        size = f"{d[total]:.1f}" if unit == "s" else f"{d[total]}"
        return (f"| {name} | {size} | {shown.format(value)} | "
                + " | ".join(share(d[k], d[total], unit) for k in parts) + " |")

    rows = [row(mid, m.detail(detail), m.value(key)) for mid, m in scores.meetings.items() if detail in m.details]
    summed = scores.components.get(key)
    return rows + ([row("all", summed, scores.value(key))] if rows and summed else [])


def _word_errors(view: RunView) -> list[str]:
    """WER per meeting split into substitutions, deletions and insertions."""
    scores = view.scores
    lines = ["## Word errors: substitutions, deletions, insertions", ""]
    rows = _component_rows(scores, "wer", "wer", ("substitutions", "deletions", "insertions"), "reference_words")
    if not rows:
        return lines + [f"Not applicable: {cell(scores.not_applicable('wer'), 'no meetings')}.", ""]
    return lines + ["Each a share of the reference words (after normalisation; the count in brackets); the three "
                    "add up to WER.", "",
                    "| meeting | reference words | WER | substitutions | deletions | insertions |",
                    "|---|---|---|---|---|---|", *rows, ""]


def _word_error_kind_rows(kinds: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Table rows: per kind of word (:data:`~speechkit.metrics.word_kinds.KINDS`), its reference
    words, substitutions, deletions, insertions and errors, and its share of all errors; then all."""
    total = sum(kinds[k]["errors"] for k in KINDS)
    rows = {label: kinds[kind] for kind, label in KINDS.items()}
    keys = ("reference_words", *OPERATIONS.values(), "errors")
    rows["all"] = {key: sum(kinds[k][key] for k in KINDS) for key in keys}
    return [f"| {label} | {e['reference_words']} | " + " | ".join(str(e[op]) for op in OPERATIONS.values())
            + f" | {e['errors']} | {share(e['errors'], total)} |" for label, e in rows.items()]


def _word_error_kinds(view: RunView) -> list[str]:
    """WER's errors by the kind of word they hit, summed over the meetings (the ASR error taxonomy)."""
    summed = view.scores.components.get("word_error_kinds")
    if not summed or not summed.get("meetings"):
        return []
    return ["## Word errors by kind of word", "",
            "Each WER error by the kind of word it hits (a substitution or deletion: the reference word; an "
            "insertion: the system's word), first that fits: a name or nickname of the roster, a word of a "
            "jargon term, a number or date, a function word, another content word (docs/scores-schema.md, "
            f"\"Word errors by kind\"). Over {summed['meetings']} meeting(s); the kinds add up to WER's "
            "errors. The last column: the kind's share of all errors (the count in brackets).", "",
            "| kind | reference words | substitutions | deletions | insertions | errors | share of errors |",
            "|---|---|---|---|---|---|---|", *_word_error_kind_rows(summed["kinds"]), ""]


def _der_of(details: Mapping[str, Any] | None) -> float | None:
    """A meeting's DER from its components (None without reference speech)."""
    ratio = metric("der").from_details({"diarization": details}) if details else None
    return ratio.value if ratio else None


def _diarization_errors(view: RunView) -> list[str]:
    """DER per meeting split into missed speech, false alarm and confusion; DER and JER beside the
    trivial baselines."""
    scores = view.scores
    lines = ["## Diarization errors: missed speech, false alarm, confusion", ""]
    rows = {mid: m.detail("diarization") for mid, m in scores.meetings.items() if "diarization" in m.details}
    if not rows:
        return lines + [f"Not applicable: {cell(scores.not_applicable('der'), 'no meetings')}.", ""]
    scored: dict[str, list[str]] = {}
    for mid, d in rows.items():
        scored.setdefault(d.get("hypothesis", "speaker turns"), []).append(mid)
    der, jer = metric("der"), metric("jer")
    lines += ["Each a share of the reference speech scored (seconds in brackets); the three add up to DER. Collar "
              f"{scores.settings.get('der_collar_s', 0.25):g} s on each side of every reference boundary, "
              "overlapped speech scored. The system's side: "
              + "; ".join(f"{kind} ({', '.join(ids)})" for kind, ids in scored.items()) + ".", "",
              "| meeting | reference speech scored (s) | DER | missed speech | false alarm | confusion |",
              "|---|---|---|---|---|---|",
              *_component_rows(scores, "der", "diarization", ("missed_detection_s", "false_alarm_s", "confusion_s"),
                               "total_s", "s")]
    if not any("baselines" in d for d in rows.values()):
        return lines + [""]
    labels = list(BASELINES.values())
    lines += ["", "### DER and JER against doing nothing", "",
              f"Trivial diarizations scored as the system is: {labels[0]} (every reference turn given to one "
              f"speaker: speech found perfectly, no speaker told apart) and {labels[1]} (the system's turns given "
              "to one speaker). A DER not clearly below them tells speakers apart no better than one label.", "",
              f"| meeting | DER | DER, {labels[0]} | DER, {labels[1]} | JER | JER, {labels[0]} | JER, {labels[1]} |",
              "|---|---|---|---|---|---|---|"]

    def row(name: str, ders: list[float | None], jers: list[float | None]) -> str:
        return f"| {name} | " + " | ".join([*map(der.format, ders), *map(jer.format, jers)]) + " |"

    meetings = scores.meetings
    for mid, d in rows.items():
        base = d.get("baselines") or {}
        lines.append(row(mid, [meetings[mid].value("der"), *(_der_of(base.get(b)) for b in BASELINES)],
                         [meetings[mid].value("jer"), *((base.get(b) or {}).get("jer") for b in BASELINES)]))
    aggregate = scores.baselines
    if aggregate:
        def value(baseline: str, key: str) -> float | None:
            return ((aggregate.get(baseline) or {}).get(key) or {}).get("value")
        lines.append(row("all", [scores.value("der"), *(value(b, "der") for b in BASELINES)],
                         [scores.value("jer"), *(value(b, "jer") for b in BASELINES)]))
    return lines + [""]


def _per_speaker(view: RunView) -> list[str]:
    """Per meeting and person: the name given (✓ / ✗), reference words, WER under the cpWER
    assignment, speech time."""
    scores = view.scores
    lines = ["## Per speaker", ""]
    rows = []
    for mid, meeting in scores.meetings.items():
        named = (meeting.detail("speakers") or {}).get("persons") or {}
        errors = (meeting.detail("per_speaker") or {}).get("persons") or {}
        for person in sorted({*errors, *named}):
            n, e = named.get(person, {}), errors.get(person, {})
            right = {True: "✓", False: "✗"}.get(n.get("name_right"), "")
            speech = e.get("speech_s", n.get("speech_s"))
            rows.append(f"| {mid} | {cell(person)} | {cell(n.get('name'), '(unrouted)') if n else ''} | {right} | "
                        f"{e.get('words', '')} | {metric('wer').format(e.get('wer')) if e else ''} | "
                        f"{'' if speech is None else f'{speech:.1f}'} |")
    if not rows:
        return lines + [f"Not applicable: {cell(scores.not_applicable('cpwer'), 'no meetings')}.", ""]
    return lines + [
        "Per person: the name the system gave them (the majority over their words; ✓ a name they answer to, "
        "✗ one they do not, blank where not judged), their reference words, their WER against the words of the "
        "system's speaker cpWER assigned them (their share of cpWER's errors), their speech in the reference turns.",
        "", "| meeting | person | name given | named right | reference words | WER | speech (s) |",
        "|---|---|---|---|---|---|---|", *rows, ""]


def missed_terms(scores: Scores) -> dict[str, list[str] | None]:
    """Meeting -> terms (jargon and numbers) spoken but not found in the hypothesis; None where the
    meeting's terms were not scored (no term list, or no words)."""
    out: dict[str, list[str] | None] = {}
    for mid, meeting in scores.meetings.items():
        terms, numbers = meeting.detail("term_recall"), meeting.detail("number_recall")
        if terms is None and numbers is None:
            out[mid] = None
            continue
        out[mid] = list((terms or {}).get("missed", [])) + list((numbers or {}).get("missed", []))
    return out


def _missed_terms(view: RunView) -> list[str]:
    """The terms spoken but not found, per meeting; or why terms were not scored."""
    lines = ["## Missed terms", ""]
    missed = missed_terms(view.scores)
    if all(terms is None for terms in missed.values()):
        reason = view.scores.not_applicable("term_recall") or "no meetings"
        return lines + [f"Not scored: {cell(reason)}.", ""]
    meetings = view.scores.meetings
    for mid, terms in missed.items():
        if terms is None:
            lines.append(f"- {mid}: not scored ({cell(meetings[mid].reason('term_recall'))})")
        else:
            lines.append(f"- {mid}: " + (", ".join(code(t) for t in terms) if terms else "none"))
    return lines + [""]


def speaker_grid(scores: Scores) -> tuple[list[str], list[str], dict[tuple[str, str], str]]:
    """Persons x meetings -> the name the system gave each person (majority of their words),
    marked ``✗`` where it breaks the person's identity (:func:`speechkit.metrics.speakers.wrong_names`)."""
    rows: dict[str, dict[str, tuple[str | None, bool | None]]] = {}
    for mid, meeting in scores.meetings.items():
        persons = (meeting.detail("speakers") or {}).get("persons") or {}
        for person, attribution in persons.items():
            rows.setdefault(person, {})[mid] = (attribution.get("name"), attribution.get("name_right"))
    wrong = wrong_names(rows)
    cells = {(p, m): (name or "(unrouted)") + (" ✗" if (p, m) in wrong else "")
             for p, row in rows.items() for m, (name, _) in row.items()}
    return sorted(rows), list(scores.meetings), cells


def _speaker_identity(view: RunView) -> list[str]:
    persons, meetings, cells = speaker_grid(view.scores)
    lines = ["## Speaker identity (name given to each person, per meeting; ✗: a name that breaks the "
             "person's identity)", ""]
    if persons:
        lines += ["| person | " + " | ".join(meetings) + " |", "|---" * (len(meetings) + 1) + "|"]
        lines += [f"| {p} | " + " | ".join(cells.get((p, m), "") for m in meetings) + " |" for p in persons]
    else:
        lines.append(f"Not applicable: {cell(view.scores.not_applicable('speaker_consistency'), 'no meetings')}.")
    return lines + [""]


def _stage_cache(view: RunView) -> list[str]:
    """The stage cache's hits and misses per stage (run.json ``cache``); report.html only: a rerun
    changes it, not the run's results."""
    counts = view.block("cache")
    if not counts:
        return []
    hits, misses = counts.get("hits", {}), counts.get("misses", {})
    return ["## Stage cache", "", "Results taken from the stage cache (hits) and computed (misses), per stage.", "",
            "| stage | hits | misses |", "|---|---|---|",
            *(f"| {stage} | {hits.get(stage, 0)} | {misses.get(stage, 0)} |"
              for stage in dict.fromkeys([*hits, *misses])),
            ""]


#: The report's own sections and the transcript families', by their place in the report (a
#: stage's or a step's sections, ``SECTIONS`` of its module, take the places between: the
#: corrections 90, the ASR loop control 100, the meeting notes 110, the judged scores 120,
#: the probing 130).
SECTIONS = (Section(0, _notice), Section(10, _header), Section(20, _aggregate), Section(30, _per_meeting),
            Section(40, _word_errors), Section(45, _word_error_kinds), Section(50, _diarization_errors),
            Section(60, _per_speaker), Section(70, _missed_terms), Section(80, _speaker_identity),
            Section(200, _stage_cache, html_only=True))
