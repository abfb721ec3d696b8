"""The fault matrix: every input kind x every fault, through the real `wt` process.

Input kinds: a universe (`wt run`, `wt validate`), a pack (`wt run`, `wt plan`), a trace
(`wt import`), an MCP request (`wt serve`) and a shard directory (`wt merge`). Faults: an input
that blocks (a FIFO nobody writes, a client that stops mid-body), one that is huge (a 2 GiB
sparse file, a 5 MiB body), deep (nesting past every stack), truncated, hostile names (`../`,
`/`, NUL, 300 characters), terminal control bytes, and a signal mid-way. Every cell asserts the
same four things: a clear error (one line naming the input, or the documented status), nothing
finished lost, no traceback, and the process ends (nothing hangs; signals stop it).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import signal
import socket
import subprocess
import time
import tomllib
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx2
import pytest
import trio

from tests.processes import WT, read_until
from tests.reliability.leaks import processes_with
from tests.reliability.packs import (
    SPARSE_SIZE,
    fifo,
    nested,
    sparse,
    universe_doc,
    write_pack,
    write_universe,
)
from tests.reliability.test_endpoint_fuzz import good_call, headers_for
from tests.reliability.test_inputs import _stalled_pack
from tests.reliability.wt_process import RAW_CONTROL, WtOutcome, run_wt
from windtunnel.runner import read_results

KINDS = ["universe", "pack", "trace", "request", "shard_dir"]
FAULTS = ["blocking", "huge", "deep", "truncated", "hostile_names", "control_bytes", "signal"]
HOSTILE = "\x1b]8;;http://evil.example\x07click\x1b]8;;\x07\x1b[2J\u202egnp.exe\x9b31m"
HOSTILE_NAMES = ["../../etc/x", "/etc/passwd", "a/b\\c", "C:\\x", "nul\u0000byte", "n" * 300]
UNIVERSE_LIMIT = "a universe file may have at most 268,435,456 bytes (set WT_MAX_INPUT_BYTES"
CONTRACT_A = Path(__file__).parents[1] / "importing/data/traces/contract_a_minimal.wtin.json"
F_SETPIPE_SZ = 1031
PIPE_SIZE = 4096

Cell = Callable[[Path], Awaitable[None]]
CELLS: dict[tuple[str, str], Cell] = {}


def cell(kind: str, fault: str) -> Callable[[Cell], Cell]:
    def register(function: Cell) -> Cell:
        CELLS[kind, fault] = function
        return function

    return register


async def wt(args: list[str], cwd: Path | None = None) -> WtOutcome:
    """`wt ARGS` to its end (killed at 60 s, which then fails `clean`)."""
    outcome = await trio.to_thread.run_sync(partial(run_wt, args, cwd=cwd, deadline_s=60))
    clean(outcome)
    return outcome


def clean(outcome: WtOutcome) -> None:
    """Ended by itself, no traceback, nothing raw for a terminal, a bounded footprint."""
    assert outcome.code >= 0, f"killed at the deadline: {outcome}"
    assert "Traceback" not in outcome.stderr, outcome.stderr
    assert RAW_CONTROL.search(outcome.stdout + outcome.stderr.replace("\n", "")) is None, outcome
    assert outcome.max_rss_mib < 400, outcome.max_rss_mib


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


SHARDS: list[Path] = []  # the module's two shards, made on first use (`made_shards`)


@pytest.mark.parametrize(("kind", "fault"), [(k, f) for k in KINDS for f in FAULTS])
async def test_fault_matrix(
    tmp_path: Path, kind: str, fault: str, request: pytest.FixtureRequest
) -> None:
    """Each input kind under each fault: clear error, nothing finished lost, no traceback, interruptible."""
    if kind == "shard_dir" and not SHARDS:
        SHARDS.append(request.getfixturevalue("made_shards"))
    with trio.fail_after(120):
        await CELLS[kind, fault](tmp_path)


# -- universe: one scenario's fixture is bad; the other scenario's result must survive ----------


async def run_with_bad_universe(root: Path, bad: Path, *, code: int = 1) -> dict[str, Any]:
    """`wt run` of a pack whose scenario `bad` uses `bad` and `good` a good universe: the good
    unit passes and every report is written; returns the results rows by unit id."""
    write_universe(root / "good.universe.json")
    pack = write_pack(root, {"good": "good.universe.json", "bad": bad.name})
    outcome = await wt(["run", str(pack), "-o", str(root / "run"), "--progress", "plain"])
    assert outcome.code == code, outcome
    rows = {r.unit_id: r for r in read_results(root / "run")}
    assert rows["good#0"].status == "passed"
    for name in ("summary.json", "junit.xml", "report.html"):
        assert (root / "run" / name).stat().st_size > 0
    return rows


async def validate_refuses(bad: Path, message: str, *, at: str = "") -> None:
    """`wt validate` exits 2 with one `INVALID` line on stdout (`at` is the JSON path's part)."""
    outcome = await wt(["validate", str(bad)])
    assert outcome.code == 2
    assert "Traceback" not in outcome.stderr
    assert (outcome.stdout, outcome.stderr) == (f"INVALID {bad}{at}: {message}\n", "")


@cell("universe", "blocking")
async def _(root: Path) -> None:
    bad = fifo(root / "bad.universe.json")
    rows = await run_with_bad_universe(root, bad)
    message = "is a FIFO (named pipe), expected a universe file"
    assert rows["bad#0"].error == f"UniverseError: {bad}: {message}"
    await validate_refuses(bad, message)


@cell("universe", "huge")
async def _(root: Path) -> None:
    bad = sparse(root / "bad.universe.json")
    rows = await run_with_bad_universe(root, bad)
    message = f"is {SPARSE_SIZE:,} bytes; {UNIVERSE_LIMIT} to allow more)"
    assert rows["bad#0"].error == f"UniverseError: {bad}: {message}"
    await validate_refuses(bad, message)


@cell("universe", "deep")
async def _(root: Path) -> None:
    bad = write_universe(root / "bad.universe.json", universe_doc(result=nested(500)))
    rows = await run_with_bad_universe(root, bad)
    deep = "nested deeper than 128 levels; MCP clients cannot read it"
    assert rows["bad#0"].error == f"UniverseError: {bad} at $.recordings[0].result: {deep}"
    await validate_refuses(bad, deep, at=" at $.recordings[0].result")
    deeper = root / "deeper.universe.json"
    deeper.write_text(
        json.dumps(universe_doc(result="X")).replace('"X"', "[" * 100_000 + "]" * 100_000)
    )
    await validate_refuses(deeper, "JSON is nested too deeply to be a universe")


@cell("universe", "truncated")
async def _(root: Path) -> None:
    whole = json.dumps(universe_doc()).encode()
    bad = root / "bad.universe.json"
    bad.write_bytes(whole[: len(whole) // 2])
    rows = await run_with_bad_universe(root, bad)
    message = "Input data was truncated"
    assert rows["bad#0"].error == f"UniverseError: {bad}: {message}"
    await validate_refuses(bad, message)


@cell("universe", "hostile_names")
async def _(root: Path) -> None:
    # Tool names are data: served, logged and written as they are, never used as paths.
    for index, name in enumerate(HOSTILE_NAMES):
        write_universe(root / f"u{index}.universe.json", universe_doc(tool=name))
    packs = [
        write_pack(root, {f"s{index}": f"u{index}.universe.json"}, tool=name).read_text()
        for index, name in enumerate(HOSTILE_NAMES)
    ]
    head, _, _ = packs[0].partition("[[scenario]]")
    (root / "pack.toml").write_text(
        head + "".join("[[scenario]]" + p.partition("[[scenario]]")[2] for p in packs)
    )
    before = files_under(root)
    outcome = await wt(["run", str(root / "pack.toml"), "-o", str(root / "run")])
    assert outcome.code == 0, outcome
    rows = {r.unit_id: r for r in read_results(root / "run")}
    assert {u: (r.status, [c.tool_name for c in r.mcp_calls]) for u, r in rows.items()} == {
        f"s{index}#0": ("passed", [name]) for index, name in enumerate(HOSTILE_NAMES)
    }
    assert {p for p in files_under(root) - before if not p.startswith("run")} == set()
    assert len(list((root / "run" / "traces").iterdir())) == len(HOSTILE_NAMES)


@cell("universe", "control_bytes")
async def _(root: Path) -> None:
    doc = universe_doc(tool=f"look{HOSTILE}", result={f"k{HOSTILE}": HOSTILE})
    doc["recordings"][0]["args"] = {"q": f"b{HOSTILE}", f"mail{HOSTILE}": "ops@bluewing.io"}
    bad = write_universe(root / "bad.universe.json", doc)
    write_universe(root / "good.universe.json")
    pack = write_pack(root, {"bad": "bad.universe.json"}, tool=f"look{HOSTILE}")
    pack.write_text(pack.read_text() + '[[scenario.policies]]\nkind = "no_divergence"\n')
    outcome = await wt(["run", str(pack), "-o", str(root / "run"), "--progress", "plain"])
    assert outcome.code == 1
    [row] = read_results(root / "run")
    assert row.status == "failed"
    assert row.mcp_calls[0].tool_name == f"look{HOSTILE}"  # kept exactly in the trace
    validated = await wt(["validate", str(bad)])
    assert validated.code == 0
    assert "looks like an email address" in validated.stdout


@cell("universe", "signal")
async def _(root: Path) -> None:
    pack = _stalled_pack(root, 600)
    process = await trio.lowlevel.open_process(
        [*WT, "run", pack, "-o", str(root / "run"), "--progress", "plain"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    assert process.stderr is not None
    seen = b""
    while seen.count(b"PASS ") < 3:
        seen += await read_until(process.stderr, b"\n")
    process.send_signal(signal.SIGTERM)
    rest = b""
    async for chunk in process.stderr:
        rest += chunk
    await process.wait()
    assert process.returncode == 130
    assert b"Traceback" not in seen + rest
    assert len(read_results(root / "run")) == 3
    assert (root / "run" / "summary.json").is_file()


# -- pack -----------------------------------------------------------------------------------


async def pack_refused(pack: Path, message: str) -> None:
    for command in (["run", str(pack), "-o", str(pack.parent / "run")], ["plan", str(pack)]):
        outcome = await wt(command)
        assert outcome.code == 2
        assert outcome.one_error_line() == f"wt: error: {pack}: {message}"
    assert not (pack.parent / "run").exists()


@cell("pack", "blocking")
async def _(root: Path) -> None:
    await pack_refused(fifo(root / "pack.toml"), "is a FIFO (named pipe), expected a pack file")


@cell("pack", "huge")
async def _(root: Path) -> None:
    await pack_refused(
        sparse(root / "pack.toml"),
        f"is {SPARSE_SIZE:,} bytes; a pack file may have at most 16,777,216 bytes",
    )


@cell("pack", "deep")
async def _(root: Path) -> None:
    pack = root / "pack.toml"
    pack.write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    await pack_refused(pack, "invalid TOML: nested too deeply to read")


@cell("pack", "truncated")
async def _(root: Path) -> None:
    write_universe(root / "good.universe.json")
    text = write_pack(root, {"good": "good.universe.json"}).read_text()
    cut = text.index("good.universe.json") + 4
    (root / "pack.toml").write_text(text[:cut])
    with pytest.raises(tomllib.TOMLDecodeError) as caught:
        tomllib.loads(text[:cut])
    await pack_refused(root / "pack.toml", f"invalid TOML: {caught.value}")


@cell("pack", "hostile_names")
async def _(root: Path) -> None:
    write_universe(root / "good.universe.json")
    pack = write_pack(root, dict.fromkeys(HOSTILE_NAMES, "good.universe.json"), name="../../x")
    before = files_under(root)
    outcome = await wt(["run", str(pack), "-o", str(root / "run")])
    assert outcome.code == 0, outcome
    assert sorted(r.unit_id for r in read_results(root / "run")) == sorted(
        f"{n}#0" for n in HOSTILE_NAMES
    )
    assert {p for p in files_under(root) - before if not p.startswith("run")} == set()
    assert len(list((root / "run" / "traces").iterdir())) == len(HOSTILE_NAMES)


@cell("pack", "control_bytes")
async def _(root: Path) -> None:
    write_universe(root / "good.universe.json")
    pack = write_pack(
        root, {f"s{HOSTILE}": "good.universe.json", "t": "good.universe.json"}, name=HOSTILE
    )
    planned = await wt(["plan", str(pack)])
    assert planned.code == 0
    assert "s\\u001b]8;;http://evil.example\\u0007" in planned.stdout
    outcome = await wt(["run", str(pack), "-o", str(root / "run"), "--progress", "plain"])
    assert outcome.code == 0
    assert sorted(r.unit_id for r in read_results(root / "run")) == [f"s{HOSTILE}#0", "t#0"]


HANGING_AGENT = (
    "import sys, time\nif sys.argv[1].startswith('hang'):\n    time.sleep(600)\nprint('done')\n"
)


def hanging_pack(root: Path, marker: str) -> Path:
    write_universe(root / "good.universe.json")
    return write_pack(
        root,
        {"fast": "good.universe.json", "hang": "good.universe.json"},
        agent=["{python}", "-c", HANGING_AGENT, "{scenario}", marker],
        timeout_s=600,
    )


async def interrupt_after_first_pass(args: list[str], sig: signal.Signals) -> bytes:
    """Start `wt ARGS`, wait for its first PASS line, send `sig`; its whole stderr."""
    process = await trio.lowlevel.open_process(
        [*WT, *args], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    assert process.stderr is not None
    seen = await read_until(process.stderr, b"PASS ")
    process.send_signal(sig)
    async for chunk in process.stderr:
        seen += chunk
    await process.wait()
    assert process.returncode == 130
    assert b"Traceback" not in seen
    return seen


@cell("pack", "signal")
async def _(root: Path) -> None:
    marker = f"wt-matrix-{root.name}"
    pack = hanging_pack(root, marker)
    err = await interrupt_after_first_pass(
        ["run", str(pack), "-o", str(root / "run"), "--progress", "plain"], signal.SIGTERM
    )
    assert b"inputs: interrupted: 1 passed, 0 failed, 0 errors of 1" in err
    assert [r.unit_id for r in read_results(root / "run")] == ["fast#0"]
    assert (root / "run" / "junit.xml").is_file()
    assert processes_with(marker) == []


# -- trace ----------------------------------------------------------------------------------


async def import_refused(trace: Path, message: str) -> None:
    outcome = await wt(["import", str(trace), "-o", str(trace.parent / "out")])
    assert outcome.code == 2
    assert outcome.one_error_line() == f"wt: error: {trace}: {message}"
    assert not (trace.parent / "out").exists()


@cell("trace", "blocking")
async def _(root: Path) -> None:
    await import_refused(fifo(root / "t.json"), "is a FIFO (named pipe), expected a trace file")


@cell("trace", "huge")
async def _(root: Path) -> None:
    await import_refused(
        sparse(root / "t.json"),
        f"is {SPARSE_SIZE:,} bytes; a trace file may have at most 268,435,456 bytes "
        "(set WT_MAX_INPUT_BYTES to allow more)",
    )


@cell("trace", "deep")
async def _(root: Path) -> None:
    trace = root / "t.json"
    trace.write_text("[" * 100_000 + "]" * 100_000)
    await import_refused(trace, "JSON is nested too deeply to be a trace")


@cell("trace", "truncated")
async def _(root: Path) -> None:
    trace = root / "t.json"
    text = CONTRACT_A.read_text()
    trace.write_text(text[: len(text) // 2])
    outcome = await wt(["import", str(trace), "-o", str(root / "out")])
    assert outcome.code == 2
    assert outcome.one_error_line().startswith(f"wt: error: {trace} at line ")
    assert "not valid JSON: Input data was truncated" in outcome.stderr
    assert not (root / "out").exists()


def contract_a(tools: list[str], upstreams: int = 1) -> dict[str, Any]:
    """A Contract A document: `upstreams` upstreams `u0..`, each offering `tools`, one call each."""
    doc = json.loads(CONTRACT_A.read_text())
    template, call = doc["upstreams"][0], doc["calls"][0]
    doc["upstreams"], doc["calls"] = [], []
    for index in range(upstreams):
        upstream = {**template, "id": f"u{index}"}
        upstream["tools"] = [{**template["tools"][0], "name": name} for name in tools]
        doc["upstreams"].append(upstream)
        for name in tools:
            doc["calls"].append(
                {**call, "seq": len(doc["calls"]), "upstream": f"u{index}", "tool": name}
            )
    return doc


@cell("trace", "hostile_names")
async def _(root: Path) -> None:
    trace = root / "t.wtin.json"
    trace.write_text(json.dumps(contract_a(HOSTILE_NAMES)))
    outcome = await wt(["import", str(trace), "-o", str(root / "out")])
    assert outcome.code == 0, outcome
    assert files_under(root) == {
        "t.wtin.json",
        "out",
        *(
            f"out/{n}"
            for n in ("trace.wtin.json", "fixture.universe.json", "scenario.toml", "IMPORTED.md")
        ),
    }
    universe = json.loads((root / "out" / "fixture.universe.json").read_text())
    assert [t["name"] for t in universe["tools"]] == HOSTILE_NAMES


@cell("trace", "control_bytes")
async def _(root: Path) -> None:
    doc = contract_a([f"status{HOSTILE}"])
    doc["upstreams"][0]["tools"][0]["schema_source"] = "inferred"
    trace = root / "t.wtin.json"
    trace.write_text(json.dumps(doc))
    outcome = await wt(["import", str(trace), "-o", str(root / "out")])
    assert outcome.code == 0, outcome
    assert "warning: schema_inferred at $.upstreams[0].tools[0].input_schema: u0.status\\u001b" in (
        outcome.stderr
    )


def blocked_writing_a_pipe(pid: int) -> bool:
    """The process sleeps in the kernel's pipe write (`pipe_write`, `anon_pipe_write`)."""
    return Path(f"/proc/{pid}/wchan").read_text().endswith("pipe_write")


@cell("trace", "signal")
async def _(root: Path) -> None:
    # Mid-way: its output fills a 4 KiB pipe nobody reads (300 upstreams, a line each), so
    # `wt import` is stopped in the middle of its work when SIGINT comes.
    trace = root / "t.wtin.json"
    trace.write_text(json.dumps(contract_a(["lookup"], upstreams=300)))
    process = await trio.lowlevel.open_process(
        [*WT, "import", str(trace), "-o", str(root / "out")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # A shell's background job ignores SIGINT, and its children inherit that: not here.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert isinstance(process.stdout, trio.lowlevel.FdStream)
    assert process.stderr is not None
    stdout, stderr = process.stdout, process.stderr
    fcntl.fcntl(stdout.fileno(), F_SETPIPE_SZ, PIPE_SIZE)
    # A condition polled, bounded by the cell's deadline: nothing signals "blocked writing".
    while not blocked_writing_a_pipe(process.pid):  # noqa: ASYNC110
        await trio.sleep(0.01)
    process.send_signal(signal.SIGINT)
    err = b""

    async def drain_stdout() -> None:
        async for _ in stdout:
            pass

    async with trio.open_nursery() as nursery:
        nursery.start_soon(drain_stdout)
        async for chunk in stderr:
            err += chunk
    await process.wait()
    assert process.returncode == 130
    assert err.decode() == "wt: interrupted\n"
    written = sorted(p.name for p in (root / "out").iterdir())
    assert written == sorted(
        [
            "trace.wtin.json",
            "scenario.toml",
            "IMPORTED.md",
            *(f"u{i}.universe.json" for i in range(300)),
        ]
    )


# -- request (wt serve over HTTP) ----------------------------------------------------------------


class Served:
    """`wt serve` of a good universe: its URL, a good call, and its stop."""

    def __init__(self, process: trio.Process, url: str) -> None:
        self.process = process
        self.url = url
        self.port = int(url.split(":")[2].split("/")[0])

    async def good_call(self) -> None:
        body = good_call("2026-07-28")
        body["params"] = {**body["params"], "name": "lookup", "arguments": {"q": "a"}}
        async with httpx2.AsyncClient(timeout=10) as client:
            response = await client.post(
                self.url, json=body, headers=headers_for("2026-07-28", name="lookup")
            )
        assert response.status_code == 200
        assert response.json()["result"]["structuredContent"] == {"name": "A"}

    async def stop(self, sig: signal.Signals = signal.SIGTERM) -> str:
        """Signal it; its stderr once it has exited (it must exit 0 within the deadline)."""
        self.process.send_signal(sig)
        assert self.process.stderr is not None
        err = b""
        async for chunk in self.process.stderr:
            err += chunk
        await self.process.wait()
        assert self.process.returncode == 0
        text = err.decode()
        assert "Traceback" not in text, text
        assert RAW_CONTROL.search(text.replace("\n", "")) is None, text
        return text


async def serve(root: Path) -> Served:
    universe = write_universe(root / "good.universe.json")
    process = await trio.lowlevel.open_process(
        [*WT, "serve", str(universe), "--log-format", "console"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    url = (await read_until(process.stdout, b"\n")).decode().strip()
    return Served(process, url)


def raw_request(served: Served, body: bytes, length: int) -> socket.socket:
    """A socket that has sent a 2026-era call's head and `body` of a body of `length` bytes."""
    sock = socket.create_connection(("127.0.0.1", served.port))
    head = "".join(f"{k}: {v}\r\n" for k, v in headers_for("2026-07-28", name="lookup").items())
    sock.sendall(
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n{head}"
        f"Content-Length: {length}\r\n\r\n".encode()
        + body
    )
    return sock


async def post(
    served: Served, body: bytes, era: str = "2026-07-28", name: str = "lookup"
) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=10) as client:
        return await client.post(served.url, content=body, headers=headers_for(era, name=name))


@cell("request", "blocking")
async def _(root: Path) -> None:
    served = await serve(root)
    stalled = raw_request(served, b'{"jsonrpc"', 200)  # and nothing more
    await served.good_call()  # other clients are served meanwhile
    await served.stop()  # and the server still stops
    stalled.close()


@cell("request", "huge")
async def _(root: Path) -> None:
    served = await serve(root)
    response = await post(served, b"[" + b" " * (5 * 1024 * 1024) + b"]")
    assert response.status_code == 413
    await served.good_call()
    await served.stop()


@cell("request", "deep")
async def _(root: Path) -> None:
    served = await serve(root)
    response = await post(served, b"[" * 100_000 + b"]" * 100_000)
    assert response.status_code == 400
    await served.good_call()
    await served.stop()


@cell("request", "truncated")
async def _(root: Path) -> None:
    served = await serve(root)
    cut = json.dumps(good_call("2026-07-28")).encode()
    raw_request(served, cut[: len(cut) // 2], len(cut)).close()
    response = await post(served, cut[: len(cut) // 2] + b" " * (len(cut) - len(cut) // 2))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700
    await served.good_call()
    await served.stop()


@cell("request", "hostile_names")
async def _(root: Path) -> None:
    served = await serve(root)
    for name in HOSTILE_NAMES:
        body = good_call("2025-11-25")
        body["params"]["name"] = name
        response = await post(served, json.dumps(body).encode(), era="2025-11-25")
        assert response.json()["error"]["code"] == -32602
        assert (
            repr(name)[1:-1] in response.json()["error"]["message"]
            or name in (response.json()["error"]["message"])
        )
    await served.good_call()
    await served.stop()


@cell("request", "control_bytes")
async def _(root: Path) -> None:
    served = await serve(root)
    body = good_call("2026-07-28")
    body["params"] = {**body["params"], "name": "lookup", "arguments": {"q": HOSTILE, HOSTILE: 1}}
    response = await post(served, json.dumps(body).encode())
    assert response.json()["result"]["isError"] is True  # a miss, answered
    await served.good_call()
    err = await served.stop()
    assert "universe_divergence" in err
    assert "\\u001b]8;;http://evil.example" in err


@cell("request", "signal")
async def _(root: Path) -> None:
    served = await serve(root)
    half = raw_request(served, b'{"jsonrpc": "2.0", ', 500)
    await served.good_call()
    t0 = time.monotonic()
    await served.stop(signal.SIGINT)  # a call half-way in does not hold the stop
    assert time.monotonic() - t0 < 10
    half.close()


# -- shard directory (wt merge) ---------------------------------------------------------------


@pytest.fixture(scope="module")
def made_shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two shards of a four-scenario pack, run for real once; each cell copies them."""
    root = tmp_path_factory.mktemp("shards")
    write_universe(root / "good.universe.json")
    pack = write_pack(root, {f"s{i}": "good.universe.json" for i in range(4)})
    for index in (1, 2):
        outcome = run_wt(["run", str(pack), "--shard", f"{index}/2", "-o", str(root / f"s{index}")])
        assert outcome.code == 0, outcome
    return root


def copy_shards(root: Path) -> tuple[Path, Path, Path]:
    """Fresh copies of the two shards; the first trace file of shard 1."""
    for index in (1, 2):
        shutil.copytree(SHARDS[0] / f"s{index}", root / f"s{index}")
    first = read_results(root / "s1", with_calls=False)[0]
    return root / "s1", root / "s2", root / "s1" / (first.trace_file or "")


def append(path: Path, data: bytes) -> None:
    path.write_bytes(path.read_bytes() + data)


async def merge_refused(root: Path) -> str:
    outcome = await wt(["merge", str(root / "s1"), str(root / "s2"), "-o", str(root / "out")])
    assert outcome.code == 2
    assert not (root / "out" / "results.jsonl").exists()
    return outcome.one_error_line()


@cell("shard_dir", "blocking")
async def _(root: Path) -> None:
    s1, _, _ = copy_shards(root)
    (s1 / "results.jsonl").unlink()
    fifo(s1 / "results.jsonl")
    assert await merge_refused(root) == (
        f"wt: error: {s1 / 'results.jsonl'}: is a FIFO (named pipe), expected a results file"
    )


@cell("shard_dir", "huge")
async def _(root: Path) -> None:
    s1, _, trace = copy_shards(root)
    unit = read_results(s1, with_calls=False)[0].unit_id
    trace.unlink()
    sparse(trace)
    assert await merge_refused(root) == (
        f"wt: error: {s1}: unit {unit!r}: its trace file traces/{trace.name} is unusable (is "
        f"{SPARSE_SIZE:,} bytes; a trace file may have at most 268,435,456 bytes (set "
        "WT_MAX_INPUT_BYTES to allow more)); not merged"
    )


@cell("shard_dir", "deep")
async def _(root: Path) -> None:
    s1, _, _ = copy_shards(root)
    append(s1 / "results.jsonl", b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n")
    lines = len((s1 / "results.jsonl").read_bytes().splitlines())
    assert await merge_refused(root) == (
        f"wt: error: {s1 / 'results.jsonl'} at line {lines}: nested too deeply to be a results line"
    )


@cell("shard_dir", "truncated")
async def _(root: Path) -> None:
    s1, _, trace = copy_shards(root)
    unit = read_results(s1, with_calls=False)[0].unit_id
    trace.write_bytes(trace.read_bytes()[:100])
    assert await merge_refused(root) == (
        f"wt: error: {s1}: unit {unit!r}: its trace file traces/{trace.name} is not the one "
        "written with its results line; not merged"
    )


@cell("shard_dir", "hostile_names")
async def _(root: Path) -> None:
    s1, _, _ = copy_shards(root)
    line = json.loads((s1 / "results.jsonl").read_bytes().splitlines()[0])
    line["unit_id"] = "../../../etc/passwd\u0000#0"
    append(s1 / "results.jsonl", json.dumps(line).encode() + b"\n")
    before = files_under(root)
    error = await merge_refused(root)
    assert error.startswith(f"wt: error: {s1}: unit '../../../etc/passwd\\x00#0': its trace file ")
    assert files_under(root) - before <= {"out", "out/traces"}


@cell("shard_dir", "control_bytes")
async def _(root: Path) -> None:
    s1, _, _ = copy_shards(root)
    line = json.loads((s1 / "results.jsonl").read_bytes().splitlines()[0])
    line["unit_id"] = f"s{HOSTILE}#0"
    append(s1 / "results.jsonl", json.dumps(line).encode() + b"\n")
    error = await merge_refused(root)
    assert "its trace file traces/" in error


@cell("shard_dir", "signal")
async def _(root: Path) -> None:
    # A shard interrupted mid-way is an input like any other: merge names what it lacks, and
    # --allow-missing merges what finished.
    marker = f"wt-matrix-{root.name}"
    pack = hanging_pack(root, marker)
    await interrupt_after_first_pass(
        ["run", str(pack), "--shard", "1/1", "-o", str(root / "s1"), "--progress", "plain"],
        signal.SIGINT,
    )
    refused = await wt(["merge", str(root / "s1"), "-o", str(root / "out")])
    assert refused.code == 2
    assert refused.one_error_line() == (
        f"wt: error: 1 unit(s) of the plan are missing: hang#0; unfinished: 1/1 ({root / 's1'})"
    )
    merged = await wt(["merge", str(root / "s1"), "-o", str(root / "out"), "--allow-missing"])
    assert merged.code == 1, merged  # --allow-missing: what is missing is listed, exit 1
    assert [r.unit_id for r in read_results(root / "out")] == ["fast#0"]
    assert processes_with(marker) == []
