"""Meeting series: recordings grouped by a pattern over their ids, in calendar order.

A series is the meetings of one group of people over time (AMI scenario meetings ES2002a..d: the
same four people in four meetings). ``--series`` is a regular expression searched in each
recording id; its first group (or the whole match when it has none) is the series key, so
``^([A-Z]{2}\\d{4})[a-z]$`` (preset ``ami``) maps ES2002a..ES2002d to ``ES2002``.
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from speechkit.errors import SpeechkitError

#: Named patterns for ``--series``.
PRESETS = {"ami": r"^([A-Z]{2}\d{4})[a-z]$"}
#: First placeholder date, when the corpus gives none (day i of the series is this + i days).
PLACEHOLDER_START = dt.date(2000, 1, 3)


@dataclass(frozen=True)
class Series:
    """The recording ids of one series in calendar order, and the ids the pattern left out."""

    key: str | None
    ids: tuple[str, ...]
    skipped: tuple[str, ...] = ()


def compile_pattern(pattern: str) -> re.Pattern:
    """The series regex for ``pattern`` (a preset name or a regular expression)."""
    try:
        return re.compile(PRESETS.get(pattern, pattern))
    except re.error as exc:
        raise SpeechkitError(f"--series: invalid regular expression {pattern!r}: {exc}") from None


def series_key(regex: re.Pattern, recording_id: str) -> str | None:
    """The series a recording belongs to (None: the pattern does not match its id)."""
    match = regex.search(recording_id)
    if match is None:
        return None
    return match.group(1) if regex.groups else match.group(0)


def select_series(ids: Sequence[str], pattern: str | None, select: str | None) -> Series:
    """Group ``ids`` by ``pattern`` and return the one series to import.

    Without a pattern every id is one series. With several series, ``select`` names the one to
    import; it is an error to leave it out then, or to name a series that does not exist.
    """
    if pattern is None:
        if select is not None:
            raise SpeechkitError("--select needs --series (the pattern that groups recordings into series)")
        return Series(None, tuple(ids))
    regex = compile_pattern(pattern)
    groups: dict[str, list[str]] = {}
    skipped = []
    for rid in ids:
        key = series_key(regex, rid)
        if key is None:
            skipped.append(rid)
        else:
            groups.setdefault(key, []).append(rid)
    if not groups:
        raise SpeechkitError(f"--series {pattern!r} matches none of the {len(ids)} recording ids "
                             f"(for example {', '.join(list(ids)[:3])})")
    if select is None:
        if len(groups) > 1:
            raise SpeechkitError(f"the recordings form {len(groups)} series ({_listing(sorted(groups))}); "
                                 "pick one with --select")
        select = next(iter(groups))
    if select not in groups:
        raise SpeechkitError(f"--select {select!r}: no such series; the recordings form {_listing(sorted(groups))}")
    others = [rid for key, members in groups.items() if key != select for rid in members]
    return Series(select, tuple(groups[select]), tuple(skipped + others))


def _where(sources: Mapping[str, str] | None, rid: str) -> str:
    return f"{sources[rid]}: " if sources and rid in sources else ""


def _listing(items: list[str], limit: int = 12) -> str:
    return ", ".join(items[:limit]) + (f", ... ({len(items)} in all)" if len(items) > limit else "")


def calendar_order(ids: Sequence[str], dates: dict[str, dt.date | dt.datetime | None], order: str,
                   sources: Mapping[str, str] | None = None) -> list[str]:
    """``ids`` in calendar order: by id (``order="id"``) or by date, ties by id (``order="date"``).

    ``sources`` names the file each id comes from, for error messages.
    """
    if order == "id":
        return sorted(ids)
    if order != "date":
        raise SpeechkitError(f"--order must be id or date, got {order!r}")
    missing = [rid for rid in ids if dates.get(rid) is None]
    _check_zones(ids, dates, sources)
    if missing:
        raise SpeechkitError(f"{_where(sources, missing[0])}--order date: no date for {_listing(missing)} (dates "
                             "come from the cuts' custom field 'date'); use --order id")
    return sorted(ids, key=lambda rid: (_as_datetime(dates[rid]), rid))


def _as_datetime(day: dt.date | dt.datetime) -> dt.datetime:
    return day if isinstance(day, dt.datetime) else dt.datetime.combine(day, dt.time())


def _check_zones(ids: Sequence[str], dates: Mapping[str, dt.date | dt.datetime | None],
                 sources: Mapping[str, str] | None) -> None:
    """Dates with a time zone and dates without one cannot be ordered: an error naming one of each."""
    zoned = {rid: isinstance(dates[rid], dt.datetime) and dates[rid].utcoffset() is not None
             for rid in ids if dates.get(rid) is not None}
    if len(set(zoned.values())) > 1:
        a = next(rid for rid, z in zoned.items() if z)
        b = next(rid for rid, z in zoned.items() if not z)
        raise SpeechkitError(f"{_where(sources, a)}meeting {a!r} is dated {dates[a]} (with a time zone) and {b!r} "
                             f"{dates[b]} (without one): they cannot be ordered; give every date a time zone or none")


def meeting_dates(ordered: Sequence[str], dates: dict[str, dt.date | dt.datetime | None],
                  sources: Mapping[str, str] | None = None) -> tuple[dict[str, dt.date | dt.datetime], bool]:
    """A date for every meeting and whether they are placeholders.

    Dates given for every meeting are kept (they must not go back in ``ordered``); otherwise every
    meeting gets a placeholder, :data:`PLACEHOLDER_START` plus its index in days, which encodes
    the calendar order and nothing else.
    """
    if ordered and all(dates.get(rid) is not None for rid in ordered):
        _check_zones(ordered, dates, sources)
        out = {rid: dates[rid] for rid in ordered}
        for a, b in zip(ordered, ordered[1:]):
            if _as_datetime(out[b]) < _as_datetime(out[a]):
                raise SpeechkitError(f"{_where(sources, b)}meeting {b!r} is dated {out[b]}, before {a!r} ({out[a]}), "
                                     "but comes after it in id order; use --order date")
        return out, False
    return {rid: PLACEHOLDER_START + dt.timedelta(days=i) for i, rid in enumerate(ordered)}, True


def parse_date(value: object, where: str) -> dt.date | dt.datetime | None:
    """An ISO date (``2026-03-02``) or date-time from a corpus field (None stays None)."""
    if value is None or isinstance(value, (dt.date, dt.datetime)):
        return value
    try:
        moment = dt.datetime.fromisoformat(str(value))
    except ValueError:
        raise SpeechkitError(f"{where}: expected an ISO date (2026-03-02) or date-time, got {value!r}") from None
    return moment.date() if len(str(value)) == 10 else moment
