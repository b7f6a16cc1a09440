"""Model specs: what a model name on the command line means, and the models YAML file.

A name is either an entry of the models file (`--models-file` or env COPAL_MODELS_FILE; a
top-level mapping name -> fields) or a plain litellm model string (`openai/gpt-4o-mini`,
`ollama/llama3`, ...). `offline/<name>` is the deterministic offline engine, served through a
litellm custom provider so it shares the cache, log and retry paths with real models. An entry
with `kind: http` is a deployed chatbot behind an HTTP endpoint (see http_target): a target
only, never a judge or a generator, with the same limits, cache and log as a model.

A spec holds the NAME of the environment variable with the API key, never the key: the value is
read at call time (`api_key()`) and must never be stored, logged or shown.

Generation settings: an entry may set `temperature`, `max_tokens` and `reasoning_effort`. Where
it leaves temperature or max_tokens unset, the role the call is made in (`TASK_ROLES`, by prompt
task) supplies the COPAL paper's setting (Appendix A.2: "All reported calls use no tools, an
8,000-token output limit, and provider-default sampling with temperature 1.0"), or nothing: the
provider's default. `for_task` gives the spec a call is made with; `SentSettings` is what the
run manifest records of it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from copal_tui.llm.http_target import HttpTarget
from copal_tui.llm.urls import http_url_problem, url_secrets

MODELS_FILE_ENV = "COPAL_MODELS_FILE"
OFFLINE_PREFIX = "offline/"
HTTP_KIND = "http"
# The limits an http entry shares with a model (its other fields are the endpoint's), and their
# defaults: a deployed bot is someone else's production service, so copal asks it gently.
HTTP_LIMITS = {"timeout": 60.0, "rpm": 30.0, "max_concurrency": 2, "max_retries": 3}
# The values litellm's completion() takes for `reasoning_effort`.
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]


class ModelConfigError(ValueError):
    """A bad model name, models file or missing key variable (shown to the user as one line)."""


class ModelSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="what the user calls it; recorded in logs")
    model: str = Field(min_length=1, description="litellm model string")
    api_base: str | None = None
    api_key_env: str | None = Field(default=None, description="NAME of the env var with the key")
    max_concurrency: int = Field(default=8, ge=1)
    rpm: float | None = Field(default=None, gt=0, description="requests per minute cap")
    timeout: float = Field(default=60.0, gt=0, description="seconds per attempt")
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=1)
    reasoning_effort: ReasoningEffort | None = Field(
        default=None, description="sent only where litellm says the model supports it")
    max_retries: int = Field(default=4, ge=0)
    seed: int | None = Field(
        default=None, description="part of the request; sent only where litellm says the "
        "model takes it (a dialogue judge's attempt number, as CompliBench sends it)")
    http: HttpTarget | None = Field(default=None, description="set for a deployed bot")

    @field_validator("api_base")
    @classmethod
    def _api_base(cls, value: str | None) -> str | None:
        # Refused here, when the models file is read: a file: or schemeless address would
        # otherwise fail every call as a connection error, retried as a passing fault.
        problem = http_url_problem(value) if value is not None else None
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _http_alone(self) -> ModelSpec:
        if self.http is not None and (self.api_base or self.api_key_env or self.temperature
                                      is not None or self.max_tokens is not None
                                      or self.reasoning_effort is not None):
            raise ValueError("an http target takes no api_base, api_key_env, temperature, "
                             "max_tokens or reasoning_effort")
        return self

    @property
    def is_offline(self) -> bool:
        return self.model.startswith(OFFLINE_PREFIX)

    @property
    def is_http(self) -> bool:
        return self.http is not None

    def api_key(self) -> str | None:
        """The key value, read now from the environment (None when no variable is configured)."""
        if not self.api_key_env:
            return None
        value = os.environ.get(self.api_key_env)
        if not value:
            raise ModelConfigError(
                f"model {self.name!r}: environment variable {self.api_key_env} is not set"
            )
        return value

    def secrets(self) -> list[str]:
        """Every secret value a call sends (the key, the header variables), read now from the
        environment, and the credentials in the endpoint's URL; an unset variable is a
        ModelConfigError. Scrubbed from all that is stored."""
        key = self.api_key()
        values = [key] if key else []
        values += self.url_secrets()
        for var in self.http.env_names() if self.http is not None else []:
            value = os.environ.get(var)
            if not value:
                raise ModelConfigError(f"model {self.name!r}: environment variable {var} (a "
                                       "header value) is not set")
            values.append(value)
        return values

    def url_secrets(self) -> list[str]:
        """The credentials written into the endpoint's URL (`api_base`, an http target's
        `url`): stripped from the URL that is stored, and scrubbed from all other text."""
        return url_secrets(self.api_base) + url_secrets(self.http.url if self.http else None)


def _http_spec(name: str, fields: dict[str, Any]) -> ModelSpec:
    # The YAML entry is flat: the shared limits go on the spec, everything else (unknown
    # fields included, which HttpTarget rejects by name) is the endpoint's.
    limits = {k: fields.pop(k, default) for k, default in HTTP_LIMITS.items()}
    return ModelSpec(name=name, model=HTTP_KIND, http=HttpTarget.model_validate(fields), **limits)


def _offline_spec(name: str, **fields: Any) -> ModelSpec:
    # The engine is deterministic and local: retrying a failure gives the same failure, and a
    # timeout of a minute would only hide a hang.
    base: dict[str, Any] = {"max_retries": 0, "timeout": 30.0, "max_concurrency": 64}
    base.update(fields)
    return ModelSpec(name=name, **base)


@dataclass(frozen=True)
class ModelsFile:
    """A models file as read: its valid entries, and why each other entry is refused (one line
    naming the file and the entry). A bad entry refuses itself, not its neighbours: a run
    naming another entry of the file goes ahead."""

    specs: dict[str, ModelSpec]
    refused: dict[str, str]

    def names(self) -> list[str]:
        return [*self.specs, *self.refused]


def read_models_file(path: Path) -> ModelsFile:
    """Parse a models file. A file that cannot be read, is not YAML or is not a mapping is a
    ModelConfigError; a bad entry is kept in `refused` with its reason."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelConfigError(f"cannot read models file {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ModelConfigError(f"models file {path} is not valid YAML: {exc}") from None
    if data is None:
        return ModelsFile({}, {})
    if not isinstance(data, dict):
        raise ModelConfigError(f"models file {path}: top level must be a mapping name -> fields")
    specs: dict[str, ModelSpec] = {}
    refused: dict[str, str] = {}
    for name, fields in data.items():
        try:
            specs[str(name)] = _entry(path, name, fields)
        except ModelConfigError as exc:
            refused[str(name)] = str(exc)
    return ModelsFile(specs, refused)


def load_models_file(path: Path) -> dict[str, ModelSpec]:
    """Every entry of a models file; the first refused entry's reason as a ModelConfigError."""
    read = read_models_file(path)
    for reason in read.refused.values():
        raise ModelConfigError(reason)
    return read.specs


def _entry(path: Path, name: object, fields: object) -> ModelSpec:
    """One entry's spec; every problem is a ModelConfigError naming the file and entry."""
    if not isinstance(name, str) or not name.strip():
        raise ModelConfigError(f"models file {path}: model names must be non-empty strings")
    if not isinstance(fields, dict):
        raise ModelConfigError(f"models file {path}: entry {name!r} must be a mapping of fields")
    fields = dict(fields)
    if fields.pop("name", name) != name:
        raise ModelConfigError(f"models file {path}: entry {name!r} has a different `name`")
    kind = fields.pop("kind", None)
    if kind not in (None, HTTP_KIND):
        raise ModelConfigError(f"models file {path}: entry {name!r}: kind: must be "
                               f"{HTTP_KIND!r} (or left out for a model), not {kind!r}")
    if kind is None and "model" not in fields:
        raise ModelConfigError(f"models file {path}: entry {name!r} needs a `model` field")
    try:
        if kind == HTTP_KIND:
            return _http_spec(name, fields)
        if str(fields["model"]).startswith(OFFLINE_PREFIX):
            return _offline_spec(name, **fields)
        return ModelSpec(name=name, **fields)
    except ValidationError as exc:
        raise ModelConfigError(f"models file {path}: entry {name!r}: {_summarise(exc)}") from None
    except TypeError as exc:  # non-string keys inside an entry
        raise ModelConfigError(f"models file {path}: entry {name!r}: {exc}") from None


def models_file_from_env() -> Path | None:
    value = os.environ.get(MODELS_FILE_ENV)
    return Path(value) if value else None


def resolve(name: str, models_file: Path | None = None) -> ModelSpec:
    """Turn a model name into a spec: models-file entry, `offline/...`, or a litellm string."""
    name = name.strip()
    if not name:
        raise ModelConfigError("empty model name")
    path = models_file if models_file is not None else models_file_from_env()
    if path is not None:
        models = read_models_file(path)
        if name in models.refused:
            raise ModelConfigError(models.refused[name])
        if name in models.specs:
            return models.specs[name]
    if name.startswith(OFFLINE_PREFIX):
        if not name[len(OFFLINE_PREFIX):]:
            raise ModelConfigError("offline model needs a name, e.g. offline/judge")
        return _offline_spec(name, model=name)
    if any(ch.isspace() for ch in name):
        raise ModelConfigError(f"unknown model {name!r} (not in the models file, not a litellm string)")
    return ModelSpec(name=name, model=name)


def _summarise(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "entry"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


# ------------------------------------------------------------------ generation settings by role

Role = Literal["generator", "verifier", "prefilter", "target", "judge"]


@dataclass(frozen=True)
class RoleDefaults:
    """The temperature and output limit a call gets when its model's entry leaves them unset
    (None: nothing is sent, the provider's default applies)."""

    temperature: float | None = None
    max_tokens: int | None = None


# COPAL paper, Appendix A.2: "All reported calls use no tools, an 8,000-token output limit, and
# provider-default sampling with temperature 1.0." That covers COPAL's construction calls, its
# targets and its response judge.
PAPER_CALLS = RoleDefaults(temperature=1.0, max_tokens=8000)
# Judges of the other methods (COMPASS, CompliBench) and COMPASS's pre-filter: their papers set
# their own judge settings (COMPASS's GPT-5-mini judge at reasoning_effort high), which a models
# file entry reproduces; without one they keep the provider's defaults.
PROVIDER_DEFAULTS = RoleDefaults()


def _roles(role: Role, defaults: RoleDefaults, *tasks: str) -> dict[str, tuple[Role, RoleDefaults]]:
    return {task: (role, defaults) for task in tasks}


# Prompt task -> the role its model is called in, and that role's defaults. A task missing here
# (a test's, a benchmark's) gets no defaults.
TASK_ROLES: dict[str, tuple[Role, RoleDefaults]] = {
    **_roles("generator", PAPER_CALLS, "grounding", "composition", "generation", "screening",
             "projection", "projection_screening", "planner_raw_policy", "planner_clause_only",
             "planner_no_facet", "mapping", "compass_generate_base", "compass_generate_edge",
             "compass_rewrite_edge", "compass_reference", "compass_generate_org",
             "compass_generate_denied_short", "compass_generate_denied_long",
             "dialogue_variant", "dialogue_refine", "dialogue_regenerate"),
    **_roles("verifier", PAPER_CALLS, "compass_verify", "compass_verify_edge",
             "compass_verify_reference", "compass_verify_denylist"),
    **_roles("target", PAPER_CALLS, "chatbot"),
    **_roles("judge", PAPER_CALLS, "judge_contract", "judge_full_policy", "traffic_judge"),
    **_roles("judge", PROVIDER_DEFAULTS, "compass_judge", "compass_judge_with_query",
             "dialogue_judge", "dialogue_judge_copal", "dialogue_judge_binary",
             "dialogue_content_judge", "dialogue_compliance_judge"),
    **_roles("prefilter", PROVIDER_DEFAULTS, "compass_prefilter"),
}


def role_of(task: str) -> Role | None:
    found = TASK_ROLES.get(task)
    return found[0] if found else None


def for_task(spec: ModelSpec, task: str) -> ModelSpec:
    """The spec a call for `task` is made with: the entry's own temperature and max_tokens,
    else the task's role defaults. An http target is sent none of them (the bot's own)."""
    found = TASK_ROLES.get(task)
    if spec.is_http or found is None:
        return spec
    defaults = found[1]
    fill: dict[str, Any] = {}
    if spec.temperature is None and defaults.temperature is not None:
        fill["temperature"] = defaults.temperature
    if spec.max_tokens is None and defaults.max_tokens is not None:
        fill["max_tokens"] = defaults.max_tokens
    return spec.model_copy(update=fill) if fill else spec


@dataclass(frozen=True)
class SentSettings:
    """What a model was sent in one role (the run manifest's `model_settings`): the values
    the calls carried, and the reasoning effort the entry asked for with whether it was sent
    (not sent where litellm does not list the model as supporting it)."""

    model: str
    temperature: float | None
    max_tokens: int | None
    reasoning_effort: str | None
    reasoning_effort_sent: bool

    def as_json(self) -> dict[str, Any]:
        return {"litellm_model": self.model, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "reasoning_effort": self.reasoning_effort,
                "reasoning_effort_sent": self.reasoning_effort_sent}
