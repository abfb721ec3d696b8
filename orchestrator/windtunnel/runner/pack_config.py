"""Loading packs: TOML pack files (docs/pack-format.md) and Python `module:attribute` packs.

A TOML pack is data only: loading it never runs code (a `python` agent's callable is imported
when a run starts, not here). Paths are relative to the TOML file; universe files must exist but
are loaded lazily, by the factory, per run. Every problem is one `ConfigError` that names the
file and the key path, e.g. ``configs/demo.toml at scenario[2].policies[0].kind: ...``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from ..canonical import is_json_value
from ..errors import ConfigError
from ..faults.spec import Fault, fault_from_table, parse_fault
from ..input_files import MAX_PACK_BYTES, read_input
from ..record.modes import RECORD_MODE_ENV, choose_record_mode
from ..record.redact import parse_rule
from .agent_spec import AgentSpec
from .fault_policies import (
    did_not_fabricate,
    no_call_after_fault,
    reported_failure,
    retried_after_fault,
)
from .pack_errors import toml_type
from .pack_file import (
    AgentTable,
    CallBudgetTable,
    CallOrderTable,
    CommandAgentTable,
    ContainsTable,
    CoverageTable,
    DidNotFabricateTable,
    ForbiddenCallTable,
    JsonFieldTable,
    NoCallAfterFaultTable,
    NoDivergenceTable,
    PlanStepTable,
    PolicyTable,
    PythonAgentTable,
    RecordTable,
    RegexTable,
    ReportedFailureTable,
    RequiredCallTable,
    RetriedAfterFaultTable,
    ScenarioTable,
    ScorerTable,
    decode_pack_file,
)
from .policies import (
    Policy,
    call_budget,
    call_order,
    coverage,
    forbidden_call,
    no_divergence,
    required_call,
)
from .record_modes import PackRecording, UpstreamRecording
from .scenario import PlanStep, Scenario, ScenarioPack
from .scorers import Scorer, contains, json_field, regex

__all__ = ["load_pack", "load_pack_toml"]

_UPSTREAM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_TASK_VIA = ("arg", "file", "stdin")
_NOT_JSON = "expected JSON-like data (strings, numbers, booleans, arrays, tables)"


class _Checks:
    """The checks a Struct cannot make, each failing with the file and the key path."""

    def __init__(self, file: str, relocated: Mapping[str, str] | None = None) -> None:
        self.file = file
        self.relocated = relocated or {}
        self.recording: PackRecording | None = None

    def fail(self, message: str, path: str) -> NoReturn:
        raise ConfigError(message, file=self.file, path=path)

    def json(self, value: Any, path: str) -> Any:
        if not is_json_value(value):
            self.fail(_NOT_JSON, path)
        return value

    def upstream(self, name: str | None, upstreams: Mapping[str, Path], path: str) -> None:
        if name is not None and name not in upstreams:
            having = ", ".join(sorted(upstreams)) if upstreams else "none"
            self.fail(f"unknown upstream {name!r}; this scenario has {having}", path)

    def agent(self, table: AgentTable, path: str) -> AgentSpec:
        if isinstance(table, CommandAgentTable) and table.task_via not in _TASK_VIA:
            self.fail(
                f"unknown task_via {table.task_via!r}; expected one of {', '.join(_TASK_VIA)}",
                f"{path}.task_via",
            )
        python = None
        if isinstance(table, CommandAgentTable) and table.python is not None:
            python = self.interpreter(table.python, f"{path}.python")
        try:
            return AgentSpec(
                kind=table.__struct_config__.tag,  # type: ignore[arg-type]  # the union's tags
                command=list(table.command) if isinstance(table, CommandAgentTable) else [],
                task_via=table.task_via if isinstance(table, CommandAgentTable) else "stdin",  # type: ignore[arg-type]  # checked above
                env=dict(table.env),
                callable=table.callable if isinstance(table, PythonAgentTable) else None,
                python=python,
            )
        except ConfigError as exc:
            self.fail(exc.message, f"{path}.{exc.path}" if exc.path else path)

    def interpreter(self, written: str, path: str) -> str:
        """The agent's interpreter, relative to the pack file, as an absolute path.

        Symlinks are kept, never resolved: `.venv/bin/python` is a link to the base
        interpreter, and only through the link's own path does Python find the venv.
        """
        file = os.path.abspath(os.path.normpath(Path(self.file).parent / written))
        try:
            exists, is_dir = os.path.exists(file), os.path.isdir(file)
        except (OSError, ValueError) as exc:  # a NUL byte, a name or path too long, ...
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            self.fail(f"unusable interpreter path: {reason}", path)
        if not exists:
            self.fail(
                f"no such interpreter {file!r} (python = {written!r} is relative to the pack "
                "file; create the agent's venv first)",
                path,
            )
        if is_dir:
            self.fail(f"{file!r} is a directory, expected the agent's interpreter", path)
        if not os.access(file, os.X_OK):
            self.fail(f"{file!r} is not executable, expected the agent's interpreter", path)
        return file

    def records(self, upstream: str) -> bool:
        """Whether the upstream's record mode records its universe (`once`, `all`): its file
        need not exist yet."""
        if self.recording is not None:
            mode = self.recording.mode_of(upstream)
        else:
            mode = choose_record_mode(None, where=RECORD_MODE_ENV)
        return mode in ("once", "all")

    def recording_of(self, table: RecordTable | None) -> PackRecording | None:
        """The pack's `[record]` as the run's `mcp_factory`; none without the table (then
        `WT_RECORD_MODE` alone applies, read by the default factory)."""
        if table is None:
            return None
        upstreams = {}
        for name, entry in table.upstreams.items():
            where = f"record.upstreams.{name}"
            for i, spec in enumerate(entry.redact):
                try:
                    parse_rule(spec, where=f"{self.file}: {where}.redact[{i}]")
                except ConfigError as exc:
                    self.fail(exc.message, f"{where}.redact[{i}]")
            upstreams[name] = UpstreamRecording(
                mode=entry.mode, live=entry.live, redact=tuple(entry.redact)
            )
        return PackRecording(mode=table.mode, upstreams=upstreams, where=f"{self.file}: [record]")

    def upstreams(self, table: Mapping[str, str], base: Path, path: str) -> dict[str, Path]:
        upstreams: dict[str, Path] = {}
        for name, written in table.items():
            where = f"{path}.{name}"
            if not _UPSTREAM_NAME.match(name):
                self.fail(
                    "an upstream name uses letters, digits, '_', '-' and '.', and starts with a "
                    "letter or digit",
                    where,
                )
            file = Path(os.path.normpath(base / self.relocated.get(written, written)))
            try:
                exists, is_dir = file.exists(), file.is_dir()
            except (OSError, ValueError) as exc:  # a NUL byte, a name or path too long, ...
                reason = exc.strerror if isinstance(exc, OSError) else str(exc)
                self.fail(f"unusable universe path: {reason}", where)
            if not exists and not self.records(name):
                self.fail(f"no such universe file {os.fspath(file)!r}", where)
            if is_dir:
                self.fail(f"{os.fspath(file)!r} is a directory, expected a universe file", where)
            upstreams[name] = file.resolve()
        return upstreams

    def policy(self, table: PolicyTable, upstreams: Mapping[str, Path], path: str) -> Policy:
        if isinstance(table, NoDivergenceTable):
            return no_divergence()
        if isinstance(table, RequiredCallTable | ForbiddenCallTable):
            args = None if table.args is None else self.json(table.args, f"{path}.args")
            self.upstream(table.upstream, upstreams, f"{path}.upstream")
            build = required_call if isinstance(table, RequiredCallTable) else forbidden_call
            return build(table.tool, args, table.upstream)
        if isinstance(table, CallBudgetTable):
            return call_budget(table.max_calls, table.tool)
        if isinstance(table, CallOrderTable):
            return call_order(list(table.tools))
        if isinstance(table, RetriedAfterFaultTable):
            return retried_after_fault(table.tool)
        if isinstance(table, NoCallAfterFaultTable):
            return no_call_after_fault(table.tool, table.after)
        if isinstance(table, DidNotFabricateTable | ReportedFailureTable):
            return self.text_policy(table, path)
        assert isinstance(table, CoverageTable)
        self.upstream(table.upstream, upstreams, f"{path}.upstream")
        return coverage(table.tool, table.upstream, table.minimum)

    def text_policy(self, table: DidNotFabricateTable | ReportedFailureTable, path: str) -> Policy:
        """A policy on the final answer after a fault, with its pattern (or the default)."""
        try:
            if isinstance(table, DidNotFabricateTable):
                return (
                    did_not_fabricate()
                    if table.pattern is None
                    else did_not_fabricate(table.pattern)
                )
            return reported_failure() if table.pattern is None else reported_failure(table.pattern)
        except ConfigError as exc:
            self.fail(exc.message, f"{path}.pattern")

    def scorer(self, table: ScorerTable, path: str) -> Scorer:
        if isinstance(table, ContainsTable):
            return contains(table.text, table.case_sensitive, table.threshold)
        if isinstance(table, RegexTable):
            try:
                return regex(table.pattern, table.threshold)
            except ConfigError as exc:
                self.fail(exc.message, f"{path}.pattern")
        assert isinstance(table, JsonFieldTable)
        equals = self.json(table.equals, f"{path}.equals")
        try:
            return json_field(table.field, equals, table.threshold)
        except ConfigError as exc:
            self.fail(exc.message, f"{path}.field")

    def faults(self, entries: list[Any], path: str) -> list[Fault]:
        """Each fault, as a command-line spelling or a table, checked by the fault model."""
        faults = []
        for i, entry in enumerate(entries):
            where = f"{path}[{i}]"
            if isinstance(entry, str):
                faults.append(parse_fault(entry, file=self.file, path=where))
            elif isinstance(entry, dict):
                faults.append(fault_from_table(entry, file=self.file, path=where))
            else:
                self.fail(
                    'expected a fault as a string (e.g. "charge=timeout") or a table, got '
                    + toml_type(entry),
                    where,
                )
        return faults

    def plan(
        self, steps: list[PlanStepTable], upstreams: Mapping[str, Path], path: str
    ) -> list[PlanStep]:
        plan: list[PlanStep] = []
        for i, step in enumerate(steps):
            where = f"{path}[{i}]"
            upstream = step.upstream
            self.upstream(upstream, upstreams, f"{where}.upstream")
            if upstream is None:
                if len(upstreams) == 1:
                    upstream = next(iter(upstreams))
                elif upstreams:
                    self.fail(
                        "required when the scenario has several upstreams "
                        f"({', '.join(sorted(upstreams))})",
                        f"{where}.upstream",
                    )
            args = {} if step.args is None else self.json(step.args, f"{where}.args")
            plan.append(PlanStep(tool=step.tool, args=dict(args), upstream=upstream))
        return plan

    def scenario(
        self, table: ScenarioTable, base: Path, repeats: int, timeout_s: float, path: str
    ) -> Scenario:
        upstreams = self.upstreams(table.upstreams, base, f"{path}.upstreams")
        policies = [
            self.policy(item, upstreams, f"{path}.policies[{i}]")
            for i, item in enumerate(table.policies)
        ]
        scorers = [
            self.scorer(item, f"{path}.scorers[{i}]") for i, item in enumerate(table.scorers)
        ]
        plan = self.plan(table.plan, upstreams, f"{path}.plan")
        agent = None if table.agent is None else self.agent(table.agent, f"{path}.agent")
        metadata = self.json(table.metadata, f"{path}.metadata")
        faults = self.faults(table.faults, f"{path}.faults")
        return Scenario(
            name=table.name,
            task=table.task,
            upstreams=upstreams,
            policies=policies,
            scorers=scorers,
            repeats=table.repeats if table.repeats is not None else repeats,
            timeout_s=table.timeout_s if table.timeout_s is not None else timeout_s,
            tags=list(table.tags),
            plan=plan,
            final_answer=table.scripted.final_answer if table.scripted is not None else None,
            agent=agent,
            metadata=dict(metadata),
            faults=faults,
        )


def load_pack_toml(
    path: str | os.PathLike[str], *, relocated: Mapping[str, str] | None = None
) -> ScenarioPack:
    """Read and check a TOML pack; any problem is a `ConfigError` naming file and key path.

    `relocated` maps a universe path as the file writes it to the file to read instead: a Ray
    task reads the copies shipped with the pack (`scale/ray_ship.py`)."""
    file = os.fspath(path)
    raw = read_input(file, what="a pack file", error=ConfigError, limit=MAX_PACK_BYTES)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", file=file) from None
    except RecursionError:
        raise ConfigError("invalid TOML: nested too deeply to read", file=file) from None
    except UnicodeDecodeError as exc:
        # tomllib decodes before it parses: invalid UTF-8 is not a TOMLDecodeError.
        raise ConfigError(
            f"invalid TOML: not UTF-8 ({exc.reason} at byte {exc.start})", file=file
        ) from None
    pack_file = decode_pack_file(data, file)
    checks = _Checks(file, relocated)
    checks.recording = checks.recording_of(pack_file.record)
    pack = pack_file.pack
    agent = None if pack_file.agent is None else checks.agent(pack_file.agent, "agent")
    if not pack_file.scenario:
        checks.fail("a pack needs at least one [[scenario]]", "scenario")
    base = Path(file).parent
    scenarios: list[Scenario] = []
    first_at: dict[str, str] = {}
    for i, table in enumerate(pack_file.scenario):
        where = f"scenario[{i}]"
        if table.name in first_at:
            checks.fail(
                f"duplicate scenario name {table.name!r} (first at {first_at[table.name]})",
                f"{where}.name",
            )
        first_at[table.name] = where
        scenarios.append(checks.scenario(table, base, pack.repeats, pack.timeout_s, where))
    return ScenarioPack(
        name=pack.name,
        scenarios=scenarios,
        agent=agent,
        concurrency=pack.concurrency,
        source=file,
        mcp_factory=checks.recording,
    )


def _import_module(module: str, spec: str, *, import_from_cwd: bool = True) -> Any:
    if module.endswith(".py"):
        location = Path(module)
        if not location.is_file():
            raise ConfigError("no such file", file=module)
        module_name = f"_windtunnel_pack_{location.stem}"
        import_spec = importlib.util.spec_from_file_location(module_name, location)
        if import_spec is None or import_spec.loader is None:
            raise ConfigError("cannot import this file", file=module)
        loaded = importlib.util.module_from_spec(import_spec)
        sys.modules[module_name] = loaded
        import_spec.loader.exec_module(loaded)
        return loaded
    # Like `python -m`, user packs import from the current directory.
    if import_from_cwd and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            raise ConfigError(f"no module named {exc.name!r}", file=spec) from None
        raise


def load_pack(spec: str | os.PathLike[str], *, import_from_cwd: bool = True) -> ScenarioPack:
    """A pack from a TOML file, or from `module:attribute` / `path/to/file.py:attribute`.

    The attribute is a `ScenarioPack` or a callable taking no arguments that returns one.
    Importing a module runs the user's own code; a TOML file never runs code. A module is
    imported from `sys.path` and, unless `import_from_cwd` is false, the current directory.
    """
    text = os.fspath(spec)
    # Any existing file but a directory: a FIFO or a device is refused by name, not mistaken
    # for `module:attribute`.
    if text.endswith(".toml") or (os.path.exists(text) and not os.path.isdir(text)):
        return load_pack_toml(text)
    module, sep, attr = text.rpartition(":")
    if not sep or not module or not attr:
        raise ConfigError(
            "expected a .toml pack file or module:attribute (e.g. packs.billing:pack)", file=text
        )
    loaded = _import_module(module, text, import_from_cwd=import_from_cwd)
    try:
        target: Any = loaded
        for part in attr.split("."):
            target = getattr(target, part)
    except AttributeError:
        raise ConfigError(f"module {module!r} has no attribute {attr!r}", file=text) from None
    if not isinstance(target, ScenarioPack) and callable(target):
        target = target()
    if not isinstance(target, ScenarioPack):
        raise ConfigError(f"is a {type(target).__name__}, expected a ScenarioPack", file=text)
    return target
