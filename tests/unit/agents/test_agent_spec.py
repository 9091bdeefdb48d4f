import pytest

from kernelwright.agents.spec import (
    OFFICIAL_BASE_URLS,
    PLACEHOLDER_KEY,
    LLMSpec,
    parse_spec,
    resolve_endpoint,
)
from kernelwright.errors import ConfigError


def test_parse_spec_keeps_colons_in_the_model_name():
    assert parse_spec("openai:gpt-4o") == LLMSpec("openai", "gpt-4o")
    assert parse_spec("Anthropic:claude-sonnet-4-5") == LLMSpec("anthropic", "claude-sonnet-4-5")
    assert parse_spec("openai:qwen2.5-coder:32b").model == "qwen2.5-coder:32b"
    assert str(parse_spec("openai:m")) == "openai:m"


@pytest.mark.parametrize("text", ["gpt-4o", "openai:", "openai: ", ":gpt"])
def test_parse_spec_needs_provider_and_model(text):
    with pytest.raises(ConfigError, match="PROVIDER:MODEL"):
        parse_spec(text)


def test_parse_spec_names_the_known_providers():
    with pytest.raises(ConfigError, match="openai, anthropic"):
        parse_spec("gemini:pro")


def test_official_endpoint_needs_the_key():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        resolve_endpoint(parse_spec("openai:gpt-4o"), None, {})
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        resolve_endpoint(parse_spec("anthropic:claude"), None, {"OPENAI_API_KEY": "sk"})


def test_official_endpoint_ignores_base_url_variables():
    env = {"OPENAI_API_KEY": "sk-real", "OPENAI_BASE_URL": "http://evil.example/v1"}
    endpoint = resolve_endpoint(parse_spec("openai:gpt-4o"), None, env)
    assert endpoint.base_url == OFFICIAL_BASE_URLS["openai"]
    assert endpoint.api_key == "sk-real"
    assert "sk-real" not in repr(endpoint)


def test_self_served_endpoint_key_order():
    spec = parse_spec("openai:qwen")
    url = "http://127.0.0.1:8000/v1/"
    assert resolve_endpoint(spec, url, {}).api_key == PLACEHOLDER_KEY
    assert resolve_endpoint(spec, url, {}).base_url == "http://127.0.0.1:8000/v1"
    assert resolve_endpoint(spec, url, {"OPENAI_API_KEY": "a"}).api_key == "a"
    both = {"OPENAI_API_KEY": "a", "KERNELWRIGHT_LLM_API_KEY": "b"}
    assert resolve_endpoint(spec, url, both).key_source == "KERNELWRIGHT_LLM_API_KEY"


@pytest.mark.parametrize("url", ["localhost:8000", "ftp://h/v1", "http://"])
def test_base_url_must_be_http(url):
    with pytest.raises(ConfigError, match="--llm-base-url"):
        resolve_endpoint(parse_spec("openai:m"), url, {})
