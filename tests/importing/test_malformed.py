"""Malformed traces of every format give one clear error naming the file and the position, and
exit code 2 from the CLI, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel.cli.main import main
from windtunnel.errors import TraceError
from windtunnel.importing import import_trace

CASES: list[tuple[str, str, bytes, str | None, str]] = [
    (
        "json-syntax",
        "t.json",
        b'{"messages": [\n  {"role": "user",\n   "content": "hi" oops}\n]}\n',
        None,
        " at line 3, column 20: not valid JSON: JSON is malformed: expected ',' or '}'",
    ),
    (
        "jsonl-syntax",
        "t.jsonl",
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n{"jsonrpc":"2.0","id":1,"result":{}\n',
        None,
        " at line 2: not valid JSON: Input data was truncated",
    ),
    ("not-utf8", "t.json", b"\xff\xfe{}", None, ": not UTF-8 text (bad byte at offset 0)"),
    ("empty", "t.json", b"  \n", None, ": the file is empty"),
    (
        "unknown-format",
        "t.json",
        b'{"hello": "world"}',
        None,
        ": cannot tell the trace format; pass --format (one of: contract-a, anthropic-messages, "
        "claude-code-jsonl, mcp-jsonrpc, openai-agents, openai-chat, openai-responses, otlp-json)",
    ),
    (
        "mcp-jsonrpc",
        "t.jsonl",
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n'
        b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"description":"no name"}]}}\n',
        None,
        " at line 2: result.tools[0].name: a tool without a name",
    ),
    (
        "mcp-jsonrpc-not-jsonrpc",
        "t.jsonl",
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n{"id":1,"result":{}}\n',
        "mcp-jsonrpc",
        ' at line 2: not a JSON-RPC 2.0 message (no "jsonrpc": "2.0")',
    ),
    (
        "anthropic",
        "t.json",
        b'{"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t1"}]}]}',
        None,
        " at $.messages[0].content[0].name: a tool call without a name",
    ),
    (
        "openai-chat",
        "t.json",
        b'{"messages": [{"role": "assistant", "tool_calls": [{"id": "c1", "function": 3}]}]}',
        None,
        " at $.messages[0].tool_calls[0].function: expected an object, got a number",
    ),
    (
        "anthropic-exchange-log",
        "t.jsonl",
        b'{"request": {"messages": []}, "response": {"type": "message", "content": []}}\n'
        b'{"messages": []}\n',
        "anthropic-messages",
        ' at line 2: $: expected a {"request", "response"} exchange',
    ),
    (
        "openai-chat-exchange-log",
        "t.json",
        b'[{"request": {"messages": 5}, "response": {"object": "chat.completion", "choices": []}}]',
        None,
        " at $[0].request.messages: expected an array, got a number",
    ),
    (
        "openai-responses",
        "t.json",
        b'{"object": "response", "output": [{"type": "mcp_call", "server_label": "kb"}]}',
        None,
        " at $.output[0].name: a tool call without a name",
    ),
    (
        "otlp-json",
        "t.json",
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [7]}]}]}',
        None,
        " at $.resourceSpans[0].scopeSpans[0].spans[0]: no readable span; expected an object, "
        "got a number",
    ),
    (
        "otlp-jsonl",
        "t.jsonl",
        b'{"resourceSpans": []}\n{"resourceSpans": {}}\n',
        None,
        " at line 2: $.resourceSpans: expected an array, got an object",
    ),
    (
        "claude-code",
        "t.jsonl",
        b'{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"}}\n'
        b'{"type":"assistant","sessionId":"s","message":"oops"}\n',
        None,
        " at line 2: message: expected an object, got a string",
    ),
    (
        "claude-code-forced",
        "t.json",
        b'{"messages": []}',
        "claude-code-jsonl",
        ': no "user" or "assistant" lines: not a Claude Code session transcript',
    ),
    (
        "contract-a",
        "t.wtin.json",
        b'{"contract": "wind-tunnel/contract-a", "version": "3.1"}',
        None,
        " at $.version: unsupported Contract A version '3.1'; this Wind Tunnel reads 1.x "
        "of this earlier shape, and writes windtunnel_interchange 1",
    ),
]


@pytest.mark.parametrize(
    ("file_name", "data", "forced", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_malformed_trace_raises_one_trace_error(
    file_name: str, data: bytes, forced: str | None, expected: str, tmp_path: Path
) -> None:
    """The error names the file and where in it the problem is."""
    path = tmp_path / file_name
    path.write_bytes(data)
    with pytest.raises(TraceError) as caught:
        import_trace(path, format=forced)
    assert str(caught.value) == f"{path}{expected}"


@pytest.mark.parametrize(
    ("file_name", "data", "forced", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_malformed_trace_exits_2_with_one_line(
    file_name: str,
    data: bytes,
    forced: str | None,
    expected: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The CLI prints one error line and exits 2; nothing is written."""
    path = tmp_path / file_name
    path.write_bytes(data)
    argv = ["import", str(path), "-o", str(tmp_path / "out")]
    if forced:
        argv += ["--format", forced]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"wt: error: {path}{expected}\n")
    assert not (tmp_path / "out").exists()


def test_missing_trace_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trace path that does not exist is an input error, not a traceback."""
    assert main(["import", str(tmp_path / "nope.json")]) == 2
    assert capsys.readouterr().err == (f"wt: error: {tmp_path / 'nope.json'}: no such file\n")
