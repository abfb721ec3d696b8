"""`new_episodes`: a replay whose misses are answered by the live upstream and recorded.

    server = LiveMissServer("crm.universe.json", upstream="https://crm.internal/mcp")
    url = await server.start(nursery)     # one live session opens beside the replay

A call the universe answers is answered from it, as always. A call of a declared tool that no
recording answers is forwarded to the live upstream through `wt record`'s own link (one
session, `live_client.py`, opened with the server); the agent gets the live answer, the call
log a divergence with reason `recorded_live` (policy `new_episodes`: a CI run that forbids
divergences still fails on it), and the universe file one recording more, redacted by the same
rules as `wt record` and written atomically. A call to a tool the universe does not declare
stays an `unknown_tool` divergence (the agent was never offered it). In-process `call_tool`
does not go live: it answers from the recording, as a plain replay does.

Appends are safe under concurrent sessions: every writer of a file, in this process (one lock
per file) or in others (an exclusive `flock` on `.NAME.wt-lock` beside it), re-reads the file
and writes it back with its recording added, so none is lost; a stateless call already
recorded (same tool, canonical arguments) is not added twice. The replay in memory is not
reloaded: an identical miss later in the same run is forwarded (and reported) again.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Final

import msgspec
import trio

from ..calls import MCPCall, without_envelope
from ..canonical import canonical_key
from ..divergence import Divergence, LiveOutcome, divergence_call, log_divergence
from ..errors import InputError
from ..freeze import RECORDED_DURATION, rounded_ms
from ..matching import Miss
from ..mcp._shapes import Exchange, SessionState, SyncAnswer
from ..mcp.recorded import RecordedMCPServer
from ..miss_answers import SynthesizeHook
from ..replay import ClientExchange
from ..universe import Recording, flatten_wire_args, load_universe, write_universe
from .limits import DEFAULT_TIMEOUT_S
from .live_client import LiveClient, LiveRequestError, open_live_session
from .proxy import RecordingProxy
from .redact import RedactionRules

__all__ = ["RECORDED_LIVE", "LiveMissServer", "append_recording"]

RECORDED_LIVE: Final = "recorded_live"
"""The divergence reason of a miss answered by the live upstream."""
POLICY: Final = "new_episodes"

_file_locks: dict[str, threading.Lock] = {}
_file_locks_guard = threading.Lock()


class LiveMissServer(RecordedMCPServer):
    """A `RecordedMCPServer` whose misses go to the live upstream (see the module)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        upstream: str | Sequence[str],
        redact: RedactionRules | None = None,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        name: str | None = None,
        scenario: str | None = None,
        synthesize: SynthesizeHook | None = None,
        fast_path: bool = True,
        own_identity: bool = False,
        both_eras: bool = False,
    ) -> None:
        super().__init__(
            path,
            name=name,
            scenario=scenario,
            synthesize=synthesize,
            fast_path=fast_path,
            own_identity=own_identity,
            both_eras=both_eras,
        )
        self.path = Path(path)
        self.proxy = RecordingProxy(upstream, name=self.name, redact=redact, timeout_s=timeout_s)
        self._client: LiveClient | None = None  # while serving

    # -- serving: the live session lives as long as the server -------------------------------

    async def serve(self, **options: Any) -> None:
        async with self._live_session():
            await super().serve(**options)

    async def serve_stdio(self) -> None:
        async with self._live_session():
            await super().serve_stdio()

    def _live_session(self) -> AbstractAsyncContextManager[None]:
        @asynccontextmanager
        async def session() -> AsyncIterator[None]:
            async with open_live_session(self.proxy) as client:
                recorded = self.universe.server
                await client.handshake(recorded.protocol_version if recorded else None)
                self._client = client
                try:
                    yield
                finally:
                    self._client = None

        return session()

    def sync_answer(self) -> SyncAnswer | None:
        return None  # a miss awaits the upstream: every answer goes through `answer`

    # -- answering ----------------------------------------------------------------------------

    async def answer(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        args = flatten_wire_args(tool_name, args)
        outcome, messages = self.begin(tool_name, args, None)
        if isinstance(outcome, Miss) and outcome.reason != "unknown_tool":
            return await self._answer_live(tool_name, args)
        return self.replay.finish(tool_name, args, outcome, ClientExchange(unsent=len(messages)))

    async def answer_exchanging(
        self,
        tool_name: str,
        args: dict[str, Any],
        exchange: Exchange,
        session: SessionState | None = None,
    ) -> MCPCall:
        args = flatten_wire_args(tool_name, args)
        outcome, messages = self.begin(tool_name, args, session)
        if isinstance(outcome, Miss) and outcome.reason != "unknown_tool":
            return await self._answer_live(tool_name, args)
        return await self.exchange_and_finish(tool_name, args, outcome, messages, exchange, session)

    async def _answer_live(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        index = self.replay.index
        nearest = index.nearest(tool_name, args)[0] if index.recordings_of(tool_name) else None
        result: Any
        live: LiveOutcome
        try:
            if self._client is None:
                raise InputError("the live session is not open")
            began = trio.current_time()
            raw = await self._client.request("tools/call", {"name": tool_name, "arguments": args})
            took_ms = (trio.current_time() - began) * 1000.0
        except (LiveRequestError, InputError) as exc:
            result = {
                "error": "live_upstream_failed",
                "tool": tool_name,
                "message": self.proxy.printable(str(exc)),
            }
            is_error, live = True, "failed"
        else:
            result = without_envelope(raw)
            is_error = result.get("isError") is True
            redactor = self.proxy.redactor
            redactor.see_call(args, result)
            recording = Recording(
                tool_name=tool_name,
                args=redactor.apply(args),
                result=redactor.apply(result),
                meta={RECORDED_DURATION: rounded_ms(took_ms)},
            )
            sequence = tool_name in self.ordered_tools()
            added = await trio.to_thread.run_sync(append_recording, self.path, recording, sequence)
            live = "appended" if added else "already_recorded"
        divergence = Divergence(
            tool=tool_name,
            args=args,
            reason=RECORDED_LIVE,
            policy=POLICY,
            nearest=nearest,
            live=live,
        )
        call = divergence_call(divergence, result=result, is_error=is_error, upstream=self.name)
        self.replay.log.append(call)
        if self.replay.log_events:
            log_divergence(call, scenario=self.replay.scenario)
        return call


def append_recording(path: str | os.PathLike[str], recording: Recording, sequence: bool) -> bool:
    """Add `recording` to the universe at `path` (re-read under the file's locks, written
    atomically); False when a stateless tool already has a recording of those arguments."""
    target = Path(path)
    with _process_lock(target), _file_lock(target):
        universe = load_universe(target)
        if not sequence:
            key = canonical_key(recording.args)
            for existing in universe.recordings:
                same_tool = existing.tool_name == recording.tool_name
                if same_tool and canonical_key(existing.args) == key:
                    return False
        grown = msgspec.structs.replace(universe, recordings=[*universe.recordings, recording])
        write_universe(grown, target)
    return True


def _process_lock(path: Path) -> threading.Lock:
    key = os.path.realpath(path)
    with _file_locks_guard:
        return _file_locks.setdefault(key, threading.Lock())


class _file_lock:
    """An exclusive `flock` on `.NAME.wt-lock` beside the universe, for writers in other
    processes (the universe itself is replaced by each write, so it cannot carry the lock).
    The lock file is opened without following a link."""

    def __init__(self, path: Path) -> None:
        self.lock_path = path.with_name(f".{path.name}.wt-lock")
        self.fd = -1

    def __enter__(self) -> None:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            self.fd = os.open(self.lock_path, flags, 0o600)
        except OSError as exc:
            raise InputError(
                f"cannot open the lock file: {exc.strerror}", file=str(self.lock_path)
            ) from None
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
