"""The ACP SDK, imported without its models' attribute docstrings (issue 22: `acp` ready sooner).

The SDK's 270 generated pydantic models ask for `use_attribute_docstrings`, which makes pydantic
read and parse the schema module's source again for every class: about a third of the SDK's
import, on the path to answering `initialize`. Those docstrings only become descriptions in a
JSON schema, which the protocol never sends, so the models are built without them. The setting
is changed for the SDK's own import only and restored at once (our models keep theirs).
Imported first by agent/frontends/acp/__init__.py, before anything imports `acp`.
"""

from __future__ import annotations

import sys
from typing import Any


def _load() -> None:
    if "acp" in sys.modules:
        return
    from pydantic._internal import _config

    real = _config.ConfigWrapper.__dict__.get("for_model")
    if not isinstance(real, classmethod):  # another pydantic: import as it is
        import acp  # noqa: F401
        return

    def for_model(cls: Any, *args: Any, **kwargs: Any) -> Any:
        wrapper = real.__func__(cls, *args, **kwargs)
        if wrapper.config_dict.get("use_attribute_docstrings") and _from_the_sdk():
            wrapper.config_dict["use_attribute_docstrings"] = False
        return wrapper

    _config.ConfigWrapper.for_model = classmethod(for_model)  # type: ignore[method-assign,assignment]
    try:
        import acp  # noqa: F401
        import acp.schema  # noqa: F401
    finally:
        _config.ConfigWrapper.for_model = real  # type: ignore[method-assign]


def _from_the_sdk() -> bool:
    """The class being built is defined in one of the SDK's modules (not another thread's import)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name == "acp" or name.startswith("acp."):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


_load()
