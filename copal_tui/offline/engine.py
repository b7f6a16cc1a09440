"""Entry point of the offline engine: `answer(name, messages) -> str`. NOT a language model.

A structured task is recognised by the COPAL-TASK trailer at the end of a user message (or, for
a prompt with a layout, by its system prompt and text blocks: `prompts.parse_layout`) and is
answered by the matching heuristic whatever the offline model name (so `offline/judge`,
`offline/heuristic`, `offline/grounder` all work); the answer is one JSON object validated
against `TASK_OUTPUTS[task]` before it is returned. A message list without a trailer is a
target-chatbot call, answered by the reference bot named in the model name. Mixing the two
(a chatbot name given a structured task, or a heuristic name given a chatbot call) is a
ValueError with a clear message. No randomness: the same messages give byte-identical output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from copal_tui import prompts
from copal_tui.domain.outputs import TASK_OUTPUTS
from copal_tui.offline import (
    compass,
    dialogue,
    generator,
    grounder,
    judge,
    planners,
    projection_check,
    screening,
    traffic,
)
from copal_tui.offline.chatbots import CHATBOTS, chat

Handler = Callable[[dict[str, Any]], dict[str, Any]]
HANDLERS: dict[str, Handler] = {
    "grounding": grounder.grounding,
    "composition": grounder.composition,
    "generation": generator.generation,
    "screening": screening.screening,
    "projection": screening.projection,
    "projection_screening": projection_check.projection_screening,
    "mapping": screening.mapping,
    "planner_raw_policy": planners.planner_raw_policy,
    "planner_clause_only": planners.planner_clause_only,
    "planner_no_facet": planners.planner_no_facet,
    "judge_contract": judge.judge_contract,
    "judge_full_policy": judge.judge_full_policy,
    **compass.HANDLERS,
    **dialogue.HANDLERS,
    **traffic.HANDLERS,
}

def parse_trailer(text: str) -> tuple[str, dict[str, Any]] | None:
    """Task and input of a user message: the prompts module's parser, the one format."""
    return prompts.parse_trailer(text)


def _content(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else \
        getattr(message, "content", None)
    if isinstance(content, list):
        # OpenAI-style content parts.
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _role(message: Any) -> str:
    role = message.get("role") if isinstance(message, dict) else getattr(message, "role", None)
    return str(role or "")


def find_task(messages: list[Any], *, layouts: bool = True
              ) -> tuple[str, dict[str, Any]] | None:
    """The trailer of the latest user message that has one (a repair round appends a user
    message without a trailer after the original one); else, for a task whose prompt has a
    layout (text blocks, no trailer), the input read back from the first user message under
    that task's system prompt (`layouts=False` skips that: a reference chatbot's call)."""
    for m in reversed(messages):
        if _role(m) == "user" and "COPAL-TASK:" in _content(m):
            found = parse_trailer(_content(m))
            if found is not None:
                return found
    systems = [_content(m) for m in messages if _role(m) == "system"]
    users = [_content(m) for m in messages if _role(m) == "user"]
    if layouts and len(systems) == 1 and users:
        return prompts.parse_layout(systems[0], users[0])
    return None


def structured(task: str, inp: dict[str, Any]) -> str:
    handler = HANDLERS.get(task)
    if handler is None:
        known = ", ".join(sorted(HANDLERS))
        raise ValueError(f"offline engine: unknown task {task!r} (known: {known})")
    out = TASK_OUTPUTS[task].model_validate(handler(inp))
    return out.model_dump_json(exclude_none=False)


def answer(name: str, messages: list[Any]) -> str:
    """Answer one model call. `name` is the offline model name without the "offline/" prefix."""
    name = name.removeprefix("offline/").strip()
    if not isinstance(messages, list) or not messages:
        raise ValueError("offline engine: messages must be a non-empty list")
    found = find_task(messages, layouts=name not in CHATBOTS)
    if found is not None:
        task, inp = found
        if name in CHATBOTS:
            raise ValueError(
                f"offline/{name} is a reference chatbot and cannot answer the structured task "
                f"{task!r}; use a heuristic name such as offline/heuristic or offline/judge"
            )
        return structured(task, inp)
    if name not in CHATBOTS:
        raise ValueError(
            f"offline/{name} answers structured tasks (messages ending with a COPAL-TASK "
            f"trailer), but this call has none; for a target chatbot use one of "
            f"{', '.join('offline/' + c for c in CHATBOTS)}"
        )
    system = "\n".join(_content(m) for m in messages if _role(m) == "system")
    users = [_content(m) for m in messages if _role(m) == "user"]
    if not users:
        raise ValueError("offline chatbot: no user message (the query) in the call")
    return chat(name, system, users[-1])
