"""Short template texts for synthetic headlines and social posts, with varied wording.

A record's tone follows its sentiment score s ∈ [−1, 1]: positive above `TONE_BAND`,
negative below −`TONE_BAND`, neutral in between. Each tone has several templates; the slots
({company}, {ticker}, {pct}, {product}, {firm}, {quarter}) are filled at random, so two
records with the same tone rarely read alike.
"""

from __future__ import annotations

import numpy as np

TONE_BAND = 0.15

HEADLINES = {
    "positive": (
        "{company} beats expectations as {product} demand surges",
        "{firm} upgrades {ticker}, sees {pct}% upside",
        "{company} raises full-year guidance on strong {product} sales",
        "{ticker} wins major {product} contract",
        "Analysts turn bullish on {company} after upbeat {quarter} update",
        "{company} announces buyback; shares seen gaining {pct}%",
        "{company} gains market share in {product}, sources say",
        "Record orders for {company}'s {product} line",
        "{ticker} jumps {pct}% after {firm} praises {product} roadmap",
        "{company} {quarter} margins top forecasts by {pct} basis points",
    ),
    "negative": (
        "{company} misses estimates; {product} sales slow",
        "{firm} downgrades {ticker}, cuts target by {pct}%",
        "{company} warns of weaker {quarter} on {product} delays",
        "Regulators probe {company} over {product} practices",
        "{ticker} loses key {product} customer",
        "{company} CFO departs amid margin pressure",
        "Supply problems hit {company}'s {product} output",
        "{company} faces {pct}% drop in {product} orders",
        "{ticker} slides {pct}% as {firm} flags {product} weakness",
        "{company} cuts {quarter} outlook, blames {product} pricing",
    ),
    "neutral": (
        "{company} to present at industry conference",
        "{company} names new head of {product} division",
        "{ticker} trading volume in line with average",
        "{company} reaffirms {quarter} schedule",
        "{firm} keeps {ticker} rating unchanged",
        "{company} opens new office for its {product} team",
    ),
}

POSTS = {
    "positive": (
        "loading up on ${ticker}, {product} is going to print",
        "${ticker} to the moon, {pct}% easy",
        "anyone else seeing how strong {company} looks lately? bullish",
        "just bought more {ticker} calls, {product} hype is real",
        "{company} is the best {product} play out there imo",
        "${ticker} chart looks ready to break out",
    ),
    "negative": (
        "dumped all my ${ticker}, {product} is a mess",
        "${ticker} puts are free money, down {pct}% incoming",
        "{company} management has no clue, bearish",
        "stay away from {ticker}, {product} numbers look awful",
        "${ticker} bag holders in shambles lol",
        "{company} is overvalued, {product} won't save it",
    ),
    "neutral": (
        "what do you all think about ${ticker}?",
        "holding {ticker} for now, waiting on {quarter} numbers",
        "{company} news today? anyone",
        "${ticker} flat again, boring",
        "is {product} a big deal for {company} or not",
    ),
}

PRODUCTS = ("cloud", "chip", "software", "battery", "streaming", "robotics", "payments", "AI", "retail", "energy")
FIRMS = ("Halden Securities", "Norcross Capital", "Brightwater Research", "Ostrava Partners", "Keel & Co")
SOURCES = ("Newswire", "MarketDaily", "FinPost", "The Ledger", "StreetWatch")
QUARTERS = ("first-quarter", "second-quarter", "third-quarter", "fourth-quarter")


def tone(sentiment: float) -> str:
    """positive / negative / neutral by the score's sign beyond ±`TONE_BAND`."""
    if sentiment > TONE_BAND:
        return "positive"
    return "negative" if sentiment < -TONE_BAND else "neutral"


def fill(rng: np.random.Generator, templates: dict[str, tuple[str, ...]], sentiment: float,
         ticker: str, company: str) -> str:
    """A random template of the sentiment's tone with its slots filled."""
    options = templates[tone(sentiment)]
    template = options[rng.integers(len(options))]
    return template.format(company=company, ticker=ticker, product=PRODUCTS[rng.integers(len(PRODUCTS))],
                           firm=FIRMS[rng.integers(len(FIRMS))], quarter=QUARTERS[rng.integers(4)],
                           pct=int(rng.integers(3, 40)))


def company_name(rng: np.random.Generator, ticker: str) -> str:
    """A fictional company name for `ticker`, e.g. `Alfa Dynamics`."""
    suffixes = ("Dynamics", "Systems", "Holdings", "Technologies", "Industries", "Labs")
    return f"{ticker.capitalize()} {suffixes[rng.integers(len(suffixes))]}"
