"""Run one work unit: serve its upstreams, run the agent, collect the trace, score it."""

from __future__ import annotations

import functools
import math
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import trio

from ..actors import Fleet, ScenarioRun, open_fleet
from ..agents import AgentContext, AgentError
from ..errors import ConfigError, InputError, WindtunnelError
from ..faults.spec import Fault
from ..fd_limit import fd_hint
from ..load_pacing import paced_loading
from ..mcp.spi import MCPServer
from ..universe import Universe
from .adapters import AgentLike, resolve_agent
from .agent_spec import AgentSpec
from .fault_checks import check_faults, count_injected
from .scenario import Scenario, ScenarioPack, normalize_servers
from .scoring import evaluate
from .trace import Trace, drop_deep_values, warnings_from_calls
from .unit_faults import arm_servers
from .units import WorkUnit
from .universe_coverage import unit_coverage

__all__ = ["run_scenario", "run_scenario_async", "run_unit"]


async def run_unit(
    unit: WorkUnit,
    fleet: Fleet,
    *,
    servers: Mapping[str, MCPServer] | None = None,
    agent: AgentLike | None = None,
    pack: ScenarioPack | None = None,
    base_dir: Path | None = None,
    faults: Sequence[Fault] = (),
) -> Trace:
    """One scenario run, start to finish. Never raises for the run's own failures: a crashing,
    hanging or misconfigured agent, or a broken fixture, becomes the trace's `error`.

    The scenario's faults, then `faults` (`wt run --fault`), are injected into its servers with
    the unit's seed and id; one that no call got makes the unit `invalid`."""
    scenario = unit.scenario
    declared = [*scenario.declared_faults, *faults]
    unplaced: dict[str, str] = {}
    trace = Trace(
        unit_id=unit.id,
        scenario=scenario.name,
        repeat=unit.repeat,
        seed=unit.seed,
        task=scenario.task,
        tags=list(scenario.tags),
        started_at=time.time(),
    )
    t0 = time.perf_counter()
    # One deadline for the whole unit: loading its fixtures counts against its timeout.
    deadline = trio.current_time() + scenario.timeout_s
    universes: dict[str, Universe] = {}
    run: ScenarioRun | None = None
    announced = False
    """`fleet.scenario` was entered: it reports the unit's start and end itself."""
    try:
        if servers is None:
            if pack is None:
                raise ConfigError("run_unit needs `servers` or `pack`")
            servers = await _load_servers(pack, scenario, deadline)
        servers = normalize_servers(servers)
        if declared or any(getattr(s, "faults", None) for s in servers.values()):
            unplaced = arm_servers(servers, declared, seed=unit.seed, unit_id=unit.id)
        universes = {
            name: server.universe
            for name, server in servers.items()
            if isinstance(getattr(server, "universe", None), Universe)
        }
        # A universe's own faults are declared for every unit that runs against it: one that
        # never fired leaves the unit `invalid` as a scenario's would.
        declared += [fault for universe in universes.values() for fault in universe.faults]
        if agent is None and pack is not None:
            agent = pack.agent_for(scenario)
        elif isinstance(agent, AgentSpec) and pack is not None:
            agent = agent.with_interpreter_of(pack.agent_for(scenario))
        runnable = resolve_agent(agent, scenario, base_dir=base_dir)
        with tempfile.TemporaryDirectory(prefix="wt-run-") as workdir:
            announced = True
            async with fleet.scenario(unit.id, servers, scenario_name=scenario.name) as run:
                ctx = AgentContext(
                    scenario=scenario.name,
                    task=scenario.task,
                    servers=dict(run.urls),
                    workdir=Path(workdir),
                    seed=unit.seed,
                    unit_id=unit.id,
                    traceparent=fleet.traceparent(unit.id),
                )
                with trio.move_on_at(deadline) as agent_scope:
                    trace.output = (await runnable.run(ctx)).output
                if agent_scope.cancelled_caught:
                    trace.error = f"agent timed out after {scenario.timeout_s:g}s"
    except Exception as exc:  # an agent, adapter or user factory failing in any way
        trace.error = _reason(exc)
        if not announced:
            await fleet.scenario_not_started(
                unit.id, list(scenario.upstreams), trace.error, scenario_name=scenario.name
            )
    if run is not None:
        # Complete even after a failure: the scenario drained its router before exiting.
        trace.mcp_calls = run.call_log()
        if run.faults and trace.error is None:
            trace.error = "server fault: " + "; ".join(run.faults)
    trace.faults = check_faults(declared, trace.mcp_calls, unplaced)
    trace.faults_injected = count_injected(trace.mcp_calls)
    too_deep = drop_deep_values(trace.mcp_calls)
    if too_deep and trace.error is None:
        trace.error = too_deep
    trace.duration_s = time.perf_counter() - t0
    trace.warnings = warnings_from_calls(trace.mcp_calls, scenario.name, universes=universes)
    trace.coverage = unit_coverage(trace.mcp_calls, universes)
    scored = evaluate(trace, scenario.policies, scenario.scorers)
    fleet.unit_scored(scored)
    return scored


