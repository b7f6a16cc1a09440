"""Writes the sample traffic logs of Lumen Telecom's support assistant (world `lumen-telecom`)
beside this script, deterministically (a fixed seed):

- lumen_telecom_web.ndjson: the website chat, one {id, ts, query, response} pair a line, 4 of
  them logged twice (duplicates an import counts and skips);
- lumen_telecom_app.ndjson: the app's chats, one conversation a line as {conversation, ts,
  messages: [{role, content}]} (a system prompt, the assistant's greeting, then turns);
- lumen_telecom_web_export.csv: a later CSV export of the website chat (timestamp, channel,
  query, response) overlapping the JSONL log by 10 pairs.

The logs are `.ndjson`, not `.jsonl`: `copal import sample_worlds/` reads every `.jsonl` under
the folder as interchange records. Each pair is drawn from `intents.py` (the policy category
and the policies it engages) and filled with synthetic identifiers from reserved ranges
(`values.py`); about a third of the answers that can go wrong do (an erroneous response).
`python sample_worlds/traffic/make_log.py --summary` prints the mix; tests check the checked-in
files are what this script writes.
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from intents import INTENTS, Intent  # noqa: E402
from values import MAKERS  # noqa: E402

SEED = 20261207
WEB_PAIRS = 320
WEB_REPEATS = 4
APP_CONVERSATIONS = 40
CSV_NEW, CSV_OVERLAP = 20, 10
# How often each category is asked: most traffic engages one policy or none.
CATEGORY_WEIGHT = {"none": 0.34, "single": 0.44, "multi": 0.22}
WRONG = 0.33  # the share of answers that go wrong, where an intent has a wrong answer
START = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
SYSTEM = ("You are Lumen Telecom's support assistant in the Lumen app. Follow Lumen's policies; "
          "verify the customer before sharing account details.")
GREETING = "Hi! I'm Lumen's assistant. How can I help today?"
# How customers open and close a message, and how the assistant frames an answer: real traffic
# rarely repeats a message word for word.
OPENERS = ("", "", "", "Hi, ", "hello - ", "Quick question: ", "Hiya. ", "Morning! ", "hey ",
           "Sorry to bother you, ", "Hi Lumen, ")
CLOSERS = ("", "", "", "?", " thanks", " pls", "!!", " Thank you.", " cheers", " x")
FRAMES = ("", "", "", "Thanks for your message. ", "Thanks for waiting. ",
          "Thanks for getting in touch. ")
SIGN_OFFS = ("", "", "", " Is there anything else I can help with?", " Anything else today?",
             " Thanks for contacting Lumen.")
_SLOT = re.compile(r"\{(\w+)\}")


class Drawn:
    """One exchange: its intent, the answer's correctness and its texts."""

    def __init__(self, intent: Intent, wrong: bool, query: str, response: str) -> None:
        self.intent, self.wrong, self.query, self.response = intent, wrong, query, response


def draw(rng: random.Random) -> Drawn:
    category = rng.choices(list(CATEGORY_WEIGHT), list(CATEGORY_WEIGHT.values()))[0]
    intent = rng.choice([i for i in INTENTS if i.category == category])
    wrong = bool(intent.bad) and rng.random() < WRONG
    query = rng.choice(intent.queries)
    response = rng.choice(intent.bad if wrong else intent.good)
    values: dict[str, str] = {}  # one value per slot, shared by the query and its answer

    def fill(match: re.Match[str]) -> str:
        slot = match.group(1)
        if slot not in values:
            values[slot] = MAKERS[slot](rng)
        return values[slot]

    query = _SLOT.sub(fill, query)
    if rng.random() < 0.2:
        query = query.lower()
    opener = rng.choice(OPENERS)
    query = opener + (query[:1].lower() + query[1:] if opener and query[:2] != "I " else query)
    response = rng.choice(FRAMES) + _SLOT.sub(fill, response) + rng.choice(SIGN_OFFS)
    return Drawn(intent, wrong, query + rng.choice(CLOSERS), response)


def _stamp(rng: random.Random, clock: list[datetime]) -> str:
    clock[0] += timedelta(seconds=rng.randint(20, 900))
    return clock[0].strftime("%Y-%m-%dT%H:%M:%SZ")


def web(rng: random.Random) -> tuple[list[dict[str, str]], list[Drawn]]:
    clock = [START]
    rows, drawn = [], []
    for n in range(1, WEB_PAIRS + 1):
        d = draw(rng)
        drawn.append(d)
        rows.append({"id": f"web-{n:05d}", "ts": _stamp(rng, clock), "query": d.query,
                     "response": d.response})
    # A logging fault wrote a few records twice, a little later in the file.
    for k in sorted(rng.sample(range(WEB_PAIRS - 40), WEB_REPEATS), reverse=True):
        rows.insert(k + rng.randint(5, 30), dict(rows[k]))
    return rows, drawn


def app(rng: random.Random) -> tuple[list[dict[str, object]], list[Drawn]]:
    clock = [START]
    rows, drawn = [], []
    for n in range(1, APP_CONVERSATIONS + 1):
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "assistant", "content": GREETING}]
        turns = [draw(rng) for _ in range(rng.choice((1, 2, 2, 3, 4)))]
        for d in turns:
            messages += [{"role": "user", "content": d.query},
                         {"role": "assistant", "content": d.response}]
        drawn += turns
        rows.append({"conversation": f"app-{n:04d}", "ts": _stamp(rng, clock),
                     "messages": messages})
    return rows, drawn


def export(rng: random.Random, web_rows: list[dict[str, str]]) -> tuple[str, list[Drawn]]:
    clock = [START + timedelta(days=14)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["timestamp", "channel", "query", "response"])
    drawn = [draw(rng) for _ in range(CSV_NEW)]
    fresh = [(d.query, d.response) for d in drawn]
    again = [(r["query"], r["response"]) for r in rng.sample(web_rows[-60:], CSV_OVERLAP)]
    for query, response in again + fresh:
        writer.writerow([_stamp(rng, clock), "web", query, response])
    return out.getvalue(), drawn


def build() -> dict[str, tuple[str, list[Drawn]]]:
    """File name -> (its text, the exchanges drawn for it)."""
    rng = random.Random(SEED)
    web_rows, web_drawn = web(rng)
    app_rows, app_drawn = app(rng)
    csv_text, csv_drawn = export(rng, web_rows)

    def lines(rows: list[dict[str, str]] | list[dict[str, object]]) -> str:
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)

    return {"lumen_telecom_web.ndjson": (lines(web_rows), web_drawn),
            "lumen_telecom_app.ndjson": (lines(app_rows), app_drawn),
            "lumen_telecom_web_export.csv": (csv_text, csv_drawn)}


def summary(files: dict[str, tuple[str, list[Drawn]]]) -> str:
    out = []
    for name, (_, drawn) in files.items():
        mix = Counter(d.intent.category for d in drawn)
        wrong = sum(d.wrong for d in drawn)
        out.append(f"{name}: {len(drawn)} pairs drawn; none {mix['none']}, single "
                   f"{mix['single']}, multi {mix['multi']}; {wrong} erroneous")
    return "\n".join(out)


def main(argv: list[str]) -> None:
    files = build()
    if "--summary" in argv:
        print(summary(files))
        return
    out = Path(next((a for a in argv if not a.startswith("-")), HERE))
    for name, (text, _) in files.items():
        (out / name).write_text(text, encoding="utf-8")
    print(summary(files))


if __name__ == "__main__":
    main(sys.argv[1:])
