"""The fault model: what a replay is told to do wrong, to which calls (issue 28).

A `Fault` names its target (a tool, or `*` for every tool; optionally one recording, the Nth call
of the tool, or a fraction of its calls) and its kind:

| kind | the client sees |
|---|---|
| `error` | a JSON-RPC error (`code`, `message`) |
| `is_error` | a tool result with `isError: true` and `message` as its text |
| `timeout` | no answer, until the client gives up or cancels |
| `delay` | the answer, after `seconds` (or `"recorded"`: the recording's recorded duration) |
| `bad_schema` | a result whose `structuredContent` breaks the tool's `outputSchema` |
| `not_json` | text that is not JSON where the recording was JSON |
| `empty` | an empty result (`{"content": []}`) |
| `drop` | over HTTP, the connection closed mid-call; over stdio, the server process exits |

Two spellings, one model: the command line's `TOOL[RECORDING]#CALL@FRACTION=KIND[:ARGS]`
(`parse_fault`) and a TOML/JSON table with the same fields (`fault_from_table`), used by a
universe's `faults` section and by packs. Bad input is one `InputError` (the caller's class:
`ConfigError` for the command line and packs, `UniverseError` for a universe) naming the field
and what was expected.

Which calls a fraction selects is drawn from the unit's seed, the unit id, the tool and the call
number with sha256 (`draw`): the same on every machine, process and shard, never from a global
random state.

An injected fault is evidence: the call log entry carries `extra[FAULT_EXTRA_KEY]` (`evidence`),
kept apart from `extra["fault"]`, which is a server fault (a broken synthesize hook) that fails
the unit.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal, TypeAlias, get_args

import msgspec

from ..errors import ConfigError, InputError

__all__ = [
    "ALL_TOOLS",
    "DEFAULT_ERROR_CODE",
    "DEFAULT_ERROR_MESSAGE",
    "DEFAULT_IS_ERROR_TEXT",
    "FAILURE_MODES",
    "FAULT_EXTRA_KEY",
    "FAULT_FIELDS",
    "FAULT_KINDS",
    "Fault",
    "FaultKind",
    "draw",
    "fault_from_table",
    "faults_for_failure_mode",
    "faults_from_tables",
    "parse_fault",
    "parse_faults",
]

FaultKind: TypeAlias = Literal[
    "error", "is_error", "timeout", "delay", "bad_schema", "not_json", "empty", "drop"
]
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)

ALL_TOOLS = "*"
"""The target that names every tool."""

FAULT_EXTRA_KEY = "injected_fault"
"""Where a call-log entry (`MCPCall.extra`) carries the fault injected into it
(`Fault.evidence`)."""

DEFAULT_ERROR_CODE = -32603
DEFAULT_ERROR_MESSAGE = "Internal error"
DEFAULT_IS_ERROR_TEXT = "injected fault: the tool failed"

_NO_ARGUMENTS = frozenset({"timeout", "bad_schema", "not_json", "empty", "drop"})


class Fault(
    msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True
):
    """One fault: its target and its kind, with the kind's arguments.

    Target: `tool` (a tool name, or `*`), and at most one of `recording` (the index into the
    universe's `recordings` whose call is faulted: a call the recording answers), `call` (the
    Nth call of the tool, 1-based, counted per server since its last reset) and `fraction` (each
    call faulted with this probability, drawn by `draw`). With none, every call of the tool.

    Arguments: `code` and `message` for `error`; `message` for `is_error`; `seconds` for `delay`
    (a number, or `"recorded"`). `id` names the fault in the evidence (default: its command-line
    spelling, `spelling()`).
    """

    tool: str
    kind: FaultKind
    recording: int | None = None
    call: int | None = None
    fraction: float | None = None
    code: int | None = None
    message: str | None = None
    seconds: float | Literal["recorded"] | None = None
    id: str | None = None

    @property
    def fault_id(self) -> str:
        """The name of this fault in the evidence: its `id`, or its command-line spelling."""
        return self.id if self.id is not None else self.spelling()

    @property
    def error_code(self) -> int:
        return DEFAULT_ERROR_CODE if self.code is None else self.code

    @property
    def error_message(self) -> str:
        if self.message is not None:
            return self.message
        return DEFAULT_ERROR_MESSAGE if self.kind == "error" else DEFAULT_IS_ERROR_TEXT

    def targets_tool(self, tool_name: str) -> bool:
        return self.tool == ALL_TOOLS or self.tool == tool_name

    def selects(
        self,
        tool_name: str,
        call_number: int,
        recording: int | None,
        *,
        seed: int = 0,
        unit_id: str = "",
    ) -> bool:
        """Whether this fault applies to the `call_number`th call (1-based) of `tool_name`,
        answered by `recording` (None: a miss), in the unit `unit_id` with `seed`."""
        if not self.targets_tool(tool_name):
            return False
        if self.recording is not None:
            return recording == self.recording
        if self.call is not None:
            return call_number == self.call
        if self.fraction is not None:
            return draw(seed, unit_id, tool_name, call_number) < self.fraction
        return True

    def spelling(self) -> str:
        """The command-line form (`parse_fault(f.spelling())` gives `f` back, `id` aside)."""
        target = self.tool
        if self.recording is not None:
            target += f"[{self.recording}]"
        if self.call is not None:
            target += f"#{self.call}"
        if self.fraction is not None:
            target += f"@{self.fraction!r}"
        text = f"{target}={self.kind}"
        if self.kind == "error" and (self.code is not None or self.message is not None):
            text += f":{self.error_code}"
            if self.message is not None:
                text += f":{self.message}"
        elif self.kind == "is_error" and self.message is not None:
            text += f":{self.message}"
        elif self.kind == "delay" and self.seconds is not None:
            text += f":{self.seconds if self.seconds == 'recorded' else repr(self.seconds)}"
        return text

    def evidence(self, **details: Any) -> dict[str, Any]:
        """What the call log, the events and the trace say of this fault injected into a call:
        `id`, `kind`, `target` (the tool, or `*`) and the kind's arguments, plus `details`
        (e.g. the seconds a `recorded` delay waited)."""
        record: dict[str, Any] = {"id": self.fault_id, "kind": self.kind, "target": self.tool}
        for key in ("recording", "call", "fraction"):
            value = getattr(self, key)
            if value is not None:
                record[key] = value
        if self.kind == "error":
            record["code"] = self.error_code
            record["message"] = self.error_message
        elif self.kind == "is_error":
            record["message"] = self.error_message
        elif self.kind == "delay":
            record["seconds"] = self.seconds
        record.update(details)
        return record


FAULT_FIELDS = frozenset(field.encode_name for field in msgspec.structs.fields(Fault))
"""The fields a fault table may hold."""


def draw(seed: int, unit_id: str, tool_name: str, call_number: int) -> float:
    """A number in [0, 1) from sha256 of the unit's seed, its id, the tool and the call number:
    the same on every machine, and independent of anything else the process did."""
    key = f"{seed}\x00{unit_id}\x00{tool_name}\x00{call_number}".encode()
    digest = hashlib.sha256(key).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


# The command line: TOOL[RECORDING]#CALL@FRACTION=KIND[:ARGS], each of the three optional.
_TARGET = re.compile(
    r"""
    (?P<tool>[^\[\]#@=]+)
    (?:\[(?P<recording>[^\]]*)\])?
    (?:\#(?P<call>[^@=]*))?
    (?:@(?P<fraction>[^=]*))?
    """,
    re.VERBOSE,
)

GRAMMAR = (
    "TOOL[RECORDING]#CALL@FRACTION=KIND[:ARGS] (each of [RECORDING], #CALL, @FRACTION optional; "
    f"KIND one of {', '.join(FAULT_KINDS)})"
)


def parse_fault(
    text: str,
    *,
    error: type[InputError] = ConfigError,
    file: str | None = None,
    path: str | None = "--fault",
) -> Fault:
    """A fault from its command-line spelling:

        get_order=error                 every call: JSON-RPC error -32603 "Internal error"
        get_order=error:-32000:busy     ... with this code and message
        lookup@0.3=is_error:upstream down   30% of calls: an isError result with this text
        charge#2=timeout                the 2nd call of `charge` is never answered
        search=delay:2.5                every call answered 2.5 s late
        search=delay:recorded           at the recorded pace
        get_order[3]=empty              the call recording 3 answers gets an empty result
        *=drop                          every call of every tool: the connection drops

    Anything else is one `error` naming the part that is wrong."""

    def fail(message: str) -> InputError:
        return error(f"{message} in {text!r}; expected {GRAMMAR}", file=file, path=path)

    target, sep, rest = text.partition("=")
    if not sep:
        raise fail("no `=` between the target and the kind")
    matched = _TARGET.fullmatch(target.strip())
    if matched is None:
        raise fail(f"target {target!r} is not TOOL[RECORDING]#CALL@FRACTION")
    kind, _, arguments = rest.partition(":")
    kind = kind.strip()
    table: dict[str, Any] = {"tool": matched["tool"].strip(), "kind": kind}
    for key, convert in (("recording", int), ("call", int), ("fraction", float)):
        raw = matched[key]
        if raw is None:
            continue
        try:
            table[key] = convert(raw.strip())
        except ValueError:
            raise fail(
                f"{key} {raw!r} is not a {'number' if key == 'fraction' else 'whole number'}"
            ) from None
    if kind not in FAULT_KINDS:
        raise fail(f"unknown kind {kind!r}")
    if arguments or rest.endswith(":"):
        if kind in _NO_ARGUMENTS:
            raise fail(f"`{kind}` takes no arguments")
        table.update(_arguments(kind, arguments, fail))
    return fault_from_table(table, error=error, file=file, path=path)


def _arguments(kind: str, arguments: str, fail: Any) -> dict[str, Any]:
    if kind == "is_error":
        return {"message": arguments}
    if kind == "error":
        code, _, message = arguments.partition(":")
        try:
            table: dict[str, Any] = {"code": int(code.strip())}
        except ValueError:
            raise fail(f"error code {code!r} is not a whole number") from None
        if message:
            table["message"] = message
        return table
    # delay
    if arguments.strip() == "recorded":
        return {"seconds": "recorded"}
    try:
        return {"seconds": float(arguments)}
    except ValueError:
        raise fail(f"delay {arguments!r} is neither seconds nor `recorded`") from None


def parse_faults(texts: Iterable[str], *, error: type[InputError] = ConfigError) -> list[Fault]:
    """Each `--fault` in order (an error names `<command line>` and `--fault`)."""
    return [parse_fault(text, error=error, file="<command line>") for text in texts]


def fault_from_table(
    raw: Any,
    *,
    error: type[InputError] = ConfigError,
    file: str | None = None,
    path: str | None = None,
) -> Fault:
    """A fault from a TOML/JSON table with `Fault`'s fields, checked: one `error` naming the
    field (`path` plus the field) and what was expected."""
    where = path or "$"
    try:
        fault = msgspec.convert(raw, Fault)
    except msgspec.ValidationError as exc:
        message, _, inner = str(exc).partition(" - at `")
        field_path = where + inner.rstrip("`").removeprefix("$") if inner else where
        raise error(message, file=file, path=field_path) from None
    check_fault(fault, error=error, file=file, path=where)
    return fault


def faults_from_tables(
    raw: Any,
    *,
    error: type[InputError] = ConfigError,
    file: str | None = None,
    path: str = "$.faults",
    tolerant: bool = False,
) -> list[Fault]:
    """A list of fault tables (a universe's `faults`, a pack's), each checked. `tolerant`
    (a universe, forward tolerant within its version) leaves out fields `Fault` does not have
    instead of refusing them (`universe_warnings` names them)."""
    if not isinstance(raw, list):
        raise error(f"Expected `array`, got `{_json_type(raw)}`", file=file, path=path)
    if tolerant:
        raw = [
            {k: v for k, v in item.items() if k in FAULT_FIELDS} if isinstance(item, dict) else item
            for item in raw
        ]
    return [
        fault_from_table(item, error=error, file=file, path=f"{path}[{i}]")
        for i, item in enumerate(raw)
    ]


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, str):
        return "str"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return type(value).__name__
    return "null" if value is None else type(value).__name__


def check_fault(
    fault: Fault, *, error: type[InputError] = ConfigError, file: str | None = None, path: str = "$"
) -> None:
    """What the Struct's types cannot say: one target at most, ranges, arguments by kind."""

    def fail(field: str, message: str) -> InputError:
        return error(message, file=file, path=f"{path}.{field}")

    if not fault.tool.strip():
        raise fail("tool", "a fault needs a tool name (or `*` for every tool)")
    targets = [key for key in ("recording", "call", "fraction") if getattr(fault, key) is not None]
    if len(targets) > 1:
        raise fail(
            targets[1],
            f"a fault targets one of recording, call or fraction, not {' and '.join(targets)}",
        )
    if fault.recording is not None and fault.recording < 0:
        raise fail("recording", "a recording index is 0 or more")
    if fault.recording is not None and fault.tool == ALL_TOOLS:
        raise fail("tool", "a fault on one recording names that recording's tool, not `*`")
    if fault.call is not None and fault.call < 1:
        raise fail("call", "calls count from 1")
    if fault.fraction is not None and not (0.0 <= fault.fraction <= 1.0):
        raise fail("fraction", "a fraction is between 0 and 1")
    if fault.id is not None and not fault.id.strip():
        raise fail("id", "an id is a non-empty string")
    given = {key for key in ("code", "message", "seconds") if getattr(fault, key) is not None}
    allowed = {"error": {"code", "message"}, "is_error": {"message"}, "delay": {"seconds"}}.get(
        fault.kind, set()
    )
    for key in sorted(given - allowed):
        raise fail(key, f"`{fault.kind}` takes no `{key}`")
    if fault.kind == "delay":
        seconds = fault.seconds
        if seconds is None:
            raise fail("seconds", 'a delay needs `seconds`: a number, or "recorded"')
        if seconds != "recorded" and not (
            isinstance(seconds, float | int) and math.isfinite(seconds) and seconds >= 0
        ):
            raise fail("seconds", "a delay is 0 seconds or more")


FAILURE_MODES: dict[str, Fault] = {
    "timeout": Fault(tool=ALL_TOOLS, kind="timeout", id="timeout"),
    "malformed_json": Fault(tool=ALL_TOOLS, kind="not_json", id="malformed_json"),
    "empty_unexpected": Fault(tool=ALL_TOOLS, kind="empty", id="empty_unexpected"),
    "auth_scope_denied": Fault(
        tool=ALL_TOOLS,
        kind="is_error",
        message="Permission denied: auth scope insufficient",
        id="auth_scope_denied",
    ),
}
"""windtunnel-bench's `configure_failure_mode` modes, each as the fault it injects into every
tool call (its mock answered every call so)."""


def faults_for_failure_mode(
    mode: str | Fault | Sequence[str | Fault] | None,
) -> list[Fault]:
    """The faults `configure_failure_mode(mode)` installs: none for `None`, the seed's mode
    names (`FAILURE_MODES`), a `Fault`, a command-line spelling, or a list of those."""
    if mode is None:
        return []
    if isinstance(mode, Fault):
        return [mode]
    if isinstance(mode, str):
        if mode in FAILURE_MODES:
            return [FAILURE_MODES[mode]]
        if "=" not in mode:
            raise ConfigError(
                f"unknown failure mode {mode!r}; expected None, one of "
                f"{', '.join(FAILURE_MODES)}, or a fault as {GRAMMAR}"
            )
        return [parse_fault(mode, path="configure_failure_mode")]
    return [fault for item in mode for fault in faults_for_failure_mode(item)]
