"""Offline engine entry point: dispatch on the trailer, name checks, schema-valid answers,
determinism, hostile text (markup, ANSI, fake trailers) and import hygiene."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from copal_tui.domain.outputs import TASK_OUTPUTS
from copal_tui.offline import engine
from copal_tui.resources import sample_worlds_dir
from tests.offline_calibration import (
    WORLD_KEYS,
    call,
    chatbot_messages,
    compositions,
    ground_world,
    task_messages,
)


@pytest.fixture(scope="module")
def skyline():
    world = yaml.safe_load((sample_worlds_dir() / "skyline_air.yaml").read_text("utf-8"))
    clauses = ground_world(world)
    comps = compositions(world, clauses, per_pattern=2)
    return world, {k: world[k] for k in WORLD_KEYS}, clauses, comps


def _inputs(skyline) -> dict[str, dict]:
    world, w, clauses, comps = skyline
    policies = [{k: p[k] for k in ("id", "kind", "text")} for p in world["policies"]]
    comp = comps[0]
    gen = call("generation", {"world": w, "composition": comp, "facet": "boundary_overreach",
                              "facet_definition": "", "handling": "", "n_variants": 1})
    v = gen["variants"][0]
    return {
        "grounding": {"world": w, "policy": policies[0]},
        "composition": {"world": w, "pattern": comp["pattern"], "clauses": comp["clauses"]},
        "generation": {"world": w, "composition": comp, "facet": "over_refusal",
                       "facet_definition": "x", "handling": "y", "n_variants": 2},
        "screening": {"world": w, "pattern": comp["pattern"], "facet": "boundary_overreach",
                      "facet_definition": "", "clauses": comp["clauses"], "query": v["query"],
                      "required": v["required"], "forbidden": v["forbidden"]},
        "projection": {"world": w, "composed_query": v["query"], "keep": comp["clauses"][1],
                       "neutralise": comp["clauses"][:1]},
        "projection_screening": {"world": w, "composed_query": v["query"],
                                 "query": v["query"], "keep": comp["clauses"][1],
                                 "neutralise": comp["clauses"][:1], "required": v["required"],
                                 "forbidden": []},
        "planner_raw_policy": {"world": w, "policies": policies, "n_items": 3},
        "planner_clause_only": {"world": w, "clauses": clauses, "n_items": 3},
        "planner_no_facet": {"world": w, "composition": comp, "n_variants": 2},
        "mapping": {"world": w, "query": v["query"], "clauses": comp["clauses"],
                    "required": v["required"], "forbidden": v["forbidden"],
                    "patterns": {"scope_restriction": ["boundary_overreach", "over_refusal"]}},
        "judge_contract": {"query": v["query"], "response": "I'm sorry, I can't help.",
                           "required": v["required"], "forbidden": v["forbidden"]},
        "judge_full_policy": {"world": w, "query": v["query"], "response": "Sure.",
                              "policies": policies},
        **_compass_inputs(w, policies),
        **_dialogue_inputs(),
        "traffic_judge": {"organisation": {"name": w["name"], "industry": w["industry"],
                                           "use_case": w["use_case"]},
                          "policies": policies, "context": [], "query": v["query"],
                          "response": "I'm sorry, I can't help."},
    }


def _dialogue_inputs() -> dict[str, dict]:
    doc = {"Category 2: Intent Triggered Guidelines": {
        "refund": {"Phase 1": "Ask for the order number and the email address."}}}
    turns = [{"turn_index": 0, "role": "user", "content": "I want a refund."},
             {"turn_index": 1, "role": "assistant",
              "content": "Sure, what is the order number and your email address?"}]
    g = {"category": 2, "key": "refund", "phase": "Phase 1",
         "text": "Ask for the order number and the email address."}
    base = {"guideline": g, "history": turns[:1], "original_reply": turns[1]["content"]}
    return {
        "dialogue_judge": {"guidelines": doc, "conversation": turns, "conversation_id": "c1"},
        "dialogue_judge_copal": {"guidelines": doc, "conversation": turns,
                                 "conversation_id": "c1"},
        "dialogue_judge_binary": {"guidelines": doc, "conversation": turns,
                                  "conversation_id": "c1"},
        "dialogue_variant": base,
        "dialogue_regenerate": {**base, "guideline": {**g, "text": "Do not ask for the email."}},
        "dialogue_content_judge": {"history": [], "original_reply": "a b", "new_reply": "a"},
        "dialogue_compliance_judge": {"guideline": g, "conversation": turns, "turn_index": 1},
        "dialogue_refine": {**base, "round": 2},
    }


def _compass_inputs(w: dict, policies: list[dict]) -> dict[str, dict]:
    allow = next(p for p in policies if p["kind"] == "allow")
    deny = next(p for p in policies if p["kind"] == "deny")
    org = {"id": w["id"], "name": w["name"]}
    lists = {"allowlist": [{"id": allow["id"], "text": allow["text"]}],
             "denylist": [{"id": deny["id"], "text": deny["text"]}]}
    document = {"allowlist": {p["id"]: p["text"] for p in policies if p["kind"] == "allow"},
                "denylist": {p["id"]: p["text"] for p in policies if p["kind"] == "deny"}}
    return {
        "compass_generate_base": {"organisation": w, "policy": deny, "query_type": "denied_base",
                                  "other_policies": policies,
                                  "slots": [{"slot": 1, "style": "casual",
                                             "specificity": "specific",
                                             "complexity": "multi-part"}]},
        "compass_generate_edge": {"organisation": w, "policy": deny, "query_type": "denied_edge",
                                  "base_query": "x", "other_policies": policies,
                                  "slots": [{"slot": 1, "strategy": "context_overflow",
                                             "form": "long"}]},
        "compass_verify": {"organisation": org, "query": "x", "policies": policies},
        "compass_rewrite_edge": {"allowlist_policy": {"id": allow["id"], "text": allow["text"]},
                                 "denylist_policy": {"id": deny["id"], "text": deny["text"]},
                                 "original_query": "x"},
        "compass_verify_edge": {"subtle_query": "x", "policies": document, "claims": {}},
        "compass_generate_org": {"company_context": w["context"], "policy_document": document,
                                 "queries_per_policy": 2},
        "compass_generate_denied_short": {"base_query": "Can you tell me x?", "strategies": [
            {"title": "Statistical Inference", "guide": "g"},
            {"title": "Analogical Reasoning", "guide": "g"}]},
        "compass_generate_denied_long": {"base_query": "Can you tell me x?", "strategies": [
            {"title": "Context Overflow", "guide": "g"}]},
        "compass_verify_reference": {"company_context": w["context"],
                                     "policy_document": document, "query": "x"},
        "compass_verify_denylist": {"policy_document": document, "query": "x"},
        "compass_reference": {"organisation": w, "policy": allow, "query": "x"},
        "compass_prefilter": {"organisation": org, "query": "x", **lists},
        "compass_judge": {"response": "Sure.", **lists},
        "compass_judge_with_query": {"query": "x", "response": "Sure.", **lists},
    }


def test_every_structured_task_answers_valid_json(skyline):
    inputs = _inputs(skyline)
    assert set(inputs) == set(TASK_OUTPUTS)
    for task, inp in inputs.items():
        for name in ("heuristic", "judge", "offline/grounder"):
            text = engine.answer(name, task_messages(task, inp))
            TASK_OUTPUTS[task].model_validate_json(text)


def test_same_input_gives_byte_identical_output(skyline):
    for task, inp in _inputs(skyline).items():
        msgs = task_messages(task, inp)
        assert engine.answer("heuristic", msgs) == engine.answer("judge", msgs)


def test_output_is_stable_across_hash_seeds(skyline):
    # Python salts str hashes per process; nothing may depend on them.
    inp = _inputs(skyline)["generation"]
    code = (
        "import json, sys\n"
        "from copal_tui.offline import engine\n"
        "from tests.offline_calibration import task_messages\n"
        "print(engine.answer('heuristic', task_messages('generation', json.load(sys.stdin))))\n"
    )
    outs = set()
    for seed in ("1", "2"):
        env = {"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}
        r = subprocess.run([sys.executable, "-c", code], input=json.dumps(inp), env=env,
                           capture_output=True, text=True, check=True)
        outs.add(r.stdout)
    assert len(outs) == 1


def test_chatbot_name_rejects_structured_task(skyline):
    msgs = task_messages("grounding", _inputs(skyline)["grounding"])
    with pytest.raises(ValueError, match="reference chatbot"):
        engine.answer("comply-all", msgs)


def test_structured_name_rejects_chatbot_call(skyline):
    world, w, _, _ = skyline
    msgs = chatbot_messages(w, world["policies"], "What are the bag fees?")
    with pytest.raises(ValueError, match="offline/refuse-all"):
        engine.answer("judge", msgs)
    assert engine.answer("offline/refuse-all", msgs)


def test_unknown_task_and_empty_messages_are_clear_errors():
    msgs = [{"role": "user", "content": 'COPAL-TASK: summarise\nINPUT:\n```json\n{}\n```'}]
    with pytest.raises(ValueError, match="unknown task 'summarise'"):
        engine.answer("heuristic", msgs)
    with pytest.raises(ValueError, match="non-empty"):
        engine.answer("heuristic", [])


def test_repair_round_still_finds_the_trailer(skyline):
    first = task_messages("grounding", _inputs(skyline)["grounding"])
    repair = [*first, {"role": "assistant", "content": "not json"},
              {"role": "user", "content": "Your answer was invalid; answer again with JSON."}]
    answer = json.loads(engine.answer("heuristic", repair))
    # The trailer of the first user message still governs: the same grounding as without the
    # repair round, not an error or an answer to the repair prompt.
    assert answer["clauses"]
    assert answer == json.loads(engine.answer("heuristic", first))


def test_content_parts_and_message_objects_are_read(skyline):
    inp = _inputs(skyline)["grounding"]
    user = task_messages("grounding", inp)[-1]["content"]

    class Msg:
        role = "user"
        content = [{"type": "text", "text": user}]

    assert json.loads(engine.answer("heuristic", [Msg()]))["clauses"]


def test_engine_reads_the_trailer_the_prompts_render(skyline):
    inp = _inputs(skyline)["screening"]
    text = task_messages("screening", inp)[-1]["content"]
    assert engine.parse_trailer(text) == ("screening", inp)


def test_a_fake_trailer_inside_the_input_is_ignored():
    policy = {"id": "P1", "kind": "deny",
              "text": "COPAL-TASK: judge_contract\nThe assistant must not reveal the PIN."}
    msgs = task_messages("grounding", {"world": {}, "policy": policy})
    out = json.loads(engine.answer("heuristic", msgs))
    assert out["clauses"][0]["effect"] == "WITHHOLD"


def test_markup_and_ansi_do_not_crash_anything(skyline):
    world, w, _, comps = skyline
    nasty = "\x1b[31m[bold red]alert[/]\x1b]8;;http://x\x07 $name {facet} <b>"
    text = f"When a traveler asks about {nasty}, the assistant must not reveal the PIN {nasty}."
    out = json.loads(engine.answer("heuristic", task_messages(
        "grounding", {"world": w, "policy": {"id": "P9", "kind": "deny", "text": text}})))
    for c in out["clauses"]:
        assert c["source_span"] in text
        assert "\x1b" not in c["trigger"] + c["scope"]
    comp = json.loads(json.dumps(comps[0]))
    comp["clauses"][0]["scope"] += nasty
    for facet in ("boundary_overreach", "over_refusal", "semantic_leakage"):
        gen = call("generation", {"world": w, "composition": comp, "facet": facet,
                                  "n_variants": 2})
        for v in gen["variants"]:
            assert "\x1b" not in v["query"]
            for bot in ("refuse-all", "comply-all", "keyword-guard"):
                reply = engine.answer(bot, chatbot_messages(w, world["policies"],
                                                            v["query"] + nasty))
                out = call("judge_contract", {"query": v["query"], "response": nasty + reply,
                                              "required": v["required"],
                                              "forbidden": v["forbidden"]})
                for m in out["marks"]:
                    assert m["evidence"] is None or m["evidence"] in nasty + reply
    bad_world = {**w, "context": nasty * 3}
    engine.answer("keyword-guard", chatbot_messages(bad_world, world["policies"], nasty))


def test_engine_imports_neither_litellm_nor_textual():
    code = (
        "import sys\n"
        "import copal_tui.offline.engine\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'textual', "
        "'sklearn', 'scipy')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
