"""The model layer's first request imports only what it uses (issue 22; agent/llm_lean.py,
agent/llm_preload.py): no litellm proxy server, no tokenizer, collections back on after loading."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

FIRST_REQUEST = """
import asyncio, gc, sys
sys.path.insert(0, {root!r})
from tests.fake_anthropic import FakeAnthropic
from tests.fakellm import Reply
from agent.llm import LLM, prewarm

prewarm()
print("gc", gc.isenabled(), gc.get_freeze_count() > 100000)

async def main():
    with FakeAnthropic(Reply(text="hello")) as server:
        return await LLM(server.model, server.url, "sk-ant-test-000000").complete(
            [{{"role": "user", "content": [{{"type": "text", "text": "hi"}}]}}], [], lambda s: None, lambda *a: None)

reply = asyncio.run(main())
print("reply", reply.text, reply.prompt_tokens > 0)
print("proxy", "litellm.proxy" in sys.modules)
print("tokenizer", "litellm.litellm_core_utils.default_encoding" in sys.modules)
"""


def probe(code: str) -> dict[str, list[str]]:
    out = subprocess.run([sys.executable, "-c", code.format(root=str(ROOT))], capture_output=True, text=True,
                         timeout=180, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines()}


def test_an_anthropic_request_imports_no_proxy_server_and_loads_no_tokenizer() -> None:
    seen = probe(FIRST_REQUEST)
    assert seen["reply"] == ["hello", "True"]  # the answer and the provider's usage, as before
    assert seen["proxy"] == ["False"]  # litellm.proxy.openai_files_endpoints: ~0.3 s of a cold start
    assert seen["tokenizer"] == ["False"]  # tiktoken's cl100k_base: ~0.2 s
    assert seen["gc"] == ["True", "True"]  # collections on again, the library's objects frozen


SHORTCUTS_STILL_APPLY = """
import sys
sys.path.insert(0, {root!r})
import inspect
from agent.llm import prewarm
prewarm()
import litellm.main as main
print("update", getattr(main.update_messages_with_model_file_ids, "skips_plain_messages", False),
      "update_messages_with_model_file_ids(" in inspect.getsource(main.completion))
print("encoding", getattr(main._encoding_cache, "loads_on_first_use", False),
      "encoding=_get_encoding()" in inspect.getsource(main.completion))
# what litellm's own code does with the stand-in: count tokens with the real encoding
print("tokens", len(main._get_encoding().encode("hello world")) == 2,
      type(main._encoding_cache).__name__ != "_EncodingOnFirstUse")
# a message naming an uploaded file still goes through litellm's own function (it imports the proxy)
message = {{"role": "user", "content": [{{"type": "file", "file": {{"file_id": "file-abc"}}}}]}}
same = main.update_messages_with_model_file_ids(messages=[message], model_id=None, model_file_id_mapping={{}})
print("file", same[0]["content"][0]["file"]["file_id"] == "file-abc",
      "litellm.proxy.openai_files_endpoints.common_utils" in sys.modules)
"""


def test_the_first_request_shortcuts_still_apply_to_this_litellm() -> None:
    """Fails when a litellm upgrade renames or stops calling what agent/llm_lean.py replaces."""
    seen = probe(SHORTCUTS_STILL_APPLY)
    assert seen["update"] == ["True", "True"]
    assert seen["encoding"] == ["True", "True"]
    assert seen["tokens"] == ["True", "True"]
    assert seen["file"] == ["True", "True"]
