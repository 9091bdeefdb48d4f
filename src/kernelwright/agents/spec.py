"""Which model, where, with which key: ``--llm PROVIDER:MODEL [--llm-base-url URL]``.

Key policy (a key only ever travels to the URL the user named or to the provider's own API):

    no base URL     -> the provider's official endpoint; the key from OPENAI_API_KEY or
                       ANTHROPIC_API_KEY, a ConfigError when it is missing. OPENAI_BASE_URL and
                       ANTHROPIC_BASE_URL are ignored on purpose.
    --llm-base-url  -> that endpoint; the key from KERNELWRIGHT_LLM_API_KEY, else the provider's
                       variable, else a placeholder (self-served vLLM, SGLang, llama.cpp and
                       Ollama accept any key unless started with one).

Redirects are never followed (see the providers), so no key reaches a host by redirection.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from kernelwright.errors import ConfigError

Provider = Literal["openai", "anthropic"]
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")

OFFICIAL_BASE_URLS: Mapping[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
KEY_VARIABLES: Mapping[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
SELF_SERVED_KEY_VARIABLE = "KERNELWRIGHT_LLM_API_KEY"
PLACEHOLDER_KEY = "kernelwright-no-key"


@dataclass(frozen=True, slots=True)
class LLMSpec:
    """A parsed ``PROVIDER:MODEL`` (the model may itself contain colons: ``qwen2.5-coder:32b``)."""

    provider: Provider
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where requests go and the key they carry; ``key_source`` names where the key came from."""

    base_url: str
    api_key: str
    key_source: str

    def __repr__(self) -> str:  # never print a key
        return f"Endpoint(base_url={self.base_url!r}, key_source={self.key_source!r})"


def parse_spec(text: str) -> LLMSpec:
    """``"openai:gpt-4o"`` -> ``LLMSpec("openai", "gpt-4o")``.

    Raises:
        ConfigError: no provider prefix, an unknown provider, or an empty model name.
    """
    provider, sep, model = text.strip().partition(":")
    provider = provider.lower()
    if not sep or not provider or not model.strip():
        raise ConfigError(
            f"--llm {text!r}: expected PROVIDER:MODEL, e.g. openai:gpt-4o or "
            "anthropic:claude-sonnet-4-5"
        )
    if provider not in PROVIDERS:
        raise ConfigError(
            f"--llm {text!r}: unknown provider {provider!r}; use one of {', '.join(PROVIDERS)} "
            "(self-served models speak the OpenAI API: openai:MODEL --llm-base-url URL)"
        )
    return LLMSpec(provider, model.strip())  # type: ignore[arg-type]


def resolve_endpoint(
    spec: LLMSpec, base_url: str | None, environ: Mapping[str, str] | None = None
) -> Endpoint:
    """Apply the key policy above.

    Raises:
        ConfigError: a malformed base URL, or no key for the provider's official endpoint.
    """
    env = os.environ if environ is None else environ
    key_var = KEY_VARIABLES[spec.provider]
    if base_url is None:
        official = OFFICIAL_BASE_URLS[spec.provider]
        key = env.get(key_var, "").strip()
        if not key:
            raise ConfigError(
                f"--llm {spec} needs {key_var} set to your {spec.provider} API key "
                f"(requests go to {official}); for a self-served model pass --llm-base-url"
            )
        return Endpoint(official, key, key_var)
    url = base_url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"--llm-base-url {base_url!r}: expected an http(s) URL such as http://localhost:8000/v1"
        )
    for var in (SELF_SERVED_KEY_VARIABLE, key_var):
        key = env.get(var, "").strip()
        if key:
            return Endpoint(url, key, var)
    return Endpoint(url, PLACEHOLDER_KEY, "placeholder")
