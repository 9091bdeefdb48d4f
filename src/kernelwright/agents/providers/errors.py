"""SDK exceptions -> :class:`LLMError`, the same way for both official SDKs.

Retryable: HTTP 408, 409, 429 and 5xx (529 "overloaded" included), timeouts, dropped
connections and replies that are not the JSON the SDK expected. Everything else (a bad key, an
unknown model, a redirect) fails at once with a message that says what to check.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from kernelwright.agents.llm import LLMError

_RETRYABLE_STATUS = frozenset({408, 409, 429})
_HINTS = {
    401: "the server refused the API key; check the key variable named in docs/agents.md",
    403: "the key is not allowed to use this model",
    404: "unknown model or wrong URL; OpenAI-compatible servers usually serve under /v1",
}


def translate(exc: BaseException, sdk: ModuleType, where: str) -> LLMError | None:
    """The :class:`LLMError` for an exception raised by ``sdk`` (None: not an SDK failure)."""
    if isinstance(exc, sdk.APIStatusError):
        code = int(exc.status_code)
        retryable = code in _RETRYABLE_STATUS or code >= 500
        if 300 <= code < 400:
            hint = (
                "the server answered with a redirect, which kernelwright does not follow so that "
                "a key never reaches a URL you did not give; pass the final URL"
            )
        else:
            hint = _HINTS.get(code, "")
        body = _short(getattr(exc, "message", "") or str(exc))
        message = f"{where} answered HTTP {code}: {body}" + (f" ({hint})" if hint else "")
        return LLMError(message, retryable=retryable, retry_after_s=_retry_after(exc.response))
    if isinstance(exc, sdk.APITimeoutError):
        return LLMError(f"{where} did not answer in time", retryable=True)
    if isinstance(exc, sdk.APIConnectionError):
        return LLMError(f"cannot reach {where}: {_short(str(exc))}", retryable=True)
    if isinstance(exc, sdk.APIResponseValidationError | ValueError):
        return LLMError(f"{where} sent a malformed reply: {_short(str(exc))}", retryable=True)
    base = getattr(sdk, "OpenAIError", None) or getattr(sdk, "AnthropicError", None)
    if base is not None and isinstance(exc, base):
        return LLMError(f"{where}: {_short(str(exc))}")
    return None


def _retry_after(response: Any) -> float | None:
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            continue  # an HTTP date: fall back to the policy's backoff
    return None


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
