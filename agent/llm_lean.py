"""What litellm's first request imports that our requests never use (issue 22: first answer speed).

Version-guarded like agent/llm_requests.py (the litellm range of agent/llm_usage.py); each falls
back to litellm's own code for anything it was not checked against, and
tests/core/test_llm_lean.py fails when an upgrade stops one applying.
"""

from __future__ import annotations

from typing import Any

from agent.llm_usage import _litellm_checked


def no_proxy_import_without_file_ids() -> None:
    """Let a request whose messages name no uploaded file skip importing litellm's proxy server.

    Every completion passes its messages through `update_messages_with_model_file_ids`, which
    imports `litellm.proxy.openai_files_endpoints` (the proxy's types, about 0.3 s of a cold
    start) before looking for `{"type": "file", "file": {"file_id": ...}}` parts. Messages with
    no such part come back unchanged; any other goes through litellm's own function.
    """
    if not _litellm_checked():
        return
    import litellm.main as main

    real = main.update_messages_with_model_file_ids
    if getattr(real, "skips_plain_messages", False):
        return

    def update(messages: list[Any], model_id: Any, model_file_id_mapping: Any) -> list[Any]:
        if not any(_names_a_file(message) for message in messages):
            return messages
        return real(messages=messages, model_id=model_id, model_file_id_mapping=model_file_id_mapping)

    update.skips_plain_messages = True  # type: ignore[attr-defined]
    main.update_messages_with_model_file_ids = update


def _names_a_file(message: Any) -> bool:
    if not isinstance(message, dict):
        return True  # not ours: litellm decides
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return False
    return any(not isinstance(part, dict) or part.get("type") == "file" for part in content)


class _EncodingOnFirstUse:
    """Stands in for litellm's default tiktoken encoding until something reads it."""

    loads_on_first_use = True

    def __getattr__(self, name: str) -> Any:
        import litellm.main as main

        main._encoding_cache = None
        return getattr(main._get_encoding(), name)  # litellm's own loading, cached from then on


def encoding_on_first_use() -> None:
    """Load litellm's default tokenizer when a request uses it, not when it starts.

    Provider calls are handed `encoding=_get_encoding()` "for calculating input/output tokens",
    which loads tiktoken's cl100k_base (about 0.2 s) on the first request; a provider that
    reports its usage (every one we test) never touches it.
    """
    if not _litellm_checked():
        return
    import litellm.main as main

    if getattr(main, "_encoding_cache", "missing") is None:
        main._encoding_cache = _EncodingOnFirstUse()
