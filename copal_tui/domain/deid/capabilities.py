"""What the de-identifier removes and what it does not, in words a user can read: for the
docs, `copal stats` and the report, so nobody takes the absence of a name for a removed one."""

from __future__ import annotations

from dataclasses import dataclass

from copal_tui.domain.deid.rules import RedactionRules


@dataclass(frozen=True)
class Capability:
    type: str
    removes: str


@dataclass(frozen=True)
class Capabilities:
    types: tuple[Capability, ...]
    names_removed: bool  # only names listed in the redaction file
    ner: bool  # whether a named-entity model finds unlisted names (never, today)
    not_removed: tuple[str, ...]

    def summary(self) -> str:
        """One paragraph: the types removed, then plainly what is not."""
        kinds = ", ".join(c.type for c in self.types)
        return f"Removed: {kinds}. Not removed: " + "; ".join(self.not_removed) + "."


DEFAULT_TYPES = (
    Capability("EMAIL", "e-mail addresses"),
    Capability("PHONE", "phone numbers, international and national formats (libphonenumber)"),
    Capability("CARD", "payment card numbers of 13-19 digits that pass the Luhn check"),
    Capability("IBAN", "IBANs of the registry's countries that pass the mod-97 check"),
    Capability("IP", "IPv4 and IPv6 addresses"),
    Capability("URL", "URLs carrying a token, key, session or credential (whole URL)"),
    Capability("ADDRESS", "street addresses (number, street, street type; flat, town, US ZIP "
                          "or UK postcode where attached) and PO boxes"),
    Capability("ACCOUNT", "account, customer and membership numbers after their word"),
    Capability("ORDER", "order, invoice, booking, tracking and return numbers after their word "
                        "or prefix (ORD-, PO-, INV-, RMA-)"),
    Capability("TICKET", "ticket, case, incident and reference numbers after their word or "
                         "prefix (TK-, INC, CS-, SR-, REQ-)"),
)

NOT_REMOVED = (
    "person names, unless listed in the redaction file (no named-entity model is used)",
    "addresses not written as number, street name and street type (a bare town, a landmark, "
    "\"the flat above the bakery\")",
    "ids without an introducing word or known prefix, dates of birth, and numbers written in "
    "words",
)


def capabilities(rules: RedactionRules | None = None) -> Capabilities:
    """What a de-identifier built with `rules` removes."""
    rules = rules or RedactionRules()
    types = list(DEFAULT_TYPES)
    if rules.names:
        types.append(Capability("NAME", f"the {len(rules.names)} names listed in the "
                                        "redaction file"))
    for kind in dict.fromkeys(p.type for p in rules.patterns):
        if all(c.type != kind for c in types):
            types.append(Capability(kind, "the redaction file's pattern"))
    return Capabilities(tuple(types), names_removed=bool(rules.names), ner=False,
                        not_removed=NOT_REMOVED)
