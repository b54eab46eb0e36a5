"""The host's side of a borrowed model request (agent/llm_borrow.py is the client's).

    lender = Lender()
    lender.start(client, request)   # answers at once: taken, or refused and why
    ...                             # then streams: model_text / model_reasoning lines, and
                                    # model_done {"reply": ...} or model_failed {"message", "kind",
                                    # "retryable", "retry_after"}
    lender.forget(client)           # its connection ended: its requests are cancelled

A request is made only as the client would have made it itself: with this process's model
library loaded (else the client loads its own), the same code and the same variables that library
reads (agent/llm_wire.py). It runs on the host's model-request thread like a session's.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from agent.host.live import Client
from agent.llm_wire import CALL_FIELDS, code_stamp, env_difference, reply_to_wire
from agent.host.wire import ModelRequest, encode, refusal, reply
from agent.secrets import redact


class Lender:
    def __init__(self) -> None:
        self.code = code_stamp()  # the code this host runs, stamped as it starts
        self.lent = 0  # requests made for clients (the `list` reply shows it)
        self.facts_read = 0  # questions of model facts answered (the `list` reply shows it too)
        self._tasks: dict[int, set[asyncio.Task[None]]] = {}

    def refused(self, request: ModelRequest) -> str | None:
        """Why this host would not make the request as the client would (None: it would)."""
        from agent.llm import is_loaded

        if request.code != self.code:
            return "the session host runs other code (started before an upgrade or an edit)"
        if not is_loaded():
            return "the session host is still loading its model library"
        if request.call.get("pid") == os.getpid():
            return "a request from the session host itself"
        differ = env_difference(request.env)
        if differ:
            return f"the session host's environment differs in {', '.join(differ[:8])}"
        unknown = set(request.call) - set(CALL_FIELDS) - {"pid"}
        if unknown or not request.call.get("model") and not request.probe:
            return f"model: bad call fields {sorted(unknown) or ['model']}"
        return None

    def start(self, client: Client, request: ModelRequest) -> bytes:
        why = self.refused(request)
        if why is not None:
            return refusal(request.id, why)
        if request.probe:
            return reply(request.id, lending=True)
        if request.facts:
            work = self._facts(client, request)
        else:
            client.send(reply(request.id, lending=True))
            work = self._lend(client, request)
        task = asyncio.create_task(work, name=f"lend-{client.name}-{request.id}")
        tasks = self._tasks.setdefault(id(client), set())
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return b""

    def forget(self, client: Client) -> None:
        for task in self._tasks.pop(id(client), set()):
            task.cancel()

    async def _facts(self, client: Client, request: ModelRequest) -> None:
        from agent.llm import load_litellm
        from agent.modelfacts import read

        try:
            facts = await asyncio.to_thread(read, load_litellm(), str(request.call["model"]))
        except Exception as exc:  # noqa: BLE001 - the client reads them itself then
            client.send(refusal(request.id, f"the session host could not read the model's facts: "
                                            f"{type(exc).__name__}: {redact(str(exc))}".splitlines()[0]))
            return
        self.facts_read += 1
        client.send(reply(request.id, facts=facts.to_wire()))

    async def _lend(self, client: Client, request: ModelRequest) -> None:
        from agent.llm import LLM, LLMError, Retryable, on_caller_loop, request_loop

        call = {k: v for k, v in request.call.items() if k in CALL_FIELDS}
        max_tokens = call.pop("max_tokens", None)
        llm = LLM(**call, max_retries=0)
        llm.max_tokens = max_tokens

        def line(kind: str) -> Any:
            return on_caller_loop(lambda text: client.send(encode({"type": kind, "id": request.id, "text": text})))

        try:
            done = await request_loop().run(llm.attempt_once(request.messages, request.tools, line("model_text"),
                                                             line("model_reasoning")))
            await asyncio.sleep(0)  # the text handed over before the reply goes first
        except Retryable as exc:
            client.send(_failed(request.id, exc.why, exc.kind, True, exc.retry_after))
        except LLMError as exc:
            client.send(_failed(request.id, str(exc), exc.kind, False, None))
        except Exception as exc:  # noqa: BLE001 - the client gets an answer; the host serves the others on
            why = f"the session host failed making the request: {type(exc).__name__}: {redact(str(exc))}"
            client.send(_failed(request.id, why.splitlines()[0], "request", False, None))
        else:
            self.lent += 1
            client.send(encode({"type": "model_done", "id": request.id, "reply": reply_to_wire(done)}))


def _failed(request_id: int, message: str, kind: str, retryable: bool, retry_after: float | None) -> bytes:
    return encode({"type": "model_failed", "id": request_id, "message": message, "kind": kind,
                   "retryable": retryable, "retry_after": retry_after})
