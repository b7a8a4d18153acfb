"""`TextCleaner`: the anonymisation of free text (headlines, posts, sources, names), and the check
that nothing it should have replaced is left.

One pass of one regular expression replaces, left to right:

| what | form found | replaced by |
|---|---|---|
| a ticker of 3+ characters | a whole word in any case (`NVDA`, `$nvda`, `Alfa` of `Alfa Dynamics`) | its code, in the same case (`QXRT`, `$qxrt`, `Qxrt`) |
| a shorter ticker | a whole word in its own case | its code |
| a company name, brand or executive (`names`) | a whole word or phrase in any case | the company's code, in the same case |
| a person of the insider channel | the full name in any case | the pseudonym |
| a dollar amount | `$45.10`, `US$3`, `USD 12` | x c_i (per share) |
| an amount with a magnitude | `$1.2 billion`, `$3bn`, `$40M` | x c_i·v_i (a currency total) |
| a full date | `2020-06-15`, `2020/06/15`, `20200615`, `06/15/2020`, `June 15, 2020`, `15 Jun 2020` | moved W weeks, same style |
| a day without a year | `June 15` | moved W weeks, read in the year that puts it nearest the record's publication |
| a year | `June 2020`, `Q2 2020`, `FY2020`, `2020` | year + Y (a month-year keeps its month) |
| a two-digit year | `FY20`, `Q2 '20` | (year + Y) mod 100 |

Weekday names stay (dates move by whole weeks). c_i, v_i, W and Y are the key's
(`market.anonymise.key`); amounts use the record's own ticker (none for market-wide records).
Every 4-digit number from 1900 to 2099 is read as a year, so a count such as "2000 jobs"
moves too.

`residue(text)` names what a cleaned text still holds of the real world — any real ticker of
3+ characters or company name or person as a substring in any case (`#NVDAgang`,
`Microsoft365`), a short ticker as a word, a year from 1900 to 2039 — or None. A form that the
replacement misses (a ticker glued to other letters) is caught here, so a record is either
cleaned or named, never cleaned in part without a word.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import pandas as pd

from market.anonymise.key import AnonymisationKey

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
_MONTH_NUMBER = {**{m: i for i, m in enumerate(MONTHS, 1)}, **{m[:3]: i for i, m in enumerate(MONTHS, 1)}, "Sept": 9}
_MONTH = "(?:" + "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?:19|20)\d\d"
_NUM_M, _NUM_D = r"(?:0?[1-9]|1[0-2])", r"(?:0?[1-9]|[12]\d|3[01])"
_EDGE_L, _EDGE_R = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"
_MAGNITUDES = r"(?i:trillion|billion|million|thousand|tn|bn|mn|k|m|b|t)"

_CURRENCY = (rf"(?P<cur>(?:US)?\$|USD\s?)(?P<amount>\d{{1,3}}(?:,\d{{3}})+|\d+)(?P<frac>\.\d+)?"
             rf"(?:(?P<space>\s?)(?P<mag>{_MAGNITUDES})\b)?")
_DATES = (
    rf"(?<!\d)(?P<iy>{_YEAR})(?P<isep>[-/.])(?P<im>{_NUM_M})(?P=isep)(?P<id>{_NUM_D})(?!\d)",
    rf"(?<!\d)(?P<cy>{_YEAR})(?P<cm>0[1-9]|1[0-2])(?P<cd>0[1-9]|[12]\d|3[01])(?!\d)",
    rf"(?<!\d)(?P<um>{_NUM_M})/(?P<ud>{_NUM_D})/(?P<uy>{_YEAR})(?!\d)",
    rf"\b(?P<mm>{_MONTH})\s+(?P<md>{_NUM_D})(?:st|nd|rd|th)?(?P<msep>,\s*|\s+)(?P<my>{_YEAR})(?!\d)",
    rf"\b(?P<dd>{_NUM_D})\s+(?P<dm>{_MONTH})(?P<dsep>,?\s+)(?P<dy>{_YEAR})(?!\d)",
    rf"\b(?P<ym>{_MONTH})(?P<ysep>\s+)(?P<yy>{_YEAR})(?!\d)",
    rf"\b(?P<nm>{_MONTH})\s+(?P<nd>{_NUM_D})(?P<nth>st|nd|rd|th)?\b",
    r"(?<=FY)(?P<fy>\d\d)(?!\d)|(?<=['\u2019])(?P<ay>\d\d)(?!\d)",
    rf"(?<!\d)(?P<by>{_YEAR})(?!\d)",
)
_RESIDUE_YEAR = re.compile(r"(?<!\d)(?:19\d\d|20[0-3]\d)(?!\d)")
_AMOUNT = re.compile(_CURRENCY)


def _alternation(forms: list[str]) -> str:
    return "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))


def _in_case_of(found: str, code: str) -> str:
    """`code` in the case of `found`: CODE (for NVDA, NVIDIA), Code (Nvidia, Alfa) or code (nvda)."""
    letters = [c for c in found if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return code.upper()
    return code.capitalize() if letters and letters[0].isupper() else code.lower()


class TextCleaner:
    """Cleans text records of a market under one key; `names` maps real tickers to their other names."""

    def __init__(self, key: AnonymisationKey, names: Mapping[str, tuple[str, ...]]):
        self.key = key
        long_forms = {t.lower(): t for t in key.codes if len(t) >= 3}
        short_forms = {t: t for t in key.codes if len(t) < 3}
        alias_forms = {name.lower(): t for t, aliases in names.items() for name in aliases if t in key.codes}
        self._insensitive = {**alias_forms, **long_forms}
        self._sensitive = short_forms
        self._people = {name.lower(): pseudonym for name, pseudonym in key.people.items()}
        parts = [_CURRENCY]
        if self._insensitive:
            parts.append(f"{_EDGE_L}(?P<name>(?i:{_alternation(list(self._insensitive))})){_EDGE_R}")
        if self._sensitive:
            parts.append(rf"\b(?P<short>{_alternation(list(self._sensitive))})\b")
        if self._people:
            parts.append(f"{_EDGE_L}(?P<person>(?i:{_alternation(list(self._people))})){_EDGE_R}")
        self._pattern = re.compile("|".join([*parts, *_DATES]))
        self._real_substrings = sorted({*long_forms, *alias_forms, *self._people}, key=len, reverse=True)
        self._real_short = re.compile(rf"\b(?:{_alternation(list(short_forms))})\b") if short_forms else None

    def clean(self, text: str, ticker: str, published: pd.Timestamp) -> str:
        """`text` of a record about `ticker` ("" for market-wide) published at `published`, anonymised."""
        return self._pattern.sub(lambda match: self._replace(match, ticker, published), text)

    def residue(self, text: str) -> str | None:
        """What `text` still holds of a real name or year (module docstring), or None."""
        lowered = text.lower()
        for form in self._real_substrings:
            if form in lowered:
                start = lowered.index(form)
                return text[start:start + len(form)]
        if self._real_short is not None and (found := self._real_short.search(text)):
            return found.group()
        found = _RESIDUE_YEAR.search(_AMOUNT.sub(" ", text))
        return found.group() if found else None

    def _replace(self, match: re.Match, ticker: str, published: pd.Timestamp) -> str:
        groups = match.groupdict()
        found = match.group()
        if groups["cur"] is not None:
            return self._amount(groups, ticker) if ticker else found
        if groups.get("name") is not None:
            return _in_case_of(found, self.key.ticker(self._insensitive[found.lower()]))
        if groups.get("short") is not None:
            return self.key.ticker(self._sensitive[found])
        if groups.get("person") is not None:
            return self._people[found.lower()]
        return self._date(groups, found, published)

    def _amount(self, groups: dict, ticker: str) -> str:
        """A dollar amount times c_i, or times c_i·v_i when it carries a magnitude."""
        scale = self.key.total_scale(ticker) if groups["mag"] else self.key.price_scale[ticker]
        frac = groups["frac"] or ""
        decimals = max(len(frac) - 1, 0) + max(0, -round(math.log2(scale)))
        value = float(groups["amount"].replace(",", "") + frac) * scale
        number = f"{value:,.{decimals}f}" if "," in groups["amount"] else f"{value:.{decimals}f}"
        return f"{groups['cur']}{number}{groups['space'] or ''}{groups['mag'] or ''}"

    def _moved(self, year: str, month: int | str, day: int | str) -> pd.Timestamp | None:
        """The real day moved W weeks; None when the digits are no calendar day."""
        try:
            return self.key.date(pd.Timestamp(int(year), int(month), int(day)))
        except ValueError:
            return None

    def _year(self, year: str) -> str:
        return str(int(year) + self.key.years)

    def _date(self, groups: dict, found: str, published: pd.Timestamp) -> str:
        if groups["iy"] is not None:
            day, sep = self._moved(groups["iy"], groups["im"], groups["id"]), groups["isep"]
            return f"{day:%Y}{sep}{day:%m}{sep}{day:%d}" if day is not None else self._year(groups["iy"]) + found[4:]
        if groups["cy"] is not None:
            day = self._moved(groups["cy"], groups["cm"], groups["cd"])
            return f"{day:%Y%m%d}" if day is not None else self._year(groups["cy"]) + found[4:]
        if groups["uy"] is not None:
            day = self._moved(groups["uy"], groups["um"], groups["ud"])
            return f"{day:%m/%d/%Y}" if day is not None else found[:-4] + self._year(groups["uy"])
        if groups["my"] is not None:
            day = self._moved(groups["my"], _MONTH_NUMBER[groups["mm"].rstrip(".")], groups["md"])
            if day is None:
                return found[:-4] + self._year(groups["my"])
            return f"{_month_name(day, groups['mm'])} {day.day}{groups['msep']}{day.year}"
        if groups["dy"] is not None:
            day = self._moved(groups["dy"], _MONTH_NUMBER[groups["dm"].rstrip(".")], groups["dd"])
            if day is None:
                return found[:-4] + self._year(groups["dy"])
            return f"{day.day} {_month_name(day, groups['dm'])}{groups['dsep']}{day.year}"
        if groups["yy"] is not None:
            return f"{groups['ym']}{groups['ysep']}{self._year(groups['yy'])}"
        if groups["nm"] is not None:
            return self._yearless(groups, found, published)
        two_digits = groups["fy"] if groups["fy"] is not None else groups["ay"]
        if two_digits is not None:
            return f"{(int(two_digits) + self.key.years) % 100:02d}"
        return self._year(groups["by"])

    def _yearless(self, groups: dict, found: str, published: pd.Timestamp) -> str:
        """`June 15`: read in the year (of three around publication) nearest to `published`, moved W weeks."""
        month, day_of_month = _MONTH_NUMBER[groups["nm"].rstrip(".")], int(groups["nd"])
        candidates = [d for year in (published.year - 1, published.year, published.year + 1)
                      if (d := self._moved(str(year), month, day_of_month)) is not None]
        if not candidates:
            return found
        shown = self.key.date(published)
        day = min(candidates, key=lambda d: abs(d - shown))
        return f"{_month_name(day, groups['nm'])} {day.day}{groups['nth'] or ''}"


def _month_name(day: pd.Timestamp, written: str) -> str:
    """The month of `day` in the style of `written`: full, or abbreviated (with its full stop)."""
    full = MONTHS[day.month - 1]
    stem = written.rstrip(".")
    if stem in MONTHS:
        return full
    return full[:3] + ("." if written.endswith(".") else "")
