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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..input_files import MAX_PACK_BYTES, read_input
from .agent_spec import AgentSpec
from .config_fields import Fields
from .policies import (
    Policy,
    call_budget,
    call_order,
    coverage,
    forbidden_call,
    no_divergence,
    required_call,
)
from .scenario import PlanStep, Scenario, ScenarioPack
from .scorers import Scorer, contains, json_field, regex

__all__ = ["POLICY_KINDS", "SCORER_KINDS", "load_pack", "load_pack_toml"]

_UPSTREAM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _one_of(names: Mapping[str, object] | tuple[str, ...]) -> str:
    return ", ".join(sorted(names))


def _upstream_ref(table: Fields, upstreams: Mapping[str, Path]) -> str | None:
    upstream = table.text("upstream")
    if upstream is not None and upstream not in upstreams:
        having = _one_of(upstreams) if upstreams else "none"
        table.fail(f"unknown upstream {upstream!r}; this scenario has {having}", "upstream")
    return upstream


def _no_divergence(table: Fields, upstreams: Mapping[str, Path]) -> Policy:
    return no_divergence()


def _required_call(table: Fields, upstreams: Mapping[str, Path]) -> Policy:
    tool = table.required_text("tool")
    return required_call(tool, table.json_table("args"), _upstream_ref(table, upstreams))


def _forbidden_call(table: Fields, upstreams: Mapping[str, Path]) -> Policy:
    tool = table.required_text("tool")
    return forbidden_call(tool, table.json_table("args"), _upstream_ref(table, upstreams))


def _call_budget(table: Fields, upstreams: Mapping[str, Path]) -> Policy:
    if not table.has("max_calls"):
        table.fail("required key missing", "max_calls")
    max_calls = table.integer("max_calls", 0, minimum=0)
    return call_budget(max_calls, table.text("tool"))


def _call_order(table: Fields, upstreams: Mapping[str, Path]) -> Policy:
    return call_order(table.str_list("tools", required=True, nonempty=True))


def _coverage(table: Fields, upstreams: Mapping[str, Path]) -> Policy:
    minimum = table.number("minimum", 1.0, minimum=0.0, maximum=1.0)
    return coverage(table.text("tool"), _upstream_ref(table, upstreams), minimum)


POLICY_KINDS: dict[str, Callable[[Fields, Mapping[str, Path]], Policy]] = {
    "no_divergence": _no_divergence,
    "required_call": _required_call,
    "forbidden_call": _forbidden_call,
    "call_budget": _call_budget,
    "call_order": _call_order,
    "coverage": _coverage,
}


def _threshold(table: Fields) -> float:
    return table.number("threshold", 1.0, minimum=0.0, maximum=1.0)


def _contains(table: Fields) -> Scorer:
    text = table.required_text("text")
    return contains(text, table.flag("case_sensitive", False), _threshold(table))


def _regex(table: Fields) -> Scorer:
    pattern = table.required_text("pattern")
    threshold = _threshold(table)
    try:
        return regex(pattern, threshold)
    except ConfigError as exc:
        table.fail(exc.message, "pattern")


def _json_field(table: Fields) -> Scorer:
    field = table.required_text("field")
    equals = table.json("equals", required=True)
    threshold = _threshold(table)
    try:
        return json_field(field, equals, threshold)
    except ConfigError as exc:
        table.fail(exc.message, "field")


SCORER_KINDS: dict[str, Callable[[Fields], Scorer]] = {
    "contains": _contains,
    "regex": _regex,
    "json_field": _json_field,
}


def _kind(table: Fields, kinds: Mapping[str, object], what: str) -> str:
    kind = table.required_text("kind")
    if kind not in kinds:
        table.fail(f"unknown {what} {kind!r}; expected one of {_one_of(kinds)}", "kind")
    return kind


def _agent(table: Fields) -> AgentSpec:
    kind = _kind(table, {"command": 0, "python": 0, "scripted": 0}, "agent kind")
    command: list[str] = []
    task_via = "stdin"
    callable_ref: str | None = None
    env = table.str_table("env")
    if kind == "command":
        command = table.str_list("command", required=True, nonempty=True)
        task_via = table.text("task_via") or "stdin"
        if task_via not in ("stdin", "file", "arg"):
            table.fail(
                f"unknown task_via {task_via!r}; expected one of arg, file, stdin", "task_via"
            )
    else:
        for key in ("command", "task_via"):
            table.reject(key, f"not used by agent kind {kind!r}")
    if kind == "python":
        callable_ref = table.text("callable", required=True)
    else:
        table.reject("callable", f"not used by agent kind {kind!r}")
    table.finish()
    try:
        return AgentSpec(
            kind=kind,  # type: ignore[arg-type]  # checked against the kinds above
            command=command,
            task_via=task_via,  # type: ignore[arg-type]  # checked above
            env=env,
            callable=callable_ref,
        )
    except ConfigError as exc:
        table.fail(exc.message, exc.path)


