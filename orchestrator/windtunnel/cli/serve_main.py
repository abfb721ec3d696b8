"""`wt serve`: serve universes as MCP servers until Ctrl-C or SIGTERM (options: `serve_command`)."""

from __future__ import annotations

import argparse
import importlib
import json
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from .._gc import tune_gc_for_serving
from ..actors import JsonLinesSink, PipeSink, PipeTextStream, PipeWriter, Sink
from ..actors.sinks import drop_notice
from ..actors.stdio_events import StdioEvents
from ..errors import ConfigError
from ..faults.engine import check_faults_against
from ..faults.spec import ALL_TOOLS, Fault, parse_faults
from ..line_format import LineRenderer, line_renderer
from ..mcp._faulted import ProcessDropped
from ..mcp._stdio_fds import claimed_stdio, client_gone_ends_serving
from ..mcp._stdio_lite import LiteSession, lite_session, serve_handed_over, serve_here
from ..mcp.recorded import RecordedMCPServer, upstream_name
from ..mcp.spi import MCPServer
from ..miss_answers import SynthesizeHook
from ..record.modes import RecordMode, choose_record_mode
from .logs import configure_logging, line_style
from .otel_options import open_otel_sink

__all__ = ["load_hook", "parse_upstreams", "run_serve"]

STDERR_DRAIN_S = 2.0
"""How long a stopping `wt serve` waits for its last stderr lines to be read."""
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Each stops `wt serve` cleanly: a terminal closing (SIGHUP) as much as Ctrl-C or a client's
SIGTERM."""


def parse_upstreams(specs: list[str]) -> list[tuple[str, str]]:
    """`crm=crm.universe.json` or a bare path (named after the file); names must be unique."""
    pairs: list[tuple[str, str]] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = upstream_name(spec), spec
        if not name or not path:
            raise ConfigError(f"expected FILE or NAME=FILE, got {spec!r}", file="<command line>")
        if any(name == other for other, _ in pairs):
            raise ConfigError(
                f"upstream name {name!r} is used twice; name them with NAME=FILE",
                file="<command line>",
            )
        pairs.append((name, path))
    return pairs


def load_hook(spec: str | None) -> SynthesizeHook | None:
    """Import the user's own hook: `package.module:function`."""
    if spec is None:
        return None
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigError(f"expected MODULE:FUNCTION, got {spec!r}", file="--synthesize")
    try:
        hook: Any = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot import {spec!r}: {exc}", file="--synthesize") from None
    if not callable(hook):
        raise ConfigError(f"{spec!r} is not callable", file="--synthesize")
    return hook  # type: ignore[no-any-return]


def run_serve(args: argparse.Namespace) -> int:
    pairs = parse_upstreams(args.files)
    hook = load_hook(args.synthesize)
    if args.stdio:
        _check_stdio_options(args, pairs)
    if args.port and len(pairs) != 1:
        raise ConfigError("--port needs exactly one universe", file="<command line>")
    mode = choose_record_mode(args.record_mode, where="--record-mode")
    if args.upstream is not None and len(pairs) != 1:
        raise ConfigError("--upstream needs exactly one universe", file="<command line>")
    faults = parse_faults(args.fault)
    if faults and mode != "none":
        raise ConfigError(
            f"--fault injects faults into a replay; --record-mode {mode} records",
            file="<command line>",
        )
    held = _HeldSignals()
    # Events and log lines share stderr and one line style (`line_format`).
    style = line_style(args.log_format)
    render = line_renderer(style, colors=sys.stderr.isatty())
    with (
        _stderr_writer(render) as stderr,
        _event_sink(args.events, stderr, render) as events,
        open_otel_sink(args, units=False, pack="serve") as otel,
    ):
        sinks: list[Sink] = [events] if otel is None else [events, otel]
        # stdout carries the protocol (stdio) or the URL/config: logs always go to stderr.
        configure_logging(fmt=style, stream=PipeTextStream(stderr))
        servers = {name: _server(name, path, mode, args, hook, faults) for name, path in pairs}
        _check_every_fault_lands(faults, servers)
        if args.stdio and not isinstance(next(iter(servers.values())), RecordedMCPServer):
            raise ConfigError(
                f"--record-mode {mode} records here: use wt record --stdio", file="<command line>"
            )
        # From here a stop signal stops serving and the teardown (the last events, the stderr
        # lines) runs to its end; before, while universes load, it ends the process at once.
        held.start()
        try:
            if args.stdio:
                _run_stdio(next(iter(servers.values())), sinks, held)
            else:
                import trio

                trio.run(_serve_http, servers, args, sinks, stderr, held)
        finally:
            held.ignore()
        return 0


