"""A key written into an endpoint URL (user-info, path, query, an http target's URL) is never
stored: `copal run respond` against a local stub that answers on any path, then every stored
row of the call log, the cache, the responses and the run is searched for the keys."""

from __future__ import annotations

from pathlib import Path

from tests.db_support import query_rows
from tests.stub_server import Stub, serve

WORLD = "meridian-bank"
KEYS = {"in-path": "sk-path-SECRET-3c4d", "in-query": "sk-query-SECRET-5e6f",
        "bot-userinfo": "userinfo-SECRET-9f8e", "bot-query": "tok-bot-SECRET-7a8b9c0d1e2f3a4b"}


def models_file(path: Path, url: str) -> Path:
    """Two model entries with a key in their api_base (path, query) and two deployed bots with
    one in their URL (user-info, query); the stub answers any path in the OpenAI layout."""
    scheme, rest = url.split("://", 1)
    bases = {"in-path": url.replace("/v1", f"/key/{KEYS['in-path']}/v1"),
             "in-query": f"{url}?key={KEYS['in-query']}&api-version=2024-06-01"}
    bots = {"bot-userinfo": f"{scheme}://copal:{KEYS['bot-userinfo']}@{rest}/chat/completions",
            "bot-query": f"{url}/chat/completions?access_token={KEYS['bot-query']}"}
    text = "".join(f"{name}:\n  model: openai/{name}\n  api_base: {base}\n  max_retries: 0\n"
                   for name, base in bases.items())
    text += "".join(f"{name}:\n  kind: http\n  url: {bot}\n  body: {{\"messages\": [{{\"role\": "
                    "\"user\", \"content\": \"{query}\"}]}\n"
                    "  answer: choices[0].message.content\n  max_retries: 0\n"
                    for name, bot in bots.items())
    path.write_text(text, encoding="utf-8")
    return path


def stored_text(db: Path) -> str:
    """Every text column of every row a run writes."""
    parts = []
    for table in ("llm_calls", "llm_cache", "responses", "runs"):
        for row in query_rows(db, f"SELECT * FROM {table}"):
            parts += [str(v) for v in tuple(row) if v is not None]
    return "\n".join(parts)


def test_keys_in_any_part_of_an_endpoint_url_are_never_stored(cli, world, tmp_path):
    stub = Stub()
    with serve(stub) as url:
        models = models_file(tmp_path / "models.yaml", url)
        args = [a for name in KEYS for a in ("--model", name)]
        result = cli("run", "respond", "--world", WORLD, *args, "--models-file", str(models))
    assert result.exit_code == 0, result.output
    assert stub.calls == 12 * len(KEYS)  # every request reached the server, keys and all
    text = stored_text(world)
    for name, key in KEYS.items():
        assert key not in text, name
    requests = {r["model"]: r["request"] for r in query_rows(
        world, "SELECT model, request FROM llm_calls WHERE cached = 0")}
    assert set(requests) == set(KEYS)
    # What is stored is still the endpoint, with each credential marked as removed.
    host = url.split("://", 1)[1].split("/", 1)[0]
    assert f'"url":"http://{host}/v1/chat/completions"' in requests["bot-userinfo"].replace(
        " ", "")
    assert "/key/[redacted]/v1" in requests["in-path"]
    assert "?key=[redacted]&api-version=2024-06-01" in requests["in-query"]
    assert "access_token=[redacted]" in requests["bot-query"]
