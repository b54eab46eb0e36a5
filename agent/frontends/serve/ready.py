"""The model layer loading behind a listening `serve` (issue 22: ready within 0.5 s of launch).

A model on the litellm path needs litellm, seconds to import; the server listens meanwhile (a
model the built-in clients serve needs nothing: the check answers at once). A turn run in this process that arrives earlier waits for it (one run in the session
host does not: the host has its own, agent/frontends/serve/sessions.py InHost); a model litellm cannot
route is found once it has loaded: each turn is refused with the reason (503) and the server
stops with exit code 2, as it did when the check ran before listening.
"""

from __future__ import annotations

import asyncio

from agent.frontends.serve.sessions import Unavailable


class ModelLayer:
    def __init__(self, model: str, api_base: str | None = None, path: str | None = None) -> None:
        self._go = asyncio.Event()  # set by `start`, once the server listens: till then the load
        self._check = asyncio.ensure_future(self._checked(model, api_base, path))  # would compete with the start

    async def _checked(self, model: str, api_base: str | None, path: str | None) -> str | None:
        from agent.llm import configuration_problem

        await self._go.wait()
        return await configuration_problem(model, api_base, path)

    def start(self) -> None:
        """Start loading litellm (in its thread) and checking the model."""
        self._go.set()

    async def problem(self) -> str | None:
        """Why the configured model cannot be used (None: it can), once litellm has loaded."""
        return await asyncio.shield(self._check)

    async def ready(self) -> None:
        """Waits for the model layer; Unavailable when the model cannot be routed."""
        problem = await self.problem()
        if problem is not None:
            raise Unavailable(problem)

    async def until_problem_or(self, stop: asyncio.Event) -> str | None:
        """Waits for `stop`; returns the model's problem at once if it has one."""
        stopping = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait([self._check, stopping], return_when=asyncio.FIRST_COMPLETED)
            problem = self._found()
            if problem is None:
                await stopping
            return problem
        finally:
            stopping.cancel()

    def _found(self) -> str | None:
        check = self._check
        if check.done() and not check.cancelled() and check.exception() is None:
            return check.result()
        return None

    def close(self) -> None:
        self._check.cancel()
