"""msgpack as the JS side speaks it (msgpackr's default encoder).

What matters for interop:
- JS `undefined` is the ext type 0 with the single byte 0x00. Decoded it means "absent": a map entry
  holding it is dropped, a list element becomes None. `UNDEFINED` encodes to it (a peer/join
  answer of `undefined` refuses a guest, which `null` would not express the same way).
- msgpackr writes integers outside the 32-bit range as float64 and reads 64-bit integers as
  BigInt, which JS code comparing numbers does not expect; we write such integers as float64 too.
- Byte strings are `bin`, text is `str`; maps may have non-string keys.
"""

from __future__ import annotations

from typing import Any

import msgpack


class DecodeError(ValueError):
    """The bytes are not a msgpack value we can read."""


class _Undefined:
    """JS `undefined`: a value that means "absent"."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False


UNDEFINED = _Undefined()
_UNDEFINED_EXT = msgpack.ExtType(0, b"\x00")
_INT32_MIN, _UINT32_MAX = -(2**31), 2**32 - 1
_FLOAT_EXACT = 2**53


def _default(value: Any) -> Any:
    if value is UNDEFINED:
        return _UNDEFINED_EXT
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (set, frozenset)):
        return list(value)
    raise TypeError(f"cannot encode {type(value).__name__} as msgpack")


def _js_numbers(value: Any) -> Any:
    """Integers msgpackr would write as float64, converted the same way (recursively)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if _INT32_MIN <= value <= _UINT32_MAX or abs(value) > _FLOAT_EXACT:
            return value
        return float(value)
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_js_numbers(v) for v in value]
    return value


def encode(value: Any) -> bytes:
    """msgpack bytes for value (dicts, lists, str, bytes, numbers, None, UNDEFINED)."""
    return msgpack.packb(_js_numbers(value), default=_default, use_bin_type=True)


def _ext_hook(code: int, data: bytes) -> Any:
    if code == 0:
        return UNDEFINED
    return msgpack.ExtType(code, data)


def _map_hook(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key, value in pairs:
        if value is UNDEFINED:
            continue
        if isinstance(key, (list, dict)):  # unhashable keys cannot come from msgpackr maps
            raise DecodeError("map key is a container")
        result[key] = value
    return result


def _list_hook(items: list[Any]) -> list[Any]:
    return [None if item is UNDEFINED else item for item in items]


def decode(data: bytes) -> Any:
    """The value in data (DecodeError for anything that is not exactly one msgpack value)."""
    try:
        value = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=False,
            ext_hook=_ext_hook,
            object_pairs_hook=_map_hook,
            list_hook=_list_hook,
            use_list=True,
        )
    except DecodeError:
        raise
    except Exception as exc:  # msgpack raises several unrelated types for bad input
        raise DecodeError(f"invalid msgpack: {type(exc).__name__}: {exc}") from None
    return None if value is UNDEFINED else value
