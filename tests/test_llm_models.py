"""Model names and the models YAML file."""

from __future__ import annotations

from pathlib import Path

import pytest

from copal_tui.llm.models import MODELS_FILE_ENV, ModelConfigError, load_models_file, resolve


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_plain_litellm_string_and_offline_names():
    spec = resolve("openai/gpt-4o-mini")
    assert (spec.name, spec.model, spec.api_key_env, spec.max_retries) == (
        "openai/gpt-4o-mini", "openai/gpt-4o-mini", None, 4)
    assert spec.max_concurrency == 8 and spec.timeout == 60 and spec.rpm is None
    off = resolve("offline/judge")
    assert off.is_offline and off.model == "offline/judge" and off.max_retries == 0
    with pytest.raises(ModelConfigError):
        resolve("offline/")
    with pytest.raises(ModelConfigError):
        resolve("  ")


def test_models_file_entries(tmp_path, monkeypatch):
    path = write(tmp_path, """
local-llama:
  model: hosted_vllm/meta-llama/Llama-3.1-8B-Instruct
  api_base: http://localhost:8000/v1
  api_key_env: VLLM_KEY
  max_concurrency: 4
  rpm: 120
  timeout: 30
  temperature: 0
  max_tokens: 2048
  max_retries: 2
quick-judge:
  model: offline/judge
""")
    spec = resolve("local-llama", path)
    assert spec.name == "local-llama" and spec.api_base == "http://localhost:8000/v1"
    assert (spec.max_concurrency, spec.rpm, spec.timeout, spec.max_tokens) == (4, 120, 30, 2048)
    assert resolve("quick-judge", path).is_offline
    assert resolve("gemini/gemini-2.0-flash", path).model == "gemini/gemini-2.0-flash"
    monkeypatch.setenv(MODELS_FILE_ENV, str(path))
    assert resolve("local-llama").api_key_env == "VLLM_KEY"

    monkeypatch.setenv("VLLM_KEY", "secret-value")
    assert spec.api_key() == "secret-value"
    assert "secret-value" not in repr(spec)  # the spec holds the variable's name only
    monkeypatch.delenv("VLLM_KEY")
    with pytest.raises(ModelConfigError, match="VLLM_KEY is not set"):
        spec.api_key()


@pytest.mark.parametrize("text, message", [
    ("m:\n  model: openai/x\n  colour: blue\n", "colour"),
    ("m:\n  api_base: http://x\n", "needs a `model`"),
    ("m:\n  model: openai/x\n  max_concurrency: 0\n", "max_concurrency"),
    ("m:\n  model: openai/x\n  timeout: soon\n", "timeout"),
    ("m:\n  model: openai/x\n  reasoning_effort: huge\n", "reasoning_effort"),
    ("- a\n- b\n", "top level must be a mapping"),
    ("m: openai/x\n", "must be a mapping of fields"),
    ("m:\n  model: [unclosed\n", "not valid YAML"),
    ("m:\n  name: other\n  model: openai/x\n", "different `name`"),
    ("m:\n  model: openai/x\n  api_base: file:///etc/passwd\n", "api_base"),
])
def test_bad_models_file_is_a_clear_error(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ModelConfigError, match="models file") as info:
        load_models_file(path)
    assert message in str(info.value)


def test_missing_models_file(tmp_path):
    with pytest.raises(ModelConfigError, match="cannot read models file"):
        resolve("x", tmp_path / "nope.yaml")
    assert load_models_file(write(tmp_path, "")) == {}
