"""A scripted LLM server on 127.0.0.1 that speaks the OpenAI chat-completions API and the
Anthropic Messages API, so tests drive the real SDKs over real HTTP with no network.

    with ScriptedLLMServer([Fail(429), Reply("```python ...```")]) as server:
        model = make_chat_model("openai:m", server.url)
        ...
        server.requests      # every request: path, headers (lower-case names), JSON body

Each request consumes one step; when the script runs out (or after ``max_requests``) the server
answers HTTP 400, which no client retries, so a test can never loop forever.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Reply:
    """A successful completion with ``text``."""

    text: str
    input_tokens: int = 120
    output_tokens: int = 80


@dataclass(frozen=True, slots=True)
class Fail:
    """An HTTP error (429, 500...), optionally with ``Retry-After`` seconds."""

    status: int
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class Stall:
    """Wait ``seconds`` (longer than the client's timeout), then send ``then``."""

    seconds: float
    then: Reply


@dataclass(frozen=True, slots=True)
class Garbled:
    """HTTP 200 with a body that is not JSON."""

    body: str = '{"choices": [ this is not json'


@dataclass(frozen=True, slots=True)
class Redirect:
    """HTTP 307 to ``location``."""

    location: str


Step = Reply | Fail | Stall | Garbled | Redirect


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    def carries(self, secret: str) -> bool:
        """Whether ``secret`` appears in any header (a key sent as Bearer or x-api-key)."""
        return any(secret in value for value in self.headers.values())


class ScriptedLLMServer:
    """A threaded HTTP server playing ``script``; a context manager (see module docstring)."""

    def __init__(
        self,
        script: Iterable[Step],
        *,
        api: Literal["openai", "anthropic"] = "openai",
        max_requests: int = 50,
    ) -> None:
        self.api = api
        self.script = list(script)
        self.max_requests = max_requests
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.block_on_close = False  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,))
        self._thread.daemon = True

    @property
    def url(self) -> str:
        """The base URL to give the SDK (``.../v1`` for OpenAI; the root for Anthropic)."""
        root = f"http://127.0.0.1:{self._server.server_address[1]}"
        return f"{root}/v1" if self.api == "openai" else root

    def __enter__(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, request: RecordedRequest) -> Step | None:
        with self._lock:
            self.requests.append(request)
            if not self.script or len(self.requests) > self.max_requests:
                return None
            return self.script.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                step = server._next(RecordedRequest("POST", self.path, headers, body))
                model = body.get("model", "scripted") if isinstance(body, dict) else "scripted"
                try:
                    self._answer(step, model)
                except OSError:
                    pass  # the client gave up (a timeout test): nothing to answer

            def _answer(self, step: Step | None, model: str) -> None:
                if step is None:
                    self._send(400, {"error": {"message": "the script is exhausted"}})
                elif isinstance(step, Stall):
                    time.sleep(step.seconds)
                    self._answer(step.then, model)
                elif isinstance(step, Reply):
                    self._send(200, server._payload(step, model))
                elif isinstance(step, Fail):
                    extra = (
                        {} if step.retry_after is None else {"retry-after": f"{step.retry_after}"}
                    )
                    self._send(
                        step.status, {"error": {"message": f"scripted {step.status}"}}, extra
                    )
                elif isinstance(step, Garbled):
                    self._send_raw(200, step.body.encode())
                else:
                    self._send_raw(307, b"", {"location": step.location})

            def _send(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
                self._send_raw(status, json.dumps(payload).encode(), extra)

            def _send_raw(
                self, status: int, data: bytes, extra: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def _payload(self, reply: Reply, model: str) -> dict[str, Any]:
        n = len(self.requests)
        if self.api == "anthropic":
            return {
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": reply.text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
            }
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": reply.input_tokens,
                "completion_tokens": reply.output_tokens,
                "total_tokens": reply.input_tokens + reply.output_tokens,
            },
        }
