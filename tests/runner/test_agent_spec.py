"""`AgentSpec`: the agent under test as data, checked when built."""

from __future__ import annotations

import pytest

from windtunnel.errors import ConfigError
from windtunnel.runner.agent_spec import AgentSpec


def test_command_renders_each_element_as_one_argument() -> None:
    """Placeholders fill in per element, in one pass; other braces are literal text."""
    spec = AgentSpec(
        kind="command",
        command=["agent", "--mcp-config", "{mcp_config}", "--task={task}", '{"k": 1}'],
        task_via="arg",
    )
    values = {"mcp_config": "/tmp/u/mcp.json", "task": "a b; rm -rf / {workdir}"}
    assert spec.render_command(values) == [
        "agent",
        "--mcp-config",
        "/tmp/u/mcp.json",
        "--task=a b; rm -rf / {workdir}",
        '{"k": 1}',
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "command"}, "at command: kind 'command' needs a non-empty command list"),
        (
            {"kind": "command", "command": ["a", "{mcp_cfg}"]},
            "at command[1]: unknown placeholder {mcp_cfg} in '{mcp_cfg}'; expected one of "
            "{mcp_config}, {python}, {scenario}, {seed}, {task}, {task_file}, {workdir}",
        ),
        (
            {"kind": "command", "command": ["a", "--id={unit_id}"]},
            "at command[1]: unknown placeholder {unit_id} in '--id={unit_id}'; expected one of "
            "{mcp_config}, {python}, {scenario}, {seed}, {task}, {task_file}, {workdir}",
        ),
        (
            {"kind": "command", "command": ["a"], "task_via": "file"},
            "at task_via: task_via 'file' needs {task_file} in the command",
        ),
        (
            {"kind": "command", "command": ["a"], "task_via": "arg"},
            "at task_via: task_via 'arg' needs {task} in the command",
        ),
        ({"kind": "python"}, "at callable: kind 'python' needs callable = 'module:attr', got None"),
        (
            {"kind": "python", "callable": "agents/run.py"},
            "at callable: kind 'python' needs callable = 'module:attr', got 'agents/run.py'",
        ),
    ],
)
def test_invalid_specs(fields: dict[str, object], message: str) -> None:
    """An agent spec that cannot run is refused with the field it is about."""
    with pytest.raises(ConfigError) as info:
        AgentSpec(**fields)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_scripted_needs_nothing() -> None:
    """A scripted agent takes its plan from the scenarios."""
    assert AgentSpec(kind="scripted").command == []
