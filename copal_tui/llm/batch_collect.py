"""The client of a batch's dry pass: it records the requests a stage would send, sends none.

`copal run ... --batch` first runs the stage with this client and discards everything the stage
would write: each request goes through the live client's own path (`LLMClient._complete`: the
same payload, cache key, schema and cache lookup), and where the live client would call the
provider this one records the request instead (for a model with a batch API) and answers it as
a non-fatal failure. Nothing is logged. Structured calls stop after the first request: the
repair of an invalid answer is for the live run, which also calls every model without a batch
API (`live` says which, and why).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from os import PathLike
from typing import Any

from copal_tui.llm import parsing
from copal_tui.llm.batch import BatchRequest, no_batch_reason, request_of
from copal_tui.llm.client import LLMClient, T
from copal_tui.llm.models import ModelSpec
from copal_tui.llm.results import LLMError, Structured
from store.pipeline import llm_log

LEFT_FOR_BATCH = "left for a batch (dry pass)"


class Collector(LLMClient):
    def __init__(self, db_path: str | PathLike[str],
                 models_file: str | PathLike[str] | None) -> None:
        super().__init__(db_path, None, models_file=models_file)
        self.requests: dict[str, BatchRequest] = {}
        self.live: dict[str, str] = {}  # model name -> why its calls stay live
        self._reasons: dict[str, str | None] = {}

    def _log(self, row: llm_log.CallRow) -> None:
        pass  # a dry pass leaves no trace in the call log

    async def _call_with_retries(self, spec: ModelSpec, messages: list[dict[str, Any]],
                                 key: str, request_json: str,
                                 response_format: dict[str, Any] | None = None) -> Any:
        if spec.name not in self._reasons:
            # May import litellm: not on the event loop.
            self._reasons[spec.name] = await asyncio.to_thread(no_batch_reason, spec)
        why = self._reasons[spec.name]
        if why is None:
            self.requests.setdefault(key, request_of(spec, messages, key, request_json,
                                                     response_format))
        else:
            self.live.setdefault(spec.name, why)
        raise LLMError(LEFT_FOR_BATCH, attempts=0)

    async def _structured(self, spec: ModelSpec, messages: list[dict[str, Any]],
                          out_type: type[T], *, task: str, template_version: str,
                          context: Mapping[str, Any] | None) -> Structured[T]:
        fmt = await self._schema_format(spec, out_type)
        try:
            first = await self._complete(spec, messages, task=task,
                                         template_version=template_version,
                                         response_format=fmt)
        except LLMError as exc:
            return Structured(None, None, exc.reason, cached=False, calls=1)
        try:
            value = parsing.validate(first.text, out_type, context)
        except parsing.OutputProblem as exc:
            return Structured(None, first.text, str(exc), cached=True, calls=1)
        return Structured(value, first.text, None, cached=True, calls=1)
