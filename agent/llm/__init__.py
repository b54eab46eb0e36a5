"""The model layer: one `LLM` interface, the reply shapes the loop consumes, and the paths behind it.

    core.py          LLM.complete / check: preparing a request, retries, the path a model takes
    routing.py       the table: model string -> chat | anthropic | responses | litellm
    chat.py anthropic.py anthropic_body.py responses.py http.py request.py
                     the built-in streaming clients over httpx
    litellm_client.py litellm_errors.py requestloop.py preload.py
                     litellm, for every other provider, imported only when a model needs it
    facts.py         model facts from litellm's bundled table, read as JSON
    errors.py        what went wrong, in the same words on every path
    types.py         ModelReply, ToolCallRequest, Retryable
    reasoning.py usage.py toolschema.py toolcalls_text.py
                     thinking, cache marks and prices, tool names and ids, calls written in text

Importing this package imports neither litellm nor httpx.
"""

from agent.llm.core import LLM, configuration_problem, model_prices
from agent.llm.errors import LLMError
from agent.llm.types import ModelReply, Retryable, RetryHook, TextHook, ToolCallRequest

__all__ = ["LLM", "LLMError", "ModelReply", "Retryable", "RetryHook", "TextHook", "ToolCallRequest",
           "configuration_problem", "model_prices"]
