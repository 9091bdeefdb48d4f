"""Chat-model providers behind :class:`kernelwright.agents.llm.ChatModel`.

    make_chat_model("openai:gpt-4o", None)                        -> OpenAI, OPENAI_API_KEY
    make_chat_model("openai:qwen2.5-coder", "http://h:8000/v1")   -> a self-served model
    make_chat_model("anthropic:claude-sonnet-4-5", None)          -> Anthropic, ANTHROPIC_API_KEY

The SDKs are imported when a provider is built, never when kernelwright is imported.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kernelwright.agents.llm import ChatModel, LLMError
from kernelwright.agents.retry import RetryingModel, RetryPolicy
from kernelwright.agents.spec import LLMSpec, parse_spec, resolve_endpoint

__all__ = ["LLMSettings", "make_chat_model"]


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """Request settings shared by both providers.

    Attributes:
        timeout_s: limit for one request (a slow local model may need more).
        max_tokens: reply limit (None: the server's default; Anthropic needs one, 8192).
        temperature: None leaves the provider's default.
        retry: backoff policy for rate limits, 5xx, timeouts and malformed replies.
    """

    timeout_s: float = 300.0
    max_tokens: int | None = None
    temperature: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)


def make_chat_model(
    spec: str | LLMSpec,
    base_url: str | None,
    *,
    settings: LLMSettings | None = None,
    environ: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[LLMError, float], None] | None = None,
) -> ChatModel:
    """A retrying chat model for ``spec`` (``PROVIDER:MODEL``) at ``base_url``.

    Raises:
        ConfigError: a bad spec or URL, a missing key, or a missing SDK.
    """
    parsed = spec if isinstance(spec, LLMSpec) else parse_spec(spec)
    cfg = settings or LLMSettings()
    endpoint = resolve_endpoint(parsed, base_url, environ)
    inner: ChatModel
    if parsed.provider == "openai":
        from kernelwright.agents.providers.openai_chat import OpenAIChat

        inner = OpenAIChat(
            str(parsed),
            parsed.model,
            endpoint,
            timeout_s=cfg.timeout_s,
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
        )
    else:
        from kernelwright.agents.providers.anthropic_chat import AnthropicChat

        inner = AnthropicChat(
            str(parsed),
            parsed.model,
            endpoint,
            timeout_s=cfg.timeout_s,
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
        )
    return RetryingModel(inner, cfg.retry, sleep=sleep, on_retry=on_retry)
