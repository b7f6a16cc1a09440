"""Synthetic identifiers for the sample traffic logs, all from reserved or documented test
ranges, so none belongs to anybody: example.com/.org/.net e-mail domains, Ofcom's drama
numbers (07700 900xxx, 020 7946 0xxx, 0161 496 0xxx) and the US 555-01xx range, payment
networks' published test cards (Luhn-valid), IBAN registry examples (mod-97-valid), the
documentation IP ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32), the
`.example` domain, and invented streets."""

from __future__ import annotations

import random

FIRST = ("zora", "amir", "bea", "cato", "dilys", "emeka", "fen", "gus", "hana", "ivo", "jun",
         "kit", "lola", "milo", "noor", "otto", "pia", "rafe", "saoirse", "teo")
LAST = ("quill", "marsh", "okafor", "lindqvist", "peralta", "nakamura", "byrne", "haddad",
        "kowalski", "fenwick", "achebe", "sorensen")
CARDS = ("4111 1111 1111 1111", "4242424242424242", "5555 5555 5555 4444", "5105105105105100",
         "3782 822463 10005", "3714 496353 98431", "6011 1111 1111 1117", "6011000990139424",
         "2223 0031 2200 3222", "4012 8888 8888 1881", "4000 0566 5566 5556")
IBANS = ("GB82 WEST 1234 5698 7654 32", "GB33BUKB20201555555555",
         "DE89 3704 0044 0532 0130 00", "FR14 2004 1010 0505 0001 3M02 606",
         "NL91ABNA0417164300", "ES91 2100 0418 4502 0005 1332", "IE29 AIBK 9311 5212 3456 78",
         "BE68 5390 0754 7034")
STREETS = ("Larkspur Road", "Quarry Close", "Elm Grove", "Harbour Street", "Fennel Lane",
           "Orchard Avenue", "Mill Terrace", "Beacon Drive", "Saltmarsh Way", "Kiln Crescent")
TOWNS = (("Leeds", "LS6 2QT"), ("Bristol", "BS3 4TY"), ("Manchester", "M14 5SX"),
         ("Glasgow", "G12 8QQ"), ("Cardiff", "CF24 4HQ"), ("Norwich", "NR2 3DD"))
TOKEN_CHARS = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def email(rng: random.Random) -> str:
    sep = rng.choice((".", "_", ""))
    return (f"{rng.choice(FIRST)}{sep}{rng.choice(LAST)}{rng.randint(1, 99)}"
            f"@example.{rng.choice(('com', 'org', 'net'))}")


def phone(rng: random.Random) -> str:
    n = rng.randint(0, 999)
    return rng.choice((
        f"07700 900{n:03d}", f"+44 7700 900{n:03d}", f"020 7946 0{n:03d}",
        f"+44 20 7946 0{n:03d}", f"0161 496 0{n:03d}", f"+1 202-555-01{n % 100:02d}",
        f"(202) 555-01{n % 100:02d}"))


def card(rng: random.Random) -> str:
    return rng.choice(CARDS)


def iban(rng: random.Random) -> str:
    return rng.choice(IBANS)


def ip(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return f"2001:db8:{rng.randint(1, 0xffff):x}::{rng.randint(1, 0xffff):x}"
    return f"{rng.choice(('192.0.2', '198.51.100', '203.0.113'))}.{rng.randint(1, 254)}"


def url(rng: random.Random) -> str:
    token = "".join(rng.choice(TOKEN_CHARS) for _ in range(rng.choice((16, 24, 32))))
    return rng.choice((
        f"https://lumentelecom.example/reset?token={token}",
        f"https://my.lumentelecom.example/verify/{token}",
        f"https://lumentelecom.example/login?session={token}&next=/billing",
        f"http://lumen-secure-login.example/auth?code={token}"))


def address(rng: random.Random) -> str:
    town, postcode = rng.choice(TOWNS)
    street = f"{rng.randint(1, 240)} {rng.choice(STREETS)}"
    if rng.random() < 0.25:
        street = f"Flat {rng.randint(1, 12)}, {street}"
    return f"{street}, {town} {postcode}"


def account(rng: random.Random) -> str:
    return f"{rng.randint(40_000_000, 49_999_999)}"


def order(rng: random.Random) -> str:
    return rng.choice((f"LT-{rng.randint(100_000, 999_999)}",
                       f"ORD-{rng.randint(1_000_000, 9_999_999)}"))


def ticket(rng: random.Random) -> str:
    return rng.choice((f"TK-{rng.randint(10_000, 99_999)}",
                       f"CS-{rng.randint(100_000, 999_999)}"))


def incident(rng: random.Random) -> str:
    return f"INC{rng.randint(1_000_000, 9_999_999)}"


def tracking(rng: random.Random) -> str:
    return f"RM{rng.randint(10_000_000, 99_999_999)}GB"


def pin(rng: random.Random) -> str:
    return f"{rng.randint(1000, 9999)}"


def district(rng: random.Random) -> str:
    return rng.choice(TOWNS)[1].split()[0]


def name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST).title()} {rng.choice(LAST).title()}"


MAKERS = {"email": email, "phone": phone, "card": card, "iban": iban, "ip": ip, "url": url,
          "address": address, "account": account, "order": order, "ticket": ticket,
          "incident": incident, "tracking": tracking, "pin": pin, "name": name,
          "district": district}
# The slots the de-identifier removes, by the type it names them; {pin}, {name} and a bare
# postcode district ({district}) stay.
REMOVED = {"email": "EMAIL", "phone": "PHONE", "card": "CARD", "iban": "IBAN", "ip": "IP",
           "url": "URL", "address": "ADDRESS", "account": "ACCOUNT", "order": "ORDER",
           "ticket": "TICKET", "incident": "TICKET", "tracking": "ORDER"}
