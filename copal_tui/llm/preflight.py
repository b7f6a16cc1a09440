"""Whether a model can be called at all, decided before its first call: the problems that would
fail every call the same way, each as one ModelConfigError saying what to fix.

- a name litellm cannot place (`mybott`, `opnai/gpt-4o`): no provider would be asked, so the
  error names the model string, how to write one, and the close matches (models-file entries,
  litellm's providers and model names);
- a key that is not there: the entry's `api_key_env` unset, or, for a model without one and
  without its own `api_base`, none of the provider's key variables set (litellm's
  `validate_environment`; only its API-key variables count: a provider reached through a
  credential chain, such as AWS or Google Cloud, or a base-URL variable with a default, cannot
  be judged in advance);
- a model in a role it cannot take: an http target (a deployed chatbot) as a judge or
  generator, an offline reference chatbot as a judge, an offline heuristic as a target.

The offline engine and http targets are checked without litellm; a litellm model string
imports it (seconds), which a command pays only when it is about to call that model.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from copal_tui.llm import provider
from copal_tui.llm.models import (
    OFFLINE_PREFIX,
    ModelConfigError,
    ModelSpec,
    models_file_from_env,
    read_models_file,
    resolve,
)

MAX_MATCHES = 3


def check_names(targets: Iterable[str], others: Iterable[str],
                models_file: Path | None) -> None:
    """Resolve and check every model a command is about to call: `targets` answer as chatbots
    (`--model`), `others` judge or build suites. Raises the first problem."""
    path = models_file if models_file is not None else models_file_from_env()
    entries = read_models_file(path).names() if path is not None else []
    seen: set[tuple[str, bool]] = set()
    for names, target in ((targets, True), (others, False)):
        for name in names:
            if (name, target) not in seen:
                seen.add((name, target))
                check(resolve(name, path), target=target, entries=entries)


def check(spec: ModelSpec, *, target: bool | None = None, entries: Iterable[str] = ()) -> None:
    """Raise ModelConfigError when no call of `spec` can succeed (see the module docstring);
    `target` says the role it is called in (None: not known here)."""
    if target is not None and (problem := role_problem(spec, target=target)):
        raise ModelConfigError(problem)
    spec.secrets()  # an unset api_key_env or header variable
    if spec.is_offline or spec.is_http:
        return
    litellm = provider.get_litellm()
    try:
        _, provider_name, _, _ = litellm.get_llm_provider(model=spec.model,
                                                          api_base=spec.api_base)
    except Exception:  # noqa: BLE001 - litellm says so with a BadRequestError
        raise ModelConfigError(_unplaced(litellm, spec, entries)) from None
    if spec.api_key_env or spec.api_base:
        # The entry names its key's variable (checked above), or the model is a server of the
        # user's own, which may take no key (a placeholder is sent).
        return
    missing = [name for name in litellm.validate_environment(model=spec.model)["missing_keys"]
               if name.endswith("_API_KEY")]
    if missing:
        raise ModelConfigError(
            f"model {spec.name!r} ({provider_name}) needs an API key: set the environment "
            f"variable {' or '.join(missing)}, or name the variable that holds it with "
            "api_key_env in a models file entry (--models-file)")


def role_problem(spec: ModelSpec, *, target: bool) -> str | None:
    """Why `spec` cannot be called in this role (a target chatbot, or a judge or generator);
    None when it can."""
    if spec.is_http and not target:
        return (f"{spec.name!r} is an http target (a deployed chatbot): it can only be a "
                "--model target, not a judge or generator")
    if not spec.is_offline:
        return None
    from copal_tui.offline.chatbots import CHATBOTS

    engine = spec.model.removeprefix(OFFLINE_PREFIX).strip()
    bots = ", ".join(OFFLINE_PREFIX + c for c in CHATBOTS)
    if target and engine not in CHATBOTS:
        close = difflib.get_close_matches(engine, CHATBOTS, n=1)
        hint = f" (close match: {OFFLINE_PREFIX}{close[0]})" if close else ""
        return (f"{spec.name!r} is not an offline reference chatbot{hint}: a --model target "
                f"of the offline engine is one of {bots}")
    if not target and engine in CHATBOTS:
        return (f"{spec.name!r} is an offline reference chatbot: it answers as a --model "
                "target, not as a judge or generator (offline/judge and offline/heuristic "
                "are the offline engine's)")
    return None


def _unplaced(litellm: Any, spec: ModelSpec, entries: Iterable[str]) -> str:
    """The one line saying that litellm cannot tell `spec`'s provider, and what was meant."""
    model = spec.model
    prefix, slash, rest = model.partition("/")
    providers = [str(getattr(p, "value", p)) for p in litellm.provider_list]
    named = spec.name == model  # a name given as is, not an entry's model string
    guesses = difflib.get_close_matches(model, list(entries), n=MAX_MATCHES) if named else []
    if slash:
        guesses += [f"{p}/{rest}" for p in difflib.get_close_matches(prefix, providers, n=2)]
    else:
        guesses += difflib.get_close_matches(model, list(litellm.model_cost), n=MAX_MATCHES)
    close = list(dict.fromkeys(guesses))[:MAX_MATCHES]
    how = ("write provider/model (openai/..., anthropic/..., ollama/..., hosted_vllm/...) or "
           "name an entry of the models file (--models-file)")
    said = (f"unknown model {model!r}: not a models-file entry, and litellm cannot tell its "
            f"provider; {how}" if named else
            f"models file entry {spec.name!r}: litellm cannot tell the provider of model "
            f"{model!r}; write provider/model")
    return said + (f"; close matches: {', '.join(close)}" if close else "")
