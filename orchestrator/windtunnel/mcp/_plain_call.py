"""What makes a JSON-RPC line a plain `tools/call`, decided without the MCP SDK.

Shared by the fast paths that answer with the SDK loaded (`_fast_path`) and the stdio start-up
that answers before it is (`_stdio_lite`): decoding a line as the SDK's parser would read it
(or declining), and recognising a plain call of a declared tool.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, NamedTuple

import msgspec

from ..canonical import nested_deeper_than

__all__ = ["SDK_MAX_DEPTH", "PlainCall", "decode_message", "plain_call", "remember"]

SDK_MAX_DEPTH = 200
"""The deepest nesting of non-empty arrays and objects the SDK's JSON parser (pydantic-core's
jiter) reads in a message (an empty one adds no level); one level deeper is a parse error, on
either transport. A message nested deeper is not a plain call: the SDK answers it
(`tests/mcp/test_depth.py` holds the two to the same answers at every depth). The fast
paths count empty ones too (`nested_deeper_than`), so at the very edge they may hand the SDK a
message it still reads: declining is always safe."""

_MEMO_ENTRIES = 1024


class PlainCall(NamedTuple):
    """A `tools/call` request whose shape needs nothing from the SDK but its handler."""

    id: int | str
    name: str
    args: dict[str, Any]
    params: dict[str, Any]


def plain_call(message: Any, tools: Collection[str]) -> PlainCall | None:
    """The call in a decoded JSON-RPC message, if it is a plain `tools/call` of one of `tools`:
    exactly the four JSON-RPC keys, an integer or string id, and params with `name`,
    `arguments` (an object, or absent) and `_meta` (an object, or absent), nothing else."""
    if not isinstance(message, dict) or message.keys() != {"jsonrpc", "id", "method", "params"}:
        return None
    request_id = message["id"]
    params = message["params"]
    if (
        message["jsonrpc"] != "2.0"
        or message["method"] != "tools/call"
        or type(request_id) not in (int, str)  # never a bool, which JSON-RPC ids are not
        or not isinstance(params, dict)
        or not params.keys() <= {"name", "arguments", "_meta"}
    ):
        return None
    name = params.get("name")
    args = params.get("arguments")
    if not isinstance(name, str) or name not in tools:
        return None
    if args is None:
        args = {}
    if not isinstance(args, dict) or not isinstance(params.get("_meta", {}), dict):
        return None
    return PlainCall(request_id, name, args, params)


def decode_message(raw: bytes | str) -> Any:
    """The JSON value of a request body or line, or None when it is not JSON or nested past
    `SDK_MAX_DEPTH`: either way a message only the SDK answers."""
    try:
        message = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # RecursionError: past msgspec's own limit
        return None
    # Nesting d levels takes 2d bytes, and as many brackets: most calls are shorter than the
    # limit's 400 bytes, and the walk is for the rare ones with more brackets than levels.
    deep = len(raw) > 2 * SDK_MAX_DEPTH and _brackets(raw) > SDK_MAX_DEPTH
    if deep and nested_deeper_than(message, SDK_MAX_DEPTH):
        return None
    return message


def _brackets(raw: bytes | str) -> int:
    if isinstance(raw, str):
        return raw.count("[") + raw.count("{")
    return raw.count(b"[") + raw.count(b"{")


def remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) >= _MEMO_ENTRIES:
        memo.clear()  # a bound, not a cache policy: the hot entries come straight back
    memo[key] = value