def _upstreams(table: Fields | None, base: Path) -> dict[str, Path]:
    if table is None:
        return {}
    upstreams: dict[str, Path] = {}
    for name in table.data:
        written = table.required_text(name)
        if not _UPSTREAM_NAME.match(name):
            table.fail(
                "an upstream name uses letters, digits, '_', '-' and '.', and starts with a "
                "letter or digit",
                name,
            )
        path = Path(os.path.normpath(base / written))
        try:
            exists, is_dir = path.exists(), path.is_dir()
        except (OSError, ValueError) as exc:  # a NUL byte, a name or path too long, ...
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            table.fail(f"unusable universe path: {reason}", name)
        if not exists:
            table.fail(f"no such universe file {os.fspath(path)!r}", name)
        if is_dir:
            table.fail(f"{os.fspath(path)!r} is a directory, expected a universe file", name)
        upstreams[name] = path.resolve()
    table.finish()
    return upstreams


def _plan(items: list[Fields], upstreams: Mapping[str, Path]) -> list[PlanStep]:
    steps: list[PlanStep] = []
    for step in items:
        tool = step.required_text("tool")
        upstream = _upstream_ref(step, upstreams)
        if upstream is None:
            if len(upstreams) == 1:
                upstream = next(iter(upstreams))
            elif upstreams:
                step.fail(
                    f"required when the scenario has several upstreams ({_one_of(upstreams)})",
                    "upstream",
                )
        args = step.json_table("args") or {}
        step.finish()
        steps.append(PlanStep(tool=tool, args=args, upstream=upstream))
    return steps


class _PackDefaults:
    def __init__(self, repeats: int, timeout_s: float) -> None:
        self.repeats = repeats
        self.timeout_s = timeout_s


def _scenario(table: Fields, base: Path, defaults: _PackDefaults) -> Scenario:
    name = table.required_text("name")
    task = table.required_text("task")
    repeats = table.integer("repeats", defaults.repeats, minimum=1)
    timeout_s = table.number("timeout_s", defaults.timeout_s, minimum=0.0, exclusive_minimum=True)
    tags = table.str_list("tags")
    upstreams = _upstreams(table.table("upstreams"), base)
    policies: list[Policy] = []
    for item in table.tables("policies", header="scenario.policies"):
        policies.append(POLICY_KINDS[_kind(item, POLICY_KINDS, "policy")](item, upstreams))
        item.finish()
    scorers: list[Scorer] = []
    for item in table.tables("scorers", header="scenario.scorers"):
        scorers.append(SCORER_KINDS[_kind(item, SCORER_KINDS, "scorer")](item))
        item.finish()
    plan = _plan(table.tables("plan", header="scenario.plan"), upstreams)
    final_answer: str | None = None
    scripted = table.table("scripted")
    if scripted is not None:
        final_answer = scripted.text("final_answer", nonempty=False)
        scripted.finish()
    agent_table = table.table("agent")
    agent = _agent(agent_table) if agent_table is not None else None
    metadata = table.json_table("metadata") or {}
    table.finish()
    return Scenario(
        name=name,
        task=task,
        upstreams=upstreams,
        policies=policies,
        scorers=scorers,
        repeats=repeats,
        timeout_s=timeout_s,
        tags=tags,
        plan=plan,
        final_answer=final_answer,
        agent=agent,
        metadata=metadata,
    )


def load_pack_toml(path: str | os.PathLike[str]) -> ScenarioPack:
    """Read and check a TOML pack; any problem is a `ConfigError` naming file and key path."""
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
    base = Path(file).parent
    root = Fields(data, "", file)
    pack = root.table("pack", required=True)
    assert pack is not None  # `required` has failed otherwise
    name = pack.required_text("name")
    concurrency = pack.integer("concurrency", 4, minimum=1)
    defaults = _PackDefaults(
        pack.integer("repeats", 1, minimum=1),
        pack.number("timeout_s", 60.0, minimum=0.0, exclusive_minimum=True),
    )
    pack.finish()
    agent_table = root.table("agent")
    agent = _agent(agent_table) if agent_table is not None else None
    items = root.tables("scenario")
    if not items:
        root.fail("a pack needs at least one [[scenario]]", "scenario")
    scenarios: list[Scenario] = []
    first_at: dict[str, str] = {}
    for item in items:
        scenario = _scenario(item, base, defaults)
        if scenario.name in first_at:
            item.fail(
                f"duplicate scenario name {scenario.name!r} (first at {first_at[scenario.name]})",
                "name",
            )
        first_at[scenario.name] = item.path
        scenarios.append(scenario)
    root.finish()
    return ScenarioPack(
        name=name, scenarios=scenarios, agent=agent, concurrency=concurrency, source=file
    )


def _import_module(module: str, spec: str) -> Any:
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
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            raise ConfigError(f"no module named {exc.name!r}", file=spec) from None
        raise


def load_pack(spec: str | os.PathLike[str]) -> ScenarioPack:
    """A pack from a TOML file, or from `module:attribute` / `path/to/file.py:attribute`.

    The attribute is a `ScenarioPack` or a callable taking no arguments that returns one.
    Importing a module runs the user's own code; a TOML file never runs code.
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
    loaded = _import_module(module, text)
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
