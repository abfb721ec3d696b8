"""`wt record` writes and prints no secret its rules name, wherever it hides: the upstream's URL
(query, userinfo: masked even without a rule) and command line, an object key, a number repeated
in a JSON text block, an error message; the summary says which rules matched nothing and
escapes what it quotes from the upstream."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx2
import mcp
import trio

from tests.processes import WT, read_until
from tests.record.hostile_http import hostile_http_upstream
from tests.record.hostile_upstream import ESCAPED_TOOL, KEY_SECRET, PIN
from tests.record.upstreams import wt_record_stdio
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record import RecordingProxy
from windtunnel.record.redact import parse_rule
from windtunnel.universe import load_universe

TOKEN = "sk-live-77aa88bb99cc00dd11ee22ff"
PASSWORD = "pa55-w0rd-9z"
HOSTILE = [sys.executable, str(Path(__file__).with_name("hostile_upstream.py"))]


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


async def _stop(process: trio.Process) -> str:
    """SIGINT, then the whole stderr; exit 0."""
    assert process.stderr is not None
    process.send_signal(signal.SIGINT)
    stderr = b""
    while chunk := await process.stderr.receive_some():
        stderr += chunk
    assert await process.wait() == 0, stderr
    return stderr.decode()


async def test_secrets_in_the_url_keys_and_json_text_reach_no_file_and_replay_still_matches(
    tmp_path: Path,
) -> None:
    """An HTTP upstream reached with a password and a `?token=`: the universe's source has the
    userinfo and every query value masked (the token by its rule's placeholder); a secret used
    as an object key and a PIN repeated in the JSON text block are replaced consistently, so the
    recording replays with no divergence; none of them is in the universe, the log or stderr."""
    out, log = tmp_path / "u.universe.json", tmp_path / "u.jsonl"
    with trio.fail_after(60):
        async with hostile_http_upstream() as (url, _):
            port = url.split(":")[2].split("/")[0]
            secret_url = url.replace("//", f"//ana:{PASSWORD}@") + f"?token={TOKEN}&format=json"
            process = await trio.lowlevel.open_process(
                [
                    *WT,
                    "record",
                    "-o",
                    str(out),
                    "--log",
                    str(log),
                    "--redact",
                    "key:token",
                    "--redact",
                    "regex:sk-live-[0-9a-f]+",
                    "--redact",
                    "key:pin",
                    "--redact",
                    "key:api_key",
                    secret_url,
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            assert process.stdout is not None
            proxy_url = (await read_until(process.stdout, b"\n")).decode().strip()
            async with mcp.Client(proxy_url, mode="legacy") as client:
                keyring = await client.call_tool("keyring", {})
                pin = await client.call_tool("pin", {})
            report = await _stop(process)
        assert keyring.structured_content == {KEY_SECRET: {"owner": "ana"}}
        assert pin.structured_content == {"pin": PIN, "card": "visa"}
        universe = load_universe(out)
        replay = RecordedMCPServer(out)
        async with trio.open_nursery() as nursery:
            replay_url = await replay.start(nursery)
            async with mcp.Client(replay_url, mode="legacy") as client:
                replayed = [
                    (await client.call_tool(name, {})).structured_content
                    for name in ("keyring", "pin")
                ]
            await replay.stop()
    # [REDACTED:1] is the password (always a secret), [REDACTED:2] the token (its key rule).
    assert universe.meta["upstream"]["source"] == (
        f"http://[REDACTED]@127.0.0.1:{port}/mcp?token=[REDACTED:2]&format=[REDACTED]"
    )
    keyring_result, pin_result = (r.result for r in universe.recordings)
    assert keyring_result["structuredContent"] == {"[REDACTED:3]": {"owner": "ana"}}
    assert json.loads(keyring_result["content"][0]["text"]) == {"[REDACTED:3]": {"owner": "ana"}}
    assert pin_result["structuredContent"] == {"pin": "[REDACTED:4]", "card": "visa"}
    assert json.loads(pin_result["content"][0]["text"]) == pin_result["structuredContent"]
    assert replayed == [keyring_result["structuredContent"], pin_result["structuredContent"]]
    assert [call.divergence for call in replay.call_log()] == [None, None]
    for text in (out.read_text(), log.read_text(), report):
        for secret in (TOKEN, PASSWORD, KEY_SECRET, str(PIN)):
            assert secret not in text
    assert (
        "upstream: redacted 4 distinct value(s): url:userinfo 1, key:token 1, "
        "regex:sk-live-[0-9a-f]+ 1, key:pin 1"
    ) in report
    assert "upstream: --redact key:api_key matched nothing" in report


async def test_a_url_credential_is_masked_without_a_rule_in_errors(tmp_path: Path) -> None:
    """`wt record --stdio` to an upstream that cannot be reached: the agent's error and the
    warning on stderr name the URL with its password and query value masked, and so does the
    universe written, though no rule was given."""
    out, errlog = tmp_path / "u.universe.json", tmp_path / "err"
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        port = closed.getsockname()[1]
        url = f"http://ana:{PASSWORD}@127.0.0.1:{port}/mcp?token={TOKEN}"
        params = wt_record_stdio(errlog, "-o", str(out), url)
        failed: list[BaseException] = []
        with trio.fail_after(30):
            try:
                async with mcp.Client(params, mode="legacy"):
                    pass
            except* mcp.MCPError as group:  # initialize fails, inside the client's task groups
                failed.extend(_leaves(group))
    shown = f"http://[REDACTED]@127.0.0.1:{port}/mcp?token=[REDACTED]"
    assert isinstance(failed[0], mcp.MCPError)
    assert failed[0].message.startswith(
        f"wt record: upstream 'upstream' cannot be reached at {shown}: "
    )
    report = errlog.read_text()
    assert f"cannot be reached at {shown}: " in report
    assert load_universe(out).meta["upstream"]["source"] == shown
    for text in (report, out.read_text()):
        assert PASSWORD not in text and TOKEN not in text


def test_a_secret_on_a_stdio_command_line_is_redacted() -> None:
    """`-- server --api-key KEY TOKEN=...`: key rules name options and assignments (`-` and `_`
    alike; an option followed by another option has no value); the source written says
    `[REDACTED:n]` where they stood."""
    command = [
        *HOSTILE,
        "--api-key",
        TOKEN,
        f"SESSION_TOKEN={KEY_SECRET}",
        "--session-token",
        "--verbose",
    ]
    rules = parse_rule("key:api_key")
    rules.extend(parse_rule("key:session-token"))
    proxy = RecordingProxy(command, name="hostile", redact=rules)
    source = proxy.recording().universe.meta["upstream"]["source"]
    assert source == " ".join(
        [
            *HOSTILE,
            "--api-key",
            "[REDACTED:1]",
            "SESSION_TOKEN=[REDACTED:2]",
            "--session-token",
            "--verbose",
        ]
    )
    assert proxy.redactor.summary() == {"key:api_key": 1, "key:session-token": 1}


async def test_the_summary_escapes_what_it_quotes_from_the_upstream(tmp_path: Path) -> None:
    """A tool name with OSC and BEL (in the sequence-mode list), an object key with an erase
    sequence (in a secret warning's JSON path) and a method with ESC (never answered: the
    upstream hangs past `--timeout`) are printed as visible escapes, never as raw control
    bytes."""
    out = tmp_path / "u.universe.json"
    hang = {"jsonrpc": "2.0", "id": 9, "method": "hang\x1b[31m", "params": {}}
    with trio.fail_after(60):
        async with hostile_http_upstream() as (url, _):
            process = await trio.lowlevel.open_process(
                [*WT, "record", "--timeout", "1", "-o", str(out), url],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            assert process.stdout is not None
            proxy_url = (await read_until(process.stdout, b"\n")).decode().strip()
            async with mcp.Client(proxy_url, mode="legacy") as client:
                await client.call_tool(ESCAPED_TOOL, {})
                await client.call_tool(ESCAPED_TOOL, {})
                await client.call_tool("contact", {})
            async with httpx2.AsyncClient() as raw:
                answer = await raw.post(
                    proxy_url,
                    json=hang,
                    headers={"accept": "application/json, text/event-stream"},
                )
            report = await _stop(process)
    assert "did not answer within 1 s" in answer.text
    for raw_byte in ("\x1b", "\x07"):
        assert raw_byte not in report
    assert "(sequence mode: ring\\u001b]0;owned\\u0007)" in report
    assert "note\\u001b[2J" in report
    assert "looks like an email address" in report
    assert "upstream: 1 request(s) never answered: hang\\u001b[31m" in report