async def _load_servers(pack: ScenarioPack, scenario: Scenario, deadline: float) -> Any:
    """`pack.servers_for(scenario)` in a worker thread, by `deadline`.

    Loading reads and decodes universe files: on the Trio loop, a file on a stalled filesystem
    would freeze every unit in flight and the signal handlers, and a large one would make healthy
    units time out. In a thread it is one unit's business (paced: `load_pacing`); past the
    deadline the thread is left to finish on its own (its result is dropped) and the unit fails.
    """
    with trio.move_on_at(deadline):
        return await trio.to_thread.run_sync(
            _paced_servers, pack, scenario, abandon_on_cancel=True, limiter=_loading_limiter()
        )
    raise InputError(
        f"the scenario's upstreams were still loading when its timeout "
        f"({scenario.timeout_s:g}s) ran out"
    )


def _paced_servers(pack: ScenarioPack, scenario: Scenario) -> Any:
    # The loop serving other units gets the GIL back within `LOAD_SWITCH_INTERVAL` meanwhile.
    with paced_loading():
        return pack.servers_for(scenario)


_LOADING: trio.lowlevel.RunVar[trio.CapacityLimiter] = trio.lowlevel.RunVar("wt_fixture_loading")


def _loading_limiter() -> trio.CapacityLimiter:
    """Fixture loads have a limiter of their own, without a cap: an abandoned load keeps its
    token until its read returns, and stuck loads must neither use up the default limiter's 40
    threads (the results writer's) nor keep other units' loads waiting. Units in flight bound
    how many loads run at once."""
    try:
        return _LOADING.get()
    except LookupError:
        limiter = trio.CapacityLimiter(math.inf)
        _LOADING.set(limiter)
        return limiter


def _reason(exc: BaseException) -> str:
    """The reason a run failed, as results show it."""
    # An error from inside a task group (an MCP client session is one) arrives wrapped.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, AgentError):
        reason = str(exc)
    elif isinstance(exc, WindtunnelError):
        reason = f"{type(exc).__name__}: {exc}"
    else:
        reason = f"unexpected {type(exc).__name__}: {exc}"
    hint = _fd_hint_behind(exc)
    return reason if hint in reason else reason + hint


def _fd_hint_behind(exc: BaseException) -> str:
    """The open-file hint when running out of descriptors is what lies behind `exc`: a client's
    "all attempts to connect ... failed" hides the EMFILE of each attempt two causes down."""
    stack: list[BaseException] = [exc]
    seen: set[int] = set()
    while stack and len(seen) < 64:  # chains are short; the bound guards against odd cycles
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and (hint := fd_hint(current.errno)):
            return hint
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
    return ""


async def run_scenario_async(
    scenario: Scenario,
    *,
    agent: AgentLike | None = None,
    mcps: Any = None,
    repeat: int = 0,
    fleet: Fleet | None = None,
) -> Trace:
    """Run `scenario` once against `mcps` (a server, a list, or `{name: server}`; default: its
    `upstreams`), inside `fleet` or a fleet of its own, and return the scored trace."""
    servers = normalize_servers(mcps) if mcps is not None else None
    if servers is None:
        servers = ScenarioPack("adhoc", [scenario]).servers_for(scenario)
    unit = WorkUnit(scenario, repeat)
    if fleet is not None:
        return await run_unit(unit, fleet, servers=servers, agent=agent)
    async with open_fleet(pack=None) as own:
        return await run_unit(unit, own, servers=servers, agent=agent)


def run_scenario(
    scenario: Scenario, *, agent: AgentLike | None = None, mcps: Any = None, repeat: int = 0
) -> Trace:
    """Synchronous `run_scenario_async` for plain (non-Trio) code such as a pytest test."""
    return trio.run(
        functools.partial(run_scenario_async, scenario, agent=agent, mcps=mcps, repeat=repeat)
    )
