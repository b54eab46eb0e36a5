"""What the session asks litellm's model table before a request: whether the model routes at all,
its context window, whether it takes tools and a reasoning effort.

Until this process's litellm is loaded, a warm session host that has it reads them (with the same
code and environment: agent/llm_borrow.py), so that a first prompt need not wait seconds for the
import; once it is loaded, each caller reads its fact here as before.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from typing import Any, cast

OLLAMA = ("ollama", "ollama_chat")


@dataclass(frozen=True)
class ModelFacts:
    problem: str | None  # why litellm cannot route the model at all (an unknown provider); None: it can
    window: int | None  # input tokens the model takes (None: litellm does not know)
    without_tools: bool  # litellm positively knows the model lacks tool calling
    takes_effort: bool  # litellm sends it a reasoning effort

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)


_lent: dict[str, ModelFacts] = {}
_asking: dict[str, asyncio.Future[ModelFacts | None]] = {}  # one question to the host per model at a time


async def lent_facts(model: str, borrow: bool = True) -> ModelFacts | None:
    """The model's facts read by a warm session host while litellm still loads here; None when
    it is loaded here (read them here) or no host lends them (wait for the load). Callers that
    ask at once (the session's window, the app's model check) share one question to the host."""
    from agent.llm import is_loaded

    if not borrow or is_loaded():
        return None
    if model in _lent:
        return _lent[model]
    return await asyncio.shield(_question(model))


def ask_early(model: str, borrow: bool = True) -> None:
    """Start asking the host for `model`'s facts now (the app, as soon as its config is read), so
    that the first prompt finds them answered."""
    from agent.llm import is_loaded

    if borrow and model and not is_loaded() and model not in _lent:
        _question(model)


def _question(model: str) -> asyncio.Future[ModelFacts | None]:
    loop = asyncio.get_running_loop()
    asking = _asking.get(model)
    if asking is None or asking.get_loop() is not loop or asking.done():
        # In a thread: the question is sent at once, not when the event loop next gets a turn.
        asking = _asking[model] = loop.run_in_executor(None, _ask_host, model)
    return asking


def _ask_host(model: str) -> ModelFacts | None:
    from agent.llm_borrow import borrowed_facts

    lent = borrowed_facts(model)
    if lent is not None:
        _lent[model] = lent
    return cast("ModelFacts | None", lent)


def read(litellm: Any, model: str) -> ModelFacts:
    """The facts, from a loaded litellm."""
    from agent.llm_errors import unknown_provider
    from agent.reasoning import takes_effort

    try:
        litellm.get_llm_provider(model)
    except Exception:  # noqa: BLE001 - litellm raises BadRequestError, or ValueError for odd strings
        return ModelFacts(unknown_provider(model), None, False, False)
    try:
        info = litellm.get_model_info(model)
        window = info.get("max_input_tokens") or info.get("max_tokens")
    except Exception:  # noqa: BLE001 - unknown models: no automatic compaction
        window = None
    return ModelFacts(None, window, known_without_tools(litellm, model), takes_effort(model))


def known_without_tools(litellm: Any, model: str) -> bool:
    """Only a model litellm positively knows to lack tool calling gets the text protocol."""
    provider, _, name = model.partition("/")
    if provider in OLLAMA:
        # litellm's model info for Ollama asks a local server and answers for every model (its
        # function-calling flag is then False), yet /api/chat takes native tools: only an explicit
        # "no" in litellm's own table counts
        entries = (litellm.model_cost.get(f"ollama/{key}") or {} for key in (name, name.split(":")[0]))
        return any(entry.get("supports_function_calling") is False for entry in entries)
    try:
        litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - unknown model: assume native tool calls
        return False
    return not litellm.supports_function_calling(model)
