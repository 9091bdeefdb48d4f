"""Test doubles for the agents: scripted chat models, an HTTP server and a fake harness.

ScriptedChatModel(["reply 1", LLMError(...), ...])    in-process, implements ChatModel
ScriptedLLMServer([Reply(...), Fail(429), Stall(1.0, Reply(...)), Garbled(), ...])
                                                      real HTTP on 127.0.0.1, for the SDKs
needs_sdks("openai", ...)                             a module's skip mark without those SDKs
"""

from agent_doubles.fake import ScriptedChatModel
from agent_doubles.judge import ScriptedJudge, correct, rejected, wrong
from agent_doubles.sdks import needs_sdks
from agent_doubles.server import (
    Fail,
    Garbled,
    RecordedRequest,
    Redirect,
    Reply,
    ScriptedLLMServer,
    Stall,
)

__all__ = [
    "Fail",
    "Garbled",
    "RecordedRequest",
    "Redirect",
    "Reply",
    "ScriptedChatModel",
    "ScriptedJudge",
    "ScriptedLLMServer",
    "Stall",
    "correct",
    "needs_sdks",
    "rejected",
    "wrong",
]