def _server(
    name: str,
    path: str,
    mode: RecordMode,
    args: argparse.Namespace,
    hook: SynthesizeHook | None,
    faults: list[Fault],
) -> MCPServer:
    """The universe's server: a plain replay, or under a record mode the server that mode
    needs (`record.mode_servers`, loaded only then). `--fault`s are checked against each
    universe: one naming a tool only one of several universes declares is injected there."""
    if mode == "none":
        server = RecordedMCPServer(
            path,
            name=name,
            synthesize=hook,
            fast_path=args.fast_path,
            own_identity=args.own_identity,
            both_eras=args.both_eras,
            fault_seed=args.fault_seed,
        )
        if faults:
            _inject(server, faults, name, several=len(args.files) > 1)
        return server
    from ..record.mode_servers import server_for_mode
    from ..record.redact import RedactionRules, load_rules_file, parse_rule
    from ..record.upstream_source import given_upstream

    rules = RedactionRules()
    for spec in args.redact:
        rules.extend(parse_rule(spec))
    if args.redact_rules:
        rules.extend(load_rules_file(args.redact_rules))
    upstream = None if args.upstream is None else given_upstream(args.upstream, where="--upstream")
    return server_for_mode(
        path,
        mode=mode,
        upstream=upstream,
        redact=rules,
        name=name,
        synthesize=hook,
        fast_path=args.fast_path,
        own_identity=args.own_identity,
        both_eras=args.both_eras,
    )


def _inject(server: RecordedMCPServer, faults: list[Fault], name: str, *, several: bool) -> None:
    """Add the `--fault`s that concern `server`'s universe to its own faults; a fault naming a
    tool no universe declares (one universe: this one) is a usage error."""
    declared = {tool.name for tool in server.universe.tools}
    mine = [f for f in faults if f.tool == ALL_TOOLS or f.tool in declared or not several]
    check_faults_against(
        mine,
        server.universe,
        error=ConfigError,
        file="<command line>",
        paths=[f"--fault {f.spelling()}" for f in mine],
    )
    server.set_faults([*server.faults, *mine])


def _check_every_fault_lands(faults: list[Fault], servers: dict[str, MCPServer]) -> None:
    """With several universes, a `--fault` whose tool none declares is a usage error."""
    declared = {
        tool.name
        for server in servers.values()
        if isinstance(server, RecordedMCPServer)
        for tool in server.universe.tools
    }
    for fault in faults:
        if fault.tool != ALL_TOOLS and fault.tool not in declared:
            raise ConfigError(
                f"fault names undeclared tool {fault.tool!r}; no universe declares it",
                file="<command line>",
                path=f"--fault {fault.spelling()}",
            )


class _Interrupted(Exception):
    """A stop signal interrupted a wait for input outside Trio."""


class _HeldSignals:
    """Stop signals held instead of dying of them, once `start`ed, until the process exits.

    Trio listens for them while it serves and restores the handler it found when it stops. With
    the default one, a client's SIGTERM that lands just after stdin closed (as MCP clients shut
    a server down) would kill the process in the middle of its teardown, or turn a clean stop
    into a death by signal; held, the teardown finishes and the exit code is 0. One that came
    before serving began stops it as soon as it starts. Once serving is over they are ignored:
    the process is stopping already, and Python's own exit puts back the default handler in place
    of a Python one (a signal then would still kill it). They are not put back: `wt serve` exits
    right after.
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self.waiting = False
        """A plain stdio session waits for a line on this thread (`_stdio_lite.Interruptible`):
        a signal interrupts the wait."""

    def start(self) -> None:
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._hold)

    def _hold(self, signum: int, frame: object) -> None:
        self.received = signum
        if self.waiting:
            raise _Interrupted

    def ignore(self) -> None:
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


@contextmanager
def _event_sink(path: str | None, stderr: PipeWriter, render: LineRenderer) -> Iterator[Sink]:
    """Events go to `--events FILE` when given (every one kept), else to stderr (lossy)."""
    if path is None:
        yield PipeSink(stderr, render)
        return
    try:
        events = open(path, "a", encoding="utf-8")  # noqa: SIM115  # closed below
    except OSError as exc:
        raise ConfigError(f"cannot open for writing: {exc.strerror}", file=path) from None
    with events:
        yield JsonLinesSink(events)


@contextmanager
def _stderr_writer(render: LineRenderer) -> Iterator[PipeWriter]:
    """stderr behind a `PipeWriter`: an agent that pipes it and never reads it must not stall
    the servers. Closing waits a bounded time for the last lines (and the drop count)."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):
        fd = 2  # sys.stderr was swapped for an object without a descriptor
    sys.stderr.flush()
    writer = PipeWriter(fd, notice=lambda count: drop_notice(count, render))
    try:
        yield writer
    finally:
        writer.close(deadline_s=STDERR_DRAIN_S)


