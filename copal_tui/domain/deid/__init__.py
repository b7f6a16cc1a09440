"""De-identification of imported chatbot traffic, before anything is stored.

`Deidentifier(rules).redact([query, response, ...])` returns the pair's texts with each
identifier replaced by a typed placeholder numbered within the pair (`<EMAIL_1>`, `<PHONE_2>`)
and the counts by type. `rules` come from a user's redaction file (`load_rules`); without
one, the default recognisers run. `capabilities()` says what is removed and what is not.

Modules: `recognisers` (finding each type), `checks` (Luhn, mod-97, IP, URL credentials),
`engine` (overlaps, numbering, placeholder look-alikes), `rules` (the redaction file),
`capabilities` (the plain statement of coverage).
"""

from copal_tui.domain.deid.capabilities import Capabilities, Capability, capabilities
from copal_tui.domain.deid.engine import Deidentifier, Redacted
from copal_tui.domain.deid.rules import (
    ExtraPattern,
    RedactionRules,
    RulesError,
    check_region,
    load_rules,
    parse_rules,
)

__all__ = ["Capabilities", "Capability", "Deidentifier", "ExtraPattern", "Redacted",
           "RedactionRules", "RulesError", "capabilities", "check_region", "load_rules",
           "parse_rules"]
