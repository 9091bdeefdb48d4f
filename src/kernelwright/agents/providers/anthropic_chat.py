"""Claude through the official ``anthropic`` SDK (Messages API; base URL configurable)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from kernelwright.agents.llm import ChatMessage, Completion, Usage
from kernelwright.agents.providers.errors import translate
from kernelwright.agents.providers.sdk import require_sdk
from kernelwright.agents.spec import Endpoint


class AnthropicChat:
    """A :class:`ChatModel` over ``POST {base_url}/v1/messages``.

    The Messages API takes the system prompt apart from the turns and needs ``max_tokens``.
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
        anthropic = require_sdk("anthropic")
        self.name = name
        self.model = model
        self.base_url = endpoint.base_url
        self._sdk = anthropic
        self._max_tokens = max_tokens or 8192  # every current Claude model allows 8192
        self._temperature = temperature
        self._client = anthropic.Anthropic(
            api_key=endpoint.api_key,
            base_url=endpoint.base_url,
            timeout=timeout_s,
            max_retries=0,  # RetryingModel owns the policy
            http_client=anthropic.DefaultHttpxClient(follow_redirects=False, timeout=timeout_s),
        )

    def complete(self, messages: Sequence[ChatMessage]) -> Completion:
        """One Messages API call (raises :class:`LLMError`)."""
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self._max_tokens,
            "messages": [
                {"role": m.role, "content": m.content} for m in messages if m.role != "system"
            ],
        }
        if system:
            kwargs["system"] = system
        if self._temperature is not None:
            kwargs["temperature"] = self._temperature
        started = time.monotonic()
        try:
            response = self._client.messages.create(**kwargs)
        except Exception as exc:
            error = translate(exc, self._sdk, self.base_url)
            if error is None:
                raise
            raise error from exc
        blocks = getattr(response, "content", None) or []
        text = "".join(
            getattr(b, "text", "") or "" for b in blocks if getattr(b, "type", "") == "text"
        )
        usage = getattr(response, "usage", None)
        return Completion(
            text=text,
            usage=Usage(
                int(getattr(usage, "input_tokens", 0) or 0),
                int(getattr(usage, "output_tokens", 0) or 0),
            ),
            model=str(getattr(response, "model", None) or self.model),
            finish_reason=getattr(response, "stop_reason", None),
            latency_s=time.monotonic() - started,
        )