def _check_stdio_options(args: argparse.Namespace, pairs: list[tuple[str, str]]) -> None:
    """Refuse what stdio cannot honour: one universe, and no address or event feed to bind."""
    if len(pairs) != 1:
        raise ConfigError("--stdio serves exactly one universe", file="<command line>")
    given = [
        option
        for option, value in (
            ("--host", args.host),
            ("--port", args.port),
            ("--feed-port", args.feed_port),
            ("--allow-host", args.allow_host or None),
            ("--allow-origin", args.allow_origin or None),
        )
        if value is not None
    ]
    if given:
        raise ConfigError(
            f"--stdio speaks MCP on stdin/stdout and binds no socket: drop {', '.join(given)}",
            file="<command line>",
        )


def _run_stdio(server: MCPServer, sinks: list[Sink], held: _HeldSignals) -> None:
    """Serve over stdio with the same events as over HTTP (there is no router: see
    `StdioEvents`)."""
    assert isinstance(server, RecordedMCPServer)  # checked in run_serve
    events = StdioEvents(sinks, upstream=server.name)
    server.log_events = False
    server.add_listener(events.call)
    tune_gc_for_serving()
    events.started()
    error = None
    try:
        dropped = _run_dropping(server, held)
        if dropped is not None:
            error = f"{type(dropped).__name__}: {dropped}"
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        events.stopped(error=error)
    if dropped is not None:
        raise SystemExit(1)  # the process went away mid-call, as the fault asked


def _run_dropping(server: MCPServer, held: _HeldSignals) -> ProcessDropped | None:
    """Serve; the `drop` fault that ended the process early, if one did."""
    dropped: ProcessDropped | None = None
    try:
        session = lite_session(server)
        if session is None:
            import trio

            trio.run(_serve_stdio, server.serve_stdio, held)
        else:
            _serve_stdio_lazily(server, session, held)
    except* ProcessDropped as group:
        dropped = _first_dropped(group)
    return dropped


def _first_dropped(group: BaseExceptionGroup[ProcessDropped]) -> ProcessDropped:
    first = group.exceptions[0]
    return _first_dropped(first) if isinstance(first, BaseExceptionGroup) else first


def _serve_stdio_lazily(server: MCPServer, session: LiteSession, held: _HeldSignals) -> None:
    """A plain session on this thread, without Trio or the SDK (`_stdio_lite`), both loaded
    once a line needs them; until stdin closes, or a signal."""
    if held.received is not None:
        return  # stopped before it started
    with claimed_stdio() as (stdin_fd, stdout_fd), client_gone_ends_serving():
        try:
            pending = serve_here(session, stdin_fd, stdout_fd, held)
        except _Interrupted:
            return  # a stop signal while waiting for a line
        if pending is None or held.received is not None:
            return
        import trio

        serve = partial(serve_handed_over, server, session, stdin_fd, stdout_fd, pending)
        trio.run(_serve_stdio, serve, held)


async def _serve_stdio(serve: Callable[[], Awaitable[None]], held: _HeldSignals) -> None:
    """`serve()` until stdin closes, or a signal: the same clean stop as over HTTP."""
    import trio

    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        if held.received is not None:
            return  # stopped before it started
        async with trio.open_nursery() as nursery:

            async def stop_on_signal() -> None:
                async for _ in signals:
                    nursery.cancel_scope.cancel()

            nursery.start_soon(stop_on_signal)
            await serve()
            nursery.cancel_scope.cancel()


async def _serve_http(
    servers: dict[str, MCPServer],
    args: argparse.Namespace,
    events: Sink | list[Sink],
    stderr: PipeWriter,
    held: _HeldSignals | None = None,
) -> None:
    # Here, not at the top: the fleet's event feed loads a WebSocket stack (about 3% of
    # `wt serve --stdio`'s start-up), which stdio never binds.
    import trio

    from ..actors import open_fleet
    from ..agents.base import mcp_config

    with trio.open_signal_receiver(*STOP_SIGNALS) as signals:
        if held is not None and held.received is not None:
            return  # stopped before it started
        async with open_fleet(
            pack="serve",
            sinks=events if isinstance(events, list) else [events],
            host=args.host or "127.0.0.1",
            feed_port=args.feed_port,
            call_events=True,
            allowed_hosts=args.allow_host,
            allowed_origins=args.allow_origin,
        ) as fleet:
            ports = {name: args.port or 0 for name in servers}
            async with fleet.scenario("serve", servers, ports=ports) as run:
                if len(run.urls) == 1:
                    print(next(iter(run.urls.values())), flush=True)
                else:
                    print(json.dumps(mcp_config(run.urls), indent=2), flush=True)
                if fleet.feed is not None:
                    stderr.offer(f"event feed: {fleet.feed.url}\n".encode())
                tune_gc_for_serving()
                async for _ in signals:
                    break
