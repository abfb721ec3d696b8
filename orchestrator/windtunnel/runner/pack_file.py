"""The TOML pack file as msgspec Structs (docs/pack-format.md): one Struct per table, tagged unions
for agents, policies and scorers (`kind` is the tag), unknown keys refused.

`decode_pack_file` turns the parsed TOML into a `PackFile`; a problem is one `ConfigError` naming
the key path and saying what was expected in the pack format's words (`pack_errors` translates
msgspec's). What a Struct cannot say (files that must exist, upstream references, the scenario
defaults) is checked after decoding, in `pack_config`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from ..errors import ConfigError
from .pack_errors import pack_error

__all__ = [
    "AGENT_KINDS",
    "POLICY_KINDS",
    "SCORER_KINDS",
    "AgentTable",
    "CommandAgentTable",
    "PackFile",
    "PlanStepTable",
    "PolicyTable",
    "PythonAgentTable",
    "ScenarioTable",
    "ScorerTable",
    "ScriptedAgentTable",
    "decode_pack_file",
]

Text = Annotated[str, msgspec.Meta(min_length=1)]
Count = Annotated[int, msgspec.Meta(ge=1)]
Seconds = Annotated[float, msgspec.Meta(gt=0)]
Fraction = Annotated[float, msgspec.Meta(ge=0, le=1)]
Names = Annotated[list[str], msgspec.Meta(min_length=1)]


class _Table(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class _Tagged(_Table, tag_field="kind"):
    pass


# -- agents ---------------------------------------------------------------------------------


class CommandAgentTable(_Tagged, tag="command"):
    command: Names
    task_via: Text = "stdin"
    env: dict[str, str] = {}
    python: Text | None = None
    """The agent's own interpreter (`{python}` in the command), relative to the pack file."""


class PythonAgentTable(_Tagged, tag="python"):
    callable: Text
    env: dict[str, str] = {}


class ScriptedAgentTable(_Tagged, tag="scripted"):
    env: dict[str, str] = {}


AgentTable = CommandAgentTable | PythonAgentTable | ScriptedAgentTable

# -- policies -------------------------------------------------------------------------------


class NoDivergenceTable(_Tagged, tag="no_divergence"):
    pass


class RequiredCallTable(_Tagged, tag="required_call"):
    tool: Text
    args: dict[str, Any] | None = None
    upstream: Text | None = None


class ForbiddenCallTable(_Tagged, tag="forbidden_call"):
    tool: Text
    args: dict[str, Any] | None = None
    upstream: Text | None = None


class CallBudgetTable(_Tagged, tag="call_budget"):
    max_calls: Annotated[int, msgspec.Meta(ge=0)]
    tool: Text | None = None


class CallOrderTable(_Tagged, tag="call_order"):
    tools: Names


class CoverageTable(_Tagged, tag="coverage"):
    tool: Text | None = None
    upstream: Text | None = None
    minimum: Fraction = 1.0


class RetriedAfterFaultTable(_Tagged, tag="retried_after_fault"):
    tool: Text | None = None


class NoCallAfterFaultTable(_Tagged, tag="no_call_after_fault"):
    tool: Text
    after: Text | None = None


class DidNotFabricateTable(_Tagged, tag="did_not_fabricate"):
    pattern: Text | None = None


class ReportedFailureTable(_Tagged, tag="reported_failure"):
    pattern: Text | None = None


PolicyTable = (
    NoDivergenceTable
    | RequiredCallTable
    | ForbiddenCallTable
    | CallBudgetTable
    | CallOrderTable
    | CoverageTable
    | RetriedAfterFaultTable
    | NoCallAfterFaultTable
    | DidNotFabricateTable
    | ReportedFailureTable
)

# -- scorers --------------------------------------------------------------------------------


class ContainsTable(_Tagged, tag="contains"):
    text: Text
    case_sensitive: bool = False
    threshold: Fraction = 1.0


class RegexTable(_Tagged, tag="regex"):
    pattern: Text
    threshold: Fraction = 1.0


class JsonFieldTable(_Tagged, tag="json_field"):
    field: Text
    equals: Any
    threshold: Fraction = 1.0


ScorerTable = ContainsTable | RegexTable | JsonFieldTable

# -- scenarios and the pack -----------------------------------------------------------------


class PlanStepTable(_Table):
    tool: Text
    upstream: Text | None = None
    args: dict[str, Any] | None = None


class ScriptedTable(_Table):
    final_answer: str | None = None


class ScenarioTable(_Table):
    name: Text
    task: Text
    repeats: Count | None = None
    timeout_s: Seconds | None = None
    tags: list[str] = []
    upstreams: dict[str, Text] = {}
    policies: list[PolicyTable] = []
    scorers: list[ScorerTable] = []
    plan: list[PlanStepTable] = []
    scripted: ScriptedTable | None = None
    agent: AgentTable | None = None
    metadata: dict[str, Any] = {}
    faults: list[Any] = []
    """Each a command-line spelling (`"charge=timeout"`) or a table of `Fault`'s fields,
    checked by `pack_config` with the fault model's own parsers."""


class PackTable(_Table):
    name: Text
    concurrency: Count = 4
    repeats: Count = 1
    timeout_s: Seconds = 60.0


RecordModeText = Literal["none", "once", "new_episodes", "all"]


class RecordUpstreamTable(_Table):
    """`[record.upstreams.NAME]`: one upstream's record mode and live server."""

    mode: RecordModeText | None = None
    live: Text | None = None
    redact: list[str] = []


class RecordTable(_Table):
    """`[record]`: the pack's record mode (else `WT_RECORD_MODE`, else none), per upstream."""

    mode: RecordModeText | None = None
    upstreams: dict[str, RecordUpstreamTable] = {}


class PackFile(_Table):
    pack: PackTable
    agent: AgentTable | None = None
    record: RecordTable | None = None
    scenario: list[ScenarioTable] = []


def _kinds(union: Any) -> tuple[str, ...]:
    return tuple(sorted(cls.__struct_config__.tag for cls in union.__args__))


AGENT_KINDS = _kinds(AgentTable)
POLICY_KINDS = _kinds(PolicyTable)
SCORER_KINDS = _kinds(ScorerTable)


def decode_pack_file(data: dict[str, Any], file: str) -> PackFile:
    """The parsed TOML of `file` as a `PackFile`; `ConfigError` naming the key path otherwise."""
    try:
        return msgspec.convert(data, PackFile)
    except msgspec.ValidationError as exc:
        message, path = pack_error(exc, data, PackFile)
        raise ConfigError(message, file=file, path=path) from None
