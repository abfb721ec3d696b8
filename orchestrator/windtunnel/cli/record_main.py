"""`wt record`: stand between an agent and live MCP servers, and write what they answered.

    wt record URL -o crm.universe.json                 # prints the URL to give the agent
    wt record -o fs.universe.json -- npx @modelcontextprotocol/server-filesystem /tmp
    wt record --stdio -o fs.universe.json -- npx ...   # the agent spawns this instead
    wt record -o out/ crm=URL billing=-- node billing.js   # one universe each, mcpServers config

The universe is written atomically after every answered call (so nothing is lost if the proxy
dies) and once more on exit: Ctrl-C or SIGTERM, or, with `--stdio`, the agent closing stdin.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import trio

from .._groups import unwrap_single_error
from ..agents.base import mcp_config
from ..calls import MCPCall
from ..errors import ConfigError, InputError
from ..record.build import Recording
from ..record.credentials import mask_urls_in
from ..record.proxy import RecordingProxy, is_url
from ..record.redact import RedactionRules, load_rules_file, parse_rule
from ..record.saving import save_recording, write_atomically
from ..terminal_text import escape_terminal
from .logs import configure_logging
from .otel_options import open_otel_sink
from .record_command import add_record_options
from .universe_commands import secret_warning

if TYPE_CHECKING:
    from ..otel.sink import OtelSink

__all__ = ["UpstreamSpec", "parse_record_upstreams", "run_record"]

CHECKPOINT_INTERVAL_S = 0.2
"""At most this often the files are rewritten while recording (each write is a full file)."""
CHECKPOINT_BACKOFF = 10
"""A long session waits this many times as long as its last checkpoint took, so rewriting
stays under a tenth of the time however large the recording grows."""

_NAMED = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.\-]*)=(.*)$", re.DOTALL)


@dataclass(frozen=True)
class UpstreamSpec:
    name: str
    target: str | list[str]


def parse_record_upstreams(words: list[str]) -> tuple[list[str], list[UpstreamSpec]]:
    """Split the words after `wt record` into option words and upstreams."""
    options: list[str] = []
    specs: list[UpstreamSpec] = []
    position = 0
    while position < len(words):
        word = words[position]
        named = _NAMED.match(word)
        name, value = (named.group(1), named.group(2)) if named else (None, word)
        if value == "--":
            end = position + 1
            while end < len(words) and not _starts_upstream(words[end]):
                end += 1
            command = words[position + 1 : end]
            if not command:
                raise ConfigError(f"no command after {word!r}", file="<command line>")
            specs.append(UpstreamSpec(name or _command_name(command), command))
            position = end
            continue
        if is_url(value):
            specs.append(UpstreamSpec(name or "upstream", value))
        elif named and not word.startswith("-"):
            raise ConfigError(
                f"{mask_urls_in(word)!r}: expected NAME=URL (http:// or https://) or "
                "NAME=-- COMMAND",
                file="<command line>",
            )
        else:
            options.append(word)
        position += 1
    names = [spec.name for spec in specs]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(
                f"upstream name {name!r} is used twice; name them with NAME=URL or NAME=-- ...",
                file="<command line>",
            )
    return options, specs


def _starts_upstream(word: str) -> bool:
    named = _NAMED.match(word)
    return named is not None and (named.group(2) == "--" or is_url(named.group(2)))


_LAUNCHERS = re.compile(r"^(?:npx|uvx|uv|node|bunx|bun|deno|python[0-9.]*|pipx)$")
"""Programs that run the server named in their arguments: the name comes from those."""
_SCRIPTS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")
"""A script of a JavaScript package: named after the package (its nearest package.json), as
`npx PACKAGE` is, not after its file (`dist/index.js` is every package's `index`)."""
_PACKAGE_JSON_LIMIT = 1024 * 1024


def _command_name(command: list[str]) -> str:
    """`npx -y @modelcontextprotocol/server-filesystem /tmp` -> `server-filesystem`;
    `node .../server-everything/dist/index.js` -> `server-everything`."""
    words = command[1:] if _LAUNCHERS.match(Path(command[0]).name) else command
    for word in words:
        if not word.startswith("-") and word != "run":
            package = _package_name(word) if word.endswith(_SCRIPTS) else None
            name = package or word
            stem = name.rstrip("/").rsplit("/", 1)[-1].split("@", 1)[0]
            stem = stem if package else stem.split(".", 1)[0]
            return re.sub(r"[^A-Za-z0-9_.\-]", "_", stem) or "upstream"
    return "upstream"


def _package_name(script: str) -> str | None:
    """The `name` in the package.json nearest above `script`, if there is a readable one."""
    for directory in Path(script).resolve().parents:
        manifest = directory / "package.json"
        try:
            if not manifest.is_file() or manifest.stat().st_size > _PACKAGE_JSON_LIMIT:
                continue
            name = json.loads(manifest.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            return None
        return name if isinstance(name, str) and name.strip("@/") else None
    return None


def run_record(args: argparse.Namespace) -> int:
    option_words, specs = parse_record_upstreams(args.upstreams)
    if option_words:
        options = argparse.ArgumentParser(prog="wt record", add_help=False, exit_on_error=False)
        add_record_options(options)
        try:
            _, unknown = options.parse_known_args(option_words, namespace=args)
        except argparse.ArgumentError as exc:
            raise ConfigError(str(exc), file="<command line>") from None
        if unknown:
            raise ConfigError(
                f"not an upstream or option: {' '.join(unknown)}", file="<command line>"
            )
    if not specs:
        raise ConfigError(
            "give an upstream: URL, -- COMMAND ARGS..., or NAME=... for several",
            file="<command line>",
        )
    if not args.output:
        raise ConfigError("-o PATH is required (where the universe goes)", file="<command line>")
    if args.stdio and len(specs) != 1:
        raise ConfigError("--stdio records exactly one upstream", file="<command line>")
    listening = [
        option
        for option, values in (
            ("--allow-host", args.allow_host),
            ("--allow-origin", args.allow_origin),
        )
        if values
    ]
    if args.stdio and listening:
        raise ConfigError(
            f"--stdio speaks MCP on stdin/stdout and binds no socket: drop {', '.join(listening)}",
            file="<command line>",
        )
    if args.port and len(specs) != 1:
        raise ConfigError("--port needs exactly one upstream", file="<command line>")
    if args.timeout is not None and args.timeout <= 0:
        raise ConfigError("--timeout must be positive", file="<command line>")
    rules = RedactionRules()
    for spec in args.redact:
        rules.extend(parse_rule(spec))
    if args.redact_rules:
        rules.extend(load_rules_file(args.redact_rules))
    outputs = _outputs(Path(args.output), specs)
    configure_logging(fmt=args.log_format, stream=sys.stderr)
    proxies = {
        spec.name: RecordingProxy(spec.target, name=spec.name, redact=rules, timeout_s=args.timeout)
        for spec in specs
    }
    recorder = _Recorder(proxies, outputs, args.log)
    with unwrap_single_error(), open_otel_sink(args, units=False, pack="record") as otel:
        if otel is not None:
            for proxy in proxies.values():
                proxy.exporter = partial(_export_call, otel, proxy)
        if args.stdio:
            trio.run(recorder.record_stdio)
        else:
            trio.run(recorder.record_http, args.host, args.port, args.allow_host, args.allow_origin)
    return recorder.finish()


def _export_call(
    otel: OtelSink, proxy: RecordingProxy, call: MCPCall, traceparent: str | None
) -> None:
    otel.publish_live_call(call, upstream=proxy.name, trace_parent=traceparent)


def _outputs(output: Path, specs: list[UpstreamSpec]) -> dict[str, Path]:
    if len(specs) == 1 and not output.is_dir():
        if not output.parent.is_dir():
            raise ConfigError("the directory does not exist", file=str(output))
        return {specs[0].name: output}
    if output.exists() and not output.is_dir():
        raise ConfigError(
            "several upstreams write one universe each: -o must be a directory", file=str(output)
        )
    output.mkdir(parents=True, exist_ok=True)
    return {spec.name: output / f"{spec.name}.universe.json" for spec in specs}


class _Recorder:
    """Runs the proxies, keeps their files current, and reports what was written."""

    def __init__(
        self, proxies: dict[str, RecordingProxy], outputs: dict[str, Path], log: str | None
    ) -> None:
        self.proxies = proxies
        self.outputs = outputs
        self.log = log
        self.failed: str | None = None
        self._reported_failure = False

    async def record_http(
        self, host: str, port: int, allowed_hosts: list[str], allowed_origins: list[str]
    ) -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                urls = {
                    name: await proxy.start(
                        nursery,
                        host=host,
                        port=port,
                        allowed_hosts=allowed_hosts,
                        allowed_origins=allowed_origins,
                    )
                    for name, proxy in self.proxies.items()
                }
                if len(urls) == 1:
                    print(next(iter(urls.values())), flush=True)
                else:
                    print(json.dumps(mcp_config(urls), indent=2), flush=True)
                nursery.start_soon(self._checkpoints)
                async for _ in signals:
                    break
                for proxy in self.proxies.values():
                    await proxy.stop()
                nursery.cancel_scope.cancel()

    async def record_stdio(self) -> None:
        proxy = next(iter(self.proxies.values()))
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:

                async def stop_on_signal() -> None:
                    async for _ in signals:
                        nursery.cancel_scope.cancel()

                nursery.start_soon(stop_on_signal)
                nursery.start_soon(self._checkpoints)
                await proxy.serve_stdio()
                nursery.cancel_scope.cancel()

    async def _checkpoints(self) -> None:
        """Rewrite the files after changes, at most every CHECKPOINT_INTERVAL_S."""
        while True:
            async with trio.open_nursery() as waiting:
                for proxy in self.proxies.values():
                    waiting.start_soon(_wait_then_cancel, proxy.changed, waiting.cancel_scope)
            for proxy in self.proxies.values():
                proxy.changed = trio.Event()
            started = trio.current_time()
            recordings = self._snapshot(final=False)
            await trio.to_thread.run_sync(self._save, recordings, False)
            took = trio.current_time() - started
            await trio.sleep(max(CHECKPOINT_INTERVAL_S, CHECKPOINT_BACKOFF * took))

    def _snapshot(self, *, final: bool) -> dict[str, Recording]:
        """Built on the Trio thread: the taps change there. Only the final one looks for what
        still looks like a secret (for the report): on a checkpoint that scan would hold the
        event loop, and with it the answer in flight, ~0.5 s per MiB recorded."""
        with_log = self.log is not None
        return {
            name: proxy.recording(with_log=with_log, find_secrets=final)
            for name, proxy in self.proxies.items()
        }

    def _save(self, recordings: dict[str, Recording], final: bool) -> None:
        """The log first (it holds every message), then each universe; one failing write
        does not keep the others from being written."""
        errors: list[str] = []
        if self.log is not None:
            lines = sorted(
                (line for r in recordings.values() for line in r.log_lines),
                key=lambda line: msgspec.json.decode(line)["ts"],
            )
            try:
                write_atomically(self.log, b"".join(line + b"\n" for line in lines))
            except InputError as exc:
                errors.append(str(exc))
        for name, recording in recordings.items():
            try:
                save_recording(recording, self.outputs[name])
            except InputError as exc:
                errors.append(str(exc))
        self.failed = "; ".join(errors) if errors else None
        if errors and not final and not self._reported_failure:
            self._reported_failure = True
            for error in errors:
                print(f"wt record: error: {error} (kept in memory)", file=sys.stderr)

    def finish(self) -> int:
        recordings = self._snapshot(final=True)
        self._save(recordings, True)
        if self.failed is not None:
            raise InputError(f"{self.failed}; {_counts(recordings)} recorded but not written")
        for name, recording in recordings.items():
            _report(name, self.outputs[name], recording, self.proxies[name])
        return 0


async def _wait_then_cancel(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def _counts(recordings: dict[str, Recording]) -> str:
    calls = sum(len(r.universe.recordings) for r in recordings.values())
    return f"{calls} recording(s) from {len(recordings)} upstream(s)"


def _report(name: str, path: Path, recording: Recording, proxy: RecordingProxy) -> None:
    """The summary: tool names, methods and JSON paths come from the upstream, so every line is
    redacted (what the recording knows to be secret) and escaped (terminal control bytes)."""

    def say(line: str) -> None:
        print(escape_terminal(proxy.redactor.printable(line)), file=sys.stderr)

    universe = recording.universe
    tap = proxy.tap
    sequence = [tool.name for tool in universe.tools if tool.mode == "sequence"]
    line = (
        f"{name}: {len(tap.calls)} call(s), {len(universe.recordings)} recording(s), "
        f"{len(universe.tools)} tool(s) -> {path}"
    )
    if sequence:
        line += f" (sequence mode: {', '.join(sequence)})"
    say(line)
    if recording.redacted:
        rules = ", ".join(f"{rule} {count}" for rule, count in recording.redacted.items())
        distinct = sum(recording.redacted.values())
        say(f"{name}: redacted {distinct} distinct value(s): {rules}")
    for rule in proxy.redactor.unmatched():
        say(f"{name}: --redact {rule} matched nothing")
    if tap.failed_calls:
        failed = tap.failed_calls
        say(f"{name}: {failed} call(s) answered with a JSON-RPC error are in the log only")
    unanswered = tap.unanswered()
    if unanswered:
        say(f"{name}: {len(unanswered)} request(s) never answered: {', '.join(unanswered)}")
    if recording.unlisted_tools:
        say(
            f"{name}: tools called but never listed (declared with an open schema): "
            f"{', '.join(recording.unlisted_tools)}"
        )
    for json_path, kind in recording.secrets_left:
        say(secret_warning(str(path), json_path, kind))
