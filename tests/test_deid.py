"""The de-identification engine: what each type's check lets through and what it removes, the
placeholders' numbering within a pair, the redaction file, placeholder look-alikes, and input
that is empty, huge or odd Unicode. The corpus figures are in test_deid_corpus.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copal_tui.domain.deid import (
    Deidentifier,
    RedactionRules,
    RulesError,
    capabilities,
    load_rules,
    parse_rules,
)

PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]*)_([0-9]+)>")


def redact(*texts: str, rules: RedactionRules | None = None) -> tuple[str, ...]:
    return Deidentifier(rules).redact(texts).texts


# ------------------------------------------------------------------ numbering within a pair


def test_same_value_same_number_across_query_and_response():
    query = ("Hi, I'm on Jane.Doe@Example.com and 020 7946 0123, my other email is "
             "sam.roe@example.org")
    response = ("Thanks! I've updated jane.doe@example.com. We'll call +44 20 7946 0123, or "
                "reach sam.roe@example.org if that fails.")
    result = Deidentifier().redact([query, response])
    assert result.texts == (
        "Hi, I'm on <EMAIL_1> and <PHONE_1>, my other email is <EMAIL_2>",
        "Thanks! I've updated <EMAIL_1>. We'll call <PHONE_1>, or reach <EMAIL_2> if that "
        "fails.",
    )
    assert result.counts == {"EMAIL": 4, "PHONE": 2}


def test_numbers_follow_first_appearance_and_restart_for_each_pair():
    engine = Deidentifier()
    first = engine.redact(["call (202) 555-0143", "or 020 7946 0999, or 202-555-0143"])
    assert first.texts == ("call <PHONE_1>", "or <PHONE_2>, or <PHONE_1>")
    second = engine.redact(["020 7946 0999 only"])
    assert second.texts == ("<PHONE_1> only",)


def test_earlier_turns_are_numbered_with_the_pair():
    context = "Earlier: my card is 4111 1111 1111 1111."
    query = "Did you refund 4111-1111-1111-1111 or 5555555555554444?"
    assert redact(context, query) == ("Earlier: my card is <CARD_1>.",
                                      "Did you refund <CARD_1> or <CARD_2>?")


# ------------------------------------------------------------------ each type's check


def test_cards_only_when_the_luhn_digit_is_right():
    text = "valid 4111 1111 1111 1111, off by one 4111 1111 1111 1112"
    assert redact(text) == ("valid <CARD_1>, off by one 4111 1111 1111 1112",)


def test_ibans_only_when_mod_97_passes():
    text = "good GB82 WEST 1234 5698 7654 32, bad GB82 WEST 1234 5698 7654 33"
    assert redact(text) == ("good <IBAN_1>, bad GB82 WEST 1234 5698 7654 33",)


def test_ip_addresses_but_not_version_numbers():
    text = ("From 192.0.2.44 and 2001:db8::8a2e:370:7334; app version 2.4.1.0, release 1.2.3, "
            "300.1.2.3 is no address")
    assert redact(text) == ("From <IP_1> and <IP_2>; app version 2.4.1.0, release 1.2.3, "
                            "300.1.2.3 is no address",)


def test_urls_with_credentials_go_whole_and_plain_links_stay():
    text = ("See https://example.com/help/returns or reset at "
            "https://example.com/reset?token=Q7fd91kP2xZ8aa01. Old one: "
            "https://sam:secret@example.net/files, and www.example.org/verify/"
            "550e8400-e29b-41d4-a716-446655440000")
    assert redact(text) == ("See https://example.com/help/returns or reset at <URL_1>. Old "
                            "one: <URL_2>, and <URL_3>",)


def test_an_email_inside_a_plain_url_is_still_removed():
    assert redact("https://example.com/unsubscribe?email=jane@example.com") == (
        "https://example.com/unsubscribe?email=<EMAIL_1>",)


def test_ids_need_their_word_or_prefix():
    text = ("I'd like to order 2 pizzas for 7pm. My order #A-123456, ticket TK-88231, account "
            "no. 12345678, case 00123456 and INC0012345.")
    assert redact(text) == ("I'd like to order 2 pizzas for 7pm. My order #<ORDER_1>, ticket "
                            "<TICKET_1>, account no. <ACCOUNT_1>, case <TICKET_2> and "
                            "<TICKET_3>.",)


def test_street_addresses_with_their_postcode():
    text = ("Send it to Flat 2, 14 High Street, Oxford OX1 4AA or to 1600 Pennsylvania Avenue "
            "NW, Washington, DC 20500. We are on the way.")
    assert redact(text) == ("Send it to <ADDRESS_1> or to <ADDRESS_2>. We are on the way.",)


def test_two_numbers_in_one_run_both_go_and_a_list_of_numbers_stays():
    assert redact("call 020 7946 0018 020 7946 0019, or +44 20 7946 0123 2 times") == (
        "call <PHONE_1> <PHONE_2>, or <PHONE_3> 2 times",)
    text = "sizes 6 8 10 12 14 16 18, numbers 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17"
    assert redact(text) == (text,)


def test_national_numbers_follow_the_phone_region():
    text = "joignable au 01 99 00 12 34"
    assert redact(text) == (text,)
    assert Deidentifier(phone_region="FR").redact([text]).texts == ("joignable au <PHONE_1>",)


def test_an_unknown_phone_region_is_refused_with_close_codes():
    with pytest.raises(ValueError, match=r"unknown phone region 'GX' \(two-letter country "
                                         r"codes, e.g. GA, GB, GD, GE, GF, GG\)"):
        Deidentifier(phone_region="GX")


def test_prices_dates_times_and_flights_stay():
    text = ("£1,299.00 on 2024-05-12 at 10:30-11:45, flight BA 2490, 15% off, version 3.10.2, "
            "SKU 4402-118, Mon-Fri 9:00-17:30, 4 x 500g")
    assert redact(text) == (text,)


# ------------------------------------------------------------------ the redaction file


def test_redaction_file_adds_patterns_and_known_names(tmp_path: Path):
    path = tmp_path / "rules.yaml"
    path.write_text(
        "patterns:\n"
        "  - type: EMPLOYEE_ID\n"
        "    regex: 'EMP-[0-9]{5}'\n"
        "  - type: MEMBERSHIP\n"
        "    regex: 'member no\\. (?P<value>[0-9]{6,})'\n"
        "names:\n"
        "  - Priya Raman\n"
        "  - Priya\n", encoding="utf-8")
    engine = Deidentifier(load_rules(path))
    result = engine.redact(["EMP-12345 spoke to PRIYA  RAMAN (member no. 4411209)",
                            "Thanks priya raman; Priya, EMP-12345 will call."])
    assert result.texts == ("<EMPLOYEE_ID_1> spoke to <NAME_1> (member no. <MEMBERSHIP_1>)",
                            "Thanks <NAME_1>; <NAME_2>, <EMPLOYEE_ID_1> will call.")
    assert result.counts == {"EMPLOYEE_ID": 2, "NAME": 3, "MEMBERSHIP": 1}


def test_a_bad_regex_names_the_file_the_line_the_entry_and_why(tmp_path: Path):
    path = tmp_path / "rules.yaml"
    path.write_text("names: [Jane Doe]\npatterns:\n  - type: OK\n    regex: 'x+'\n"
                    "  - type: BROKEN\n    regex: 'EMP-[0-9'\n", encoding="utf-8")
    with pytest.raises(RulesError) as err:
        load_rules(path)
    assert str(err.value) == (f"{path}:6: patterns[1].regex: bad regex 'EMP-[0-9': "
                              "unterminated character set at position 4")


@pytest.mark.parametrize("text, message", [
    ("patterns:\n  - type: employee\n    regex: 'x'\n",
     "r.yaml:2: patterns[0].type: type 'employee' must be UPPER_SNAKE"),
    ("patterns:\n  - type: X\n    regex: 'a*'\n",
     "r.yaml:3: patterns[0].regex: bad regex 'a*': it matches the empty string"),
    ("names:\n  - Jane Doe\n  - J\n", "r.yaml:3: names[1]: name 'J' is shorter"),
    ("pattern: []\n", "r.yaml:1: pattern: unknown field"),
    ("phone_region: UX\n", "r.yaml:1: phone_region: unknown phone region 'UX' (two-letter "
                           "country codes, e.g. UA, UG, US, UY, UZ)"),
    ("patterns: [\n", "r.yaml:2: not valid YAML"),
    ("- Jane\n", "r.yaml:1: expected a mapping"),
])
def test_redaction_file_errors(text: str, message: str):
    with pytest.raises(RulesError) as err:
        parse_rules(text, "r.yaml")
    assert str(err.value).startswith(message)


def test_capabilities_say_plainly_that_names_are_not_removed():
    plain = capabilities()
    assert not plain.names_removed and not plain.ner
    assert "NAME" not in [c.type for c in plain.types]
    assert "person names, unless listed in the redaction file (no named-entity model is " \
           "used)" in plain.summary()
    listed = capabilities(RedactionRules(names=("Jane Doe",)))
    assert listed.names_removed and "NAME" in [c.type for c in listed.types]


# ------------------------------------------------------------------ awkward input


def test_placeholder_lookalikes_are_neutralised():
    result = Deidentifier().redact(["I typed <EMAIL_1> and <email_2> and <b>bold</b>",
                                    "real: jane@example.com"])
    assert result.texts == ("I typed \u2039EMAIL_1\u203a and \u2039email_2\u203a and "
                            "<b>bold</b>", "real: <EMAIL_1>")
    assert result.escaped == 2


def test_empty_and_blank_texts():
    result = Deidentifier().redact(["", "   ", "\n"])
    assert result.texts == ("", "   ", "\n") and result.counts == {}
    assert Deidentifier().redact([]).texts == ()


def test_a_very_long_text_is_redacted_throughout():
    filler = "Thanks for waiting, we're checking with the warehouse. " * 20_000  # ~1.1 MB
    text = "jane@example.com " + filler + "call 020 7946 0123 " + filler + "4111111111111111"
    (out,) = redact(text)
    assert out == "<EMAIL_1> " + filler + "call <PHONE_1> " + filler + "<CARD_1>"


def test_odd_unicode_is_kept_and_identifiers_beside_it_removed():
    text = "\ud800jane@example.com\u202e 020 7946 0123 \x00\ufeff GB82WEST12345698765432"
    assert redact(text) == ("\ud800<EMAIL_1>\u202e <PHONE_1> \x00\ufeff <IBAN_1>",)


ANY_CHAR = st.characters(categories=["L", "N", "P", "S", "Z", "C"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(ANY_CHAR, max_size=200), max_size=3))
def test_any_text_redacts_without_error_and_counts_match_placeholders(texts):
    result = Deidentifier().redact(texts)
    placeholders = [m for t in result.texts for m in PLACEHOLDER.finditer(t)]
    assert len(placeholders) == sum(result.counts.values())
    assert len(result.texts) == len(texts)


@settings(max_examples=300, deadline=None)
@given(st.text(ANY_CHAR, max_size=80), st.text(ANY_CHAR, max_size=80),
       st.sampled_from(["jane.doe@example.com", "4111 1111 1111 1111", "DE89370400440532013000",
                        "+44 20 7946 0123", "2001:db8::7"]))
def test_a_planted_identifier_never_survives_between_any_words(before, after, value):
    (out,) = redact(f"{before} {value} {after}")
    assert value not in out


@settings(max_examples=200, deadline=None)
@given(st.text(ANY_CHAR, max_size=80), st.text(ANY_CHAR, max_size=80))
def test_an_ipv4_address_survives_only_after_a_version_word(before, after):
    # "version 2.4.1.0" stays by design; on a line of its own an address always goes.
    (out,) = redact(f"{before}\n198.51.100.7 {after}")
    assert "198.51.100.7" not in out
