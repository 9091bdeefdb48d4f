"""Chat completions through the official ``openai`` SDK: OpenAI and every server that speaks
its API (vLLM, SGLang, llama.cpp's server, Ollama, OpenRouter), selected by the base URL."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from kernelwright.agents.llm import ChatMessage, Completion, LLMError, Usage
from kernelwright.agents.providers.errors import translate
from kernelwright.agents.providers.sdk import require_sdk
from kernelwright.agents.spec import OFFICIAL_BASE_URLS, Endpoint


class OpenAIChat:
    """A :class:`ChatModel` over ``POST {base_url}/chat/completions``.

    Args:
        name: the spec, e.g. ``openai:gpt-4o``. model: the model id sent to the server.
        endpoint: base URL and key (see :func:`kernelwright.agents.spec.resolve_endpoint`).
        timeout_s: limit for one request.
        max_tokens: reply limit; None leaves it to the server. Sent as
            ``max_completion_tokens`` to OpenAI itself and as ``max_tokens`` elsewhere.
        temperature: None leaves it to the server (some reasoning models accept no other).
    """

    def __init__(
        self,
        name: str,
        model: str,
        endpoint: Endpoint,
        *,
        timeout_s: float = 300.0,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> None:
        openai = require_sdk("openai")
        self.name = name
        self.model = model
        self.base_url = endpoint.base_url
        self._sdk = openai
        self._official = endpoint.base_url == OFFICIAL_BASE_URLS["openai"]
        self._max_tokens = max_tokens
        self._temperature = temperature
        self._client = openai.OpenAI(
            api_key=endpoint.api_key,
            base_url=endpoint.base_url,
            timeout=timeout_s,
            max_retries=0,  # RetryingModel owns the policy
            http_client=openai.DefaultHttpxClient(follow_redirects=False, timeout=timeout_s),
        )

    def complete(self, messages: Sequence[ChatMessage]) -> Completion:
        """One chat completion (raises :class:`LLMError`)."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        if self._max_tokens is not None:
            key = "max_completion_tokens" if self._official else "max_tokens"
            kwargs[key] = self._max_tokens
        if self._temperature is not None:
            kwargs["temperature"] = self._temperature
        started = time.monotonic()
        try:
            response = self._client.chat.completions.create(**kwargs)
        except Exception as exc:
            error = translate(exc, self._sdk, self.base_url)
            if error is None:
                raise
            raise error from exc
        return _completion(response, self.model, time.monotonic() - started)


def _completion(response: Any, model: str, latency_s: float) -> Completion:
    choices = getattr(response, "choices", None) or []
    if not isinstance(choices, list):
        raise LLMError("the server's reply has no list of choices", retryable=True)
    text, finish = "", None
    if choices:
        message = getattr(choices[0], "message", None)
        text = (getattr(message, "content", None) or "") if message is not None else ""
        finish = getattr(choices[0], "finish_reason", None)
    usage = getattr(response, "usage", None)
    return Completion(
        text=text if isinstance(text, str) else str(text),
        usage=Usage(
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
        ),
        model=str(getattr(response, "model", None) or model),
        finish_reason=finish,
        latency_s=latency_s,
    )
