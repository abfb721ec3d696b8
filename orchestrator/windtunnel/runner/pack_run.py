"""Run a whole pack: work units in parallel on one fleet, results written as each finishes."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import trio

from ..actors import Fleet, JsonLinesSink, Sink, open_fleet
from ..atomic_write import open_append
from ..errors import ConfigError, InputError
from ..faults.spec import Fault
from ..rundir.layout import EVENTS_FILE, has_results, run_path
from ..rundir.results import RunWriter
from .adapters import AgentLike
from .execute import run_unit
from .progress import Progress
from .scenario import ScenarioPack
from .summary import Summary
from .trace import Trace
from .units import WorkUnit, count_units, iter_units

__all__ = ["PackRunOptions", "run_pack"]


WRITE_BATCH = 64


@dataclass(frozen=True)
class PackRunOptions:
    """How to run a pack (`wt run` options)."""

    run_dir: Path
    concurrency: int | None = None
    repeats: int | None = None
    scenario_filter: str | None = None
    resume: bool = False
    agent: AgentLike | None = None
    feed_port: int | None = None
    units: list[WorkUnit] | None = None
    """Run exactly these units (a shard) instead of the whole plan."""
    faults: tuple[Fault, ...] = ()
    """Faults every unit declares besides its scenario's own (`wt run --fault`)."""


async def run_pack(
    pack: ScenarioPack,
    options: PackRunOptions,
    *,
    progress: Progress | None = None,
    sinks: list[Sink] | None = None,
    on_trace: Callable[[Trace], None] | None = None,
    stop: trio.Event | None = None,
) -> Summary:
    """Run every unit with at most `concurrency` in flight; return the summary.

    Each finished unit is written at once (trace file, then an fsynced `results.jsonl` line), so
    a cancelled run keeps everything that finished; the summary, JUnit XML and HTML report are
    written at the end over whatever finished, also when cancelled. Setting `stop` stops the
    run the same way (units in flight are cancelled) and returns the summary of what finished,
    so the caller need not read it back. With `resume`, units already in the run directory are
    skipped.
    """
    if not options.resume and has_results(options.run_dir):
        raise ConfigError(
            "this run directory already has results; use --resume to finish it, or another -o",
            file=str(options.run_dir),
        )
    concurrency = options.concurrency if options.concurrency is not None else pack.concurrency
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    writer = RunWriter(options.run_dir, pack=pack.name)

    # The plan is walked lazily (once to count what is left, once to run it): memory holds the
    # units in flight, never the plan.
    def plan() -> Iterable[WorkUnit]:
        if options.units is not None:
            return options.units
        return iter_units(pack, scenario_filter=options.scenario_filter, repeats=options.repeats)

    total = (
        len(options.units)
        if options.units is not None
        else count_units(pack, scenario_filter=options.scenario_filter, repeats=options.repeats)
    )
    finished = writer.finished

    def todo() -> Iterator[WorkUnit]:
        return (unit for unit in plan() if not options.resume or unit.id not in finished)

    skipped = sum(1 for unit in plan() if unit.id in finished) if options.resume else 0
    base_dir = Path(pack.source).parent if pack.source else None
    progress = progress or Progress(live=False)
    progress.start(total - skipped, skipped=skipped)
    events_path = run_path(options.run_dir, EVENTS_FILE)
    # Appended, never through a link planted in the run directory (`open_append`).
    events = open(open_append(events_path), "a", encoding="utf-8")  # noqa: ASYNC230, SIM115
    events_sink = JsonLinesSink(events)
    try:
        all_sinks: list[Sink] = [events_sink, *(sinks or [])]
        try:
            async with trio.open_nursery() as watcher:
                if stop is not None:
                    watcher.start_soon(_cancel_when_set, stop, watcher.cancel_scope)
                async with open_fleet(
                    pack=pack.name, sinks=all_sinks, feed_port=options.feed_port
                ) as fleet:
                    await _run_units(
                        todo(),
                        total - skipped,
                        fleet,
                        pack,
                        options,
                        base_dir,
                        writer,
                        progress,
                        on_trace,
                        concurrency,
                    )
                watcher.cancel_scope.cancel()
        except BaseException:
            progress.close()
            # Reports over whatever finished. If writing is what failed (a full disk), the
            # first error is the one worth telling, so a second one here is not raised.
            with trio.CancelScope(shield=True), contextlib.suppress(InputError):
                await trio.to_thread.run_sync(writer.finish)
            raise
        progress.close()
        summary = await trio.to_thread.run_sync(writer.finish)
    finally:
        with contextlib.suppress(OSError):  # already reported through `events_sink.error`
            events.close()
    if events_sink.error is not None:
        raise InputError(
            f"cannot write: {events_sink.error.strerror}; {events_sink.dropped} event(s) were "
            "not written (results.jsonl and the reports are complete)",
            file=str(events_path),
        )
    return summary


async def _cancel_when_set(stop: trio.Event, scope: trio.CancelScope) -> None:
    await stop.wait()
    scope.cancel()


async def _run_units(
    todo: Iterator[WorkUnit],
    todo_count: int,
    fleet: Fleet,
    pack: ScenarioPack,
    options: PackRunOptions,
    base_dir: Path | None,
    writer: RunWriter,
    progress: Progress,
    on_trace: Callable[[Trace], None] | None,
    concurrency: int,
) -> None:
    send_units, receive_units = trio.open_memory_channel[WorkUnit](concurrency)

    async def plan_feeder() -> None:
        # Units are made as workers take them (the plan is a generator), not queued up front.
        async with send_units:
            for unit in todo:
                await send_units.send(unit)

    send_traces, receive_traces = trio.open_memory_channel[Trace](concurrency)

    async def worker(
        units: trio.MemoryReceiveChannel[WorkUnit], out: trio.MemorySendChannel[Trace]
    ) -> None:
        async with units, out:
            async for unit in units:
                progress.unit_started()
                trace = await run_unit(
                    unit,
                    fleet,
                    pack=pack,
                    agent=options.agent,
                    base_dir=base_dir,
                    faults=options.faults,
                )
                await out.send(trace)

    async def write_all() -> None:
        # One writer, in a thread so fsyncs never stall the servers. Shielded: on cancellation
        # the workers stop and close their channels, and the writer still writes every unit
        # that finished before it ends.
        with trio.CancelScope(shield=True):
            async with receive_traces:
                async for trace in receive_traces:
                    # Units that finished meanwhile share one directory fsync and one append.
                    batch = [trace]
                    while len(batch) < WRITE_BATCH:
                        try:
                            batch.append(receive_traces.receive_nowait())
                        except (trio.WouldBlock, trio.EndOfChannel):
                            break
                    await trio.to_thread.run_sync(writer.write_many, batch)
                    for written in batch:
                        progress.unit_finished(written)
                        if on_trace is not None:
                            on_trace(written)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(write_all)
        nursery.start_soon(plan_feeder)
        async with send_traces, receive_units:
            for _ in range(min(concurrency, todo_count)):
                nursery.start_soon(worker, receive_units.clone(), send_traces.clone())
