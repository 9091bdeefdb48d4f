"""The real openai and anthropic SDKs against a scripted server on 127.0.0.1."""

import pytest

from agent_doubles import (
    Fail,
    Garbled,
    Redirect,
    Reply,
    ScriptedLLMServer,
    Stall,
    needs_sdks,
)
from kernelwright.agents.llm import ChatMessage, LLMError
from kernelwright.agents.providers import LLMSettings, make_chat_model
from kernelwright.agents.retry import RetryPolicy
from kernelwright.agents.spec import PLACEHOLDER_KEY
from kernelwright.errors import ConfigError

pytestmark = needs_sdks("openai", "anthropic")

FAST = LLMSettings(timeout_s=5.0, retry=RetryPolicy(attempts=4, initial_s=0.01, max_s=0.05))
CONVERSATION = [ChatMessage("system", "rules"), ChatMessage("user", "write it")]


def model_for(server, spec="openai:test-model", settings=FAST, environ=None, waits=None):
    sleep = waits.append if waits is not None else (lambda s: None)
    return make_chat_model(spec, server.url, settings=settings, environ=environ or {}, sleep=sleep)


def test_openai_round_trip_and_usage():
    with ScriptedLLMServer([Reply("hello", input_tokens=11, output_tokens=7)]) as server:
        completion = model_for(server).complete(CONVERSATION)
    assert completion.text == "hello"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (11, 7)
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "test-model"
    assert [m["role"] for m in request.body["messages"]] == ["system", "user"]


def test_openai_survives_429_500_and_garbled_json():
    script = [Fail(429, retry_after=0.02), Fail(500), Garbled(), Reply("done")]
    waits: list[float] = []
    with ScriptedLLMServer(script) as server:
        completion = model_for(server, waits=waits).complete(CONVERSATION)
    assert completion.text == "done" and completion.attempts == 4
    assert len(server.requests) == 4
    assert waits[0] == pytest.approx(0.02)  # Retry-After honoured


def test_openai_survives_a_timeout():
    settings = LLMSettings(timeout_s=0.3, retry=FAST.retry)
    with ScriptedLLMServer([Stall(1.0, Reply("late")), Reply("on time")]) as server:
        completion = model_for(server, settings=settings).complete(CONVERSATION)
    assert completion.text == "on time" and completion.attempts == 2


def test_persistent_failure_is_an_llm_error_after_bounded_attempts():
    with (
        ScriptedLLMServer([Fail(503)] * 10) as server,
        pytest.raises(LLMError, match=r"HTTP 503.*after 4 attempt"),
    ):
        model_for(server).complete(CONVERSATION)
    assert len(server.requests) == 4


def test_client_errors_are_not_retried():
    with (
        ScriptedLLMServer([Fail(401), Reply("never")]) as server,
        pytest.raises(LLMError, match="401"),
    ):
        model_for(server).complete(CONVERSATION)
    assert len(server.requests) == 1


def test_the_key_goes_only_where_it_is_configured():
    secret = "sk-test-secret-123"
    with ScriptedLLMServer([Reply("a")]) as server:
        model_for(server, environ={"OPENAI_API_KEY": secret}).complete(CONVERSATION)
    assert server.requests[0].carries(secret)
    with ScriptedLLMServer([Reply("a")]) as server:
        model_for(server, environ={}).complete(CONVERSATION)
    assert server.requests[0].carries(PLACEHOLDER_KEY)
    assert not server.requests[0].carries(secret)


def test_redirects_are_not_followed_so_the_key_stays_put():
    secret = "sk-test-secret-456"
    with ScriptedLLMServer([Reply("stolen")]) as elsewhere:
        target = elsewhere.url + "/chat/completions"
        with (
            ScriptedLLMServer([Redirect(target)]) as server,
            pytest.raises(LLMError, match="redirect"),
        ):
            model_for(server, environ={"OPENAI_API_KEY": secret}).complete(CONVERSATION)
    assert elsewhere.requests == []


def test_official_endpoint_is_used_without_base_url(monkeypatch):
    with ScriptedLLMServer([Reply("should not be reached")]) as server:
        env = {"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": server.url}
        model = make_chat_model("openai:gpt-4o", None, environ=env)
        assert model.inner.base_url == "https://api.openai.com/v1"
    assert server.requests == []


def test_anthropic_round_trip_with_system_prompt_and_retries():
    secret = "sk-ant-test-789"
    script = [Fail(529), Garbled(), Reply("bonjour", input_tokens=5, output_tokens=3)]
    with ScriptedLLMServer(script, api="anthropic") as server:
        model = model_for(
            server, spec="anthropic:claude-test", environ={"ANTHROPIC_API_KEY": secret}
        )
        completion = model.complete(CONVERSATION)
    assert completion.text == "bonjour" and completion.attempts == 3
    assert completion.usage.output_tokens == 3
    request = server.requests[-1]
    assert request.path == "/v1/messages"
    assert request.body["system"] == "rules"
    assert request.body["messages"] == [{"role": "user", "content": "write it"}]
    assert request.body["max_tokens"] > 0
    assert request.carries(secret)


def test_anthropic_needs_its_key_without_base_url():
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        make_chat_model("anthropic:claude-test", None, environ={"OPENAI_API_KEY": "sk"})


def test_a_missing_sdk_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ConfigError, match=r"kernelwright\[agents\]"):
        make_chat_model("openai:m", "http://127.0.0.1:9/v1", environ={})
