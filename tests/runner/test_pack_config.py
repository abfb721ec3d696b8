"""TOML packs: the documented example loads, and every bad input is one precise ConfigError."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from windtunnel.errors import ConfigError
from windtunnel.faults.spec import Fault
from windtunnel.runner.fault_policies import NoCallAfterFault, RetriedAfterFault
from windtunnel.runner.pack_config import load_pack, load_pack_toml
from windtunnel.runner.policies import (
    CallBudget,
    CallOrder,
    Coverage,
    NoDivergence,
    RequiredCall,
)
from windtunnel.runner.scenario import PlanStep
from windtunnel.runner.scorers import Contains, JsonField, Regex

ROOT = Path(__file__).parents[2]
CRM = ROOT / "configs" / "examples" / "crm.universe.json"
FILE = "configs/demo.toml"

SCENARIO = """
[[scenario]]
name = "{name}"
task = "Which invoice is overdue?"
upstreams = {{ crm = "universes/crm.universe.json", billing = "universes/billing.universe.json" }}
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with configs/universes/{crm,billing}.universe.json, as the cwd."""
    universes = tmp_path / "configs" / "universes"
    universes.mkdir(parents=True)
    shutil.copy(CRM, universes / "crm.universe.json")
    shutil.copy(CRM, universes / "billing.universe.json")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(workdir: Path, text: str) -> str:
    (workdir / FILE).write_text(text)
    return FILE


def doc_example() -> str:
    text = (ROOT / "docs" / "pack-format.md").read_text()
    match = re.search(r"```toml\n(.*?)```", text, re.S)
    assert match is not None
    return match.group(1)


def test_documented_example_loads(workdir: Path) -> None:
    """The example in docs/pack-format.md loads into exactly the objects it describes."""
    pack = load_pack_toml(write(workdir, doc_example()))
    assert (pack.name, pack.concurrency, pack.source) == ("demo", 8, FILE)
    assert pack.agent is not None
    assert pack.agent.kind == "command"
    assert pack.agent.command == [
        "python",
        "agents/support_agent.py",
        "--mcp-config",
        "{mcp_config}",
    ]
    assert pack.agent.env == {"AGENT_MODEL": "stub"}
    [scenario] = pack.scenarios
    assert (scenario.name, scenario.repeats, scenario.timeout_s) == (
        "bluewing-overdue-invoice",
        1,
        30.0,
    )
    assert scenario.tags == ("billing",)
    universes = (workdir / "configs" / "universes").resolve()
    assert dict(scenario.upstreams) == {
        "crm": universes / "crm.universe.json",
        "billing": universes / "billing.universe.json",
    }
    assert [type(p) for p in scenario.policies] == [
        NoDivergence,
        RequiredCall,
        type(scenario.policies[2]),
        CallBudget,
        CallOrder,
        Coverage,
        RetriedAfterFault,
        NoCallAfterFault,
    ]
    assert scenario.policies[6] == RetriedAfterFault("list_invoices")
    assert scenario.policies[7] == NoCallAfterFault("send_email", "list_invoices")
    assert scenario.faults == (Fault(tool="list_invoices", call=1, kind="timeout"),)
    assert scenario.policies[1] == RequiredCall(
        "client_lookup", {"query": "Bluewing Logistics"}, "crm"
    )
    assert scenario.policies[3] == CallBudget(6)
    assert scenario.policies[4] == CallOrder(("client_lookup", "list_invoices"))
    assert scenario.policies[5] == Coverage("list_invoices", None, 1.0)
    assert scenario.scorers == (
        Contains("INV-7"),
        Regex(r"INV-\d+"),
        JsonField("invoice.id", "INV-7"),
    )
    assert scenario.plan == (
        PlanStep(tool="client_lookup", args={"query": "Bluewing Logistics"}, upstream="crm"),
    )
    assert scenario.final_answer == "INV-7 is overdue."


def test_pack_defaults_and_single_upstream_plans(workdir: Path) -> None:
    """Pack repeats/timeout apply unless overridden; a plan step defaults to the only upstream."""
    text = """
[pack]
name = "p"
repeats = 3
timeout_s = 12.5

[agent]
kind = "scripted"

[[scenario]]
name = "a"
task = "t"
upstreams = { crm = "universes/crm.universe.json" }
metadata = { ticket = "SUP-1", severity = 2 }
[[scenario.plan]]
tool = "client_lookup"
args = { query = "Bluewing Logistics" }
[[scenario.plan]]
tool = "list_invoices"

[[scenario]]
name = "b"
task = "t"
repeats = 1
timeout_s = 5
[scenario.agent]
kind = "python"
callable = "agents.support:run"
"""
    pack = load_pack_toml(write(workdir, text))
    a, b = pack.scenarios
    assert (a.repeats, a.timeout_s, b.repeats, b.timeout_s) == (3, 12.5, 1, 5.0)
    assert [step.upstream for step in a.plan] == ["crm", "crm"]
    assert a.plan[1].args == {}
    assert a.metadata == {"ticket": "SUP-1", "severity": 2}
    assert a.final_answer is None
    assert pack.agent_for(a) == pack.agent
    assert b.agent is not None
    assert pack.agent_for(b) is b.agent
    assert b.agent.callable == "agents.support:run"
    assert dict(b.upstreams) == {}


HEAD = '[pack]\nname = "p"\n'
ONE = HEAD + SCENARIO.format(name="a")
UNIVERSES = "configs/universes"

BAD: list[tuple[str, str]] = [
    (
        HEAD
        + "".join(SCENARIO.format(name=n) for n in "abc")
        + '[[scenario.policies]]\nkind = "no_diverge"\n',
        "at scenario[2].policies[0].kind: unknown policy 'no_diverge'; expected one of "
        "call_budget, call_order, coverage, did_not_fabricate, forbidden_call, no_call_after_fault, "
        "no_divergence, reported_failure, required_call, retried_after_fault",
    ),
    (
        ONE + 'faults = ["charge=explode"]\n',
        "at scenario[0].faults[0]: unknown kind 'explode' in 'charge=explode'; expected "
        "TOOL[RECORDING]#CALL@FRACTION=KIND[:ARGS] (each of [RECORDING], #CALL, @FRACTION "
        "optional; KIND one of error, is_error, timeout, delay, bad_schema, not_json, empty, drop)",
    ),
    (
        ONE + "faults = [1]\n",
        'at scenario[0].faults[0]: expected a fault as a string (e.g. "charge=timeout") or a '
        "table, got integer",
    ),
    (
        ONE + '[[scenario.faults]]\ntool = "x"\nkind = "empty"\nfraction = 2.0\n',
        "at scenario[0].faults[0].fraction: a fraction is between 0 and 1",
    ),
    (
        ONE + '[[scenario.policies]]\nkind = "did_not_fabricate"\npattern = "("\n',
        "at scenario[0].policies[0].pattern: did_not_fabricate: invalid regular expression "
        "'(': missing ), unterminated subpattern at position 0",
    ),
    (SCENARIO.format(name="a"), "at pack: required key missing"),
    ("[pack]\n" + SCENARIO.format(name="a"), "at pack.name: required key missing"),
    ('[pack]\nname = ""\n', "at pack.name: must not be empty"),
    (
        HEAD + 'concurrency = "8"\n' + SCENARIO.format(name="a"),
        "at pack.concurrency: expected an integer, got string",
    ),
    (
        HEAD + "concurrency = true\n" + SCENARIO.format(name="a"),
        "at pack.concurrency: expected an integer, got boolean",
    ),
    (HEAD + "concurrency = 0\n", "at pack.concurrency: must be at least 1, got 0"),
    (HEAD + "repeats = 0\n", "at pack.repeats: must be at least 1, got 0"),
    (HEAD + "timeout_s = 0\n", "at pack.timeout_s: must be greater than 0, got 0"),
    (HEAD + "timeout_s = 1979-05-27\n", "at pack.timeout_s: expected a number, got date/time"),
    (
        HEAD + 'nmae = "x"\n',
        "at pack.nmae: unknown key 'nmae'; expected one of concurrency, name, repeats, timeout_s",
    ),
    (
        ONE + '[[scenarios]]\nname = "b"\n',
        "at scenarios: unknown key 'scenarios'; expected one of agent, pack, record, scenario",
    ),
    (HEAD, "at scenario: a pack needs at least one [[scenario]]"),
    (
        HEAD + '[scenario]\nname = "a"\n',
        "at scenario: expected an array of tables ([[scenario]]), got table",
    ),
    (
        HEAD + '[[scenario]]\nname = "a"\n',
        "at scenario[0].task: required key missing",
    ),
    (
        HEAD + SCENARIO.format(name="a") + SCENARIO.format(name="a"),
        "at scenario[1].name: duplicate scenario name 'a' (first at scenario[0])",
    ),
    (
        ONE + "polices = []\n",
        "at scenario[0].polices: unknown key 'polices'; expected one of agent, faults, metadata, name, "
        "plan, policies, repeats, scorers, scripted, tags, task, timeout_s, upstreams",
    ),
    (ONE + 'tags = "billing"\n', "at scenario[0].tags: expected an array of strings, got string"),
    (ONE + "tags = [1]\n", "at scenario[0].tags[0]: expected a string, got integer"),
    (
        HEAD + '[[scenario]]\nname = "a"\ntask = "t"\n[scenario.upstreams]\n'
        'crm = "universes/nope.universe.json"\n',
        f"at scenario[0].upstreams.crm: no such universe file '{UNIVERSES}/nope.universe.json'",
    ),
    (
        HEAD + '[[scenario]]\nname = "a"\ntask = "t"\n[scenario.upstreams]\ncrm = "universes"\n',
        f"at scenario[0].upstreams.crm: '{UNIVERSES}' is a directory, expected a universe file",
    ),
    (
        HEAD + '[[scenario]]\nname = "a"\ntask = "t"\n[scenario.upstreams]\ncrm = 3\n',
        "at scenario[0].upstreams.crm: expected a string, got integer",
    ),
    (
        HEAD + '[[scenario]]\nname = "a"\ntask = "t"\n[scenario.upstreams]\n'
        '"my crm" = "universes/crm.universe.json"\n',
        "at scenario[0].upstreams.my crm: an upstream name uses letters, digits, '_', '-' and '.', "
        "and starts with a letter or digit",
    ),
    (
        ONE + "[[scenario.policies]]\ntool = 'x'\n",
        "at scenario[0].policies[0].kind: required key missing",
    ),
    (
        ONE + "[[scenario.policies]]\nkind = 'required_call'\n",
        "at scenario[0].policies[0].tool: required key missing",
    ),
    (
        ONE + "[[scenario.policies]]\nkind = 'required_call'\ntool = 'a'\nupstream = 'mail'\n",
        "at scenario[0].policies[0].upstream: unknown upstream 'mail'; this scenario has "
        "billing, crm",
    ),
    (
        ONE + "[[scenario.policies]]\nkind = 'forbidden_call'\ntool = 'a'\nargs = 'x'\n",
        "at scenario[0].policies[0].args: expected a table, got string",
    ),
    (
        ONE + "[[scenario.policies]]\nkind = 'call_budget'\n",
        "at scenario[0].policies[0].max_calls: required key missing",
    ),
    (
        ONE + "[[scenario.policies]]\nkind = 'call_budget'\nmax_calls = -1\n",
        "at scenario[0].policies[0].max_calls: must be at least 0, got -1",
    ),
    (
        ONE + "[[scenario.policies]]\nkind = 'call_order'\ntools = []\n",
        "at scenario[0].policies[0].tools: must list at least one item",
    ),
    (
        ONE + "[[scenario.policies]]\nkind = 'call_order'\ntools = ['a', 1]\n",
        "at scenario[0].policies[0].tools[1]: expected a string, got integer",
    ),
    (
        ONE + "[[scenario.policies]]\nkind = 'no_divergence'\ntool = 'x'\n",
        "at scenario[0].policies[0].tool: unknown key 'tool'; expected one of kind",
    ),
    (
        ONE + "[[scenario.scorers]]\nkind = 'equals'\n",
        "at scenario[0].scorers[0].kind: unknown scorer 'equals'; expected one of contains, "
        "json_field, regex",
    ),
    (
        ONE + "[[scenario.scorers]]\nkind = 'contains'\ntext = 'x'\nthreshold = 2\n",
        "at scenario[0].scorers[0].threshold: must be within [0, 1], got 2",
    ),
    (
        ONE + "[[scenario.scorers]]\nkind = 'contains'\ntext = 'x'\ncase_sensitive = 'yes'\n",
        "at scenario[0].scorers[0].case_sensitive: expected a boolean, got string",
    ),
    (
        ONE + "[[scenario.scorers]]\nkind = 'regex'\npattern = '('\n",
        "at scenario[0].scorers[0].pattern: invalid regex '(': missing ), unterminated "
        "subpattern at position 0",
    ),
    (
        ONE + "[[scenario.scorers]]\nkind = 'json_field'\nfield = 'a'\n",
        "at scenario[0].scorers[0].equals: required key missing",
    ),
    (
        ONE + "[[scenario.scorers]]\nkind = 'json_field'\nfield = 'a'\nequals = 1979-05-27\n",
        "at scenario[0].scorers[0].equals: expected JSON-like data (strings, numbers, booleans, "
        "arrays, tables)",
    ),
    (
        ONE + "[[scenario.plan]]\ntool = 'client_lookup'\n",
        "at scenario[0].plan[0].upstream: required when the scenario has several upstreams "
        "(billing, crm)",
    ),
    (
        ONE + "[[scenario.plan]]\ntool = 'client_lookup'\nupstream = 'mail'\n",
        "at scenario[0].plan[0].upstream: unknown upstream 'mail'; this scenario has billing, crm",
    ),
    (
        ONE + "[[scenario.plan]]\nupstream = 'crm'\n",
        "at scenario[0].plan[0].tool: required key missing",
    ),
    (
        ONE + "[scenario.scripted]\nanswer = 'x'\n",
        "at scenario[0].scripted.answer: unknown key 'answer'; expected one of final_answer",
    ),
    (
        HEAD + "[agent]\nkind = 'shell'\n",
        "at agent.kind: unknown agent kind 'shell'; expected one of command, python, scripted",
    ),
    (HEAD + "[agent]\nkind = 'command'\n", "at agent.command: required key missing"),
    (
        HEAD + "[agent]\nkind = 'command'\ncommand = ['a', '{mcp_cfg}']\n",
        "at agent.command[1]: unknown placeholder {mcp_cfg} in '{mcp_cfg}'; expected one of "
        "{mcp_config}, {python}, {scenario}, {seed}, {task}, {task_file}, {workdir}",
    ),
    (
        HEAD + "[agent]\nkind = 'command'\ncommand = ['a']\ntask_via = 'file'\n",
        "at agent.task_via: task_via 'file' needs {task_file} in the command",
    ),
    (
        HEAD + "[agent]\nkind = 'command'\ncommand = ['a']\ntask_via = 'pipe'\n",
        "at agent.task_via: unknown task_via 'pipe'; expected one of arg, file, stdin",
    ),
    (
        HEAD + "[agent]\nkind = 'command'\ncommand = ['a']\ncallable = 'm:f'\n",
        "at agent.callable: not used by agent kind 'command'",
    ),
    (
        HEAD + "[agent]\nkind = 'scripted'\ncommand = ['a']\n",
        "at agent.command: not used by agent kind 'scripted'",
    ),
    (
        HEAD + "[agent]\nkind = 'python'\ncallable = 'agents/run.py'\n",
        "at agent.callable: kind 'python' needs callable = 'module:attr', got 'agents/run.py'",
    ),
    (
        HEAD + "[agent]\nkind = 'command'\ncommand = ['a']\nenv = { DEBUG = true }\n",
        "at agent.env.DEBUG: expected a string, got boolean",
    ),
    (
        HEAD + "[agent]\nkind = 'command'\ncommand = ['a']\nmodel = 'x'\n",
        "at agent.model: unknown key 'model'; expected one of callable, command, env, kind, "
        "python, task_via",
    ),
    (
        ONE + "[scenario.agent]\nkind = 'python'\n",
        "at scenario[0].agent.callable: required key missing",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_pack(workdir: Path, text: str, message: str) -> None:
    """Each bad pack is refused with one line naming the file, the key path and the problem."""
    with pytest.raises(ConfigError) as info:
        load_pack_toml(write(workdir, text))
    assert str(info.value) == f"{FILE} {message}"


def test_invalid_toml_names_the_file_and_position(workdir: Path) -> None:
    """A TOML syntax error keeps tomllib's line and column."""
    with pytest.raises(ConfigError) as info:
        load_pack_toml(write(workdir, "[pack]\nname = \n"))
    assert str(info.value) == f"{FILE}: invalid TOML: Invalid value (at line 2, column 8)"


def test_missing_pack_file(workdir: Path) -> None:
    """A pack file that does not exist is one line too."""
    with pytest.raises(ConfigError) as info:
        load_pack("configs/none.toml")
    assert str(info.value) == "configs/none.toml: no such file"


def test_loading_never_reads_universes(workdir: Path) -> None:
    """Universe files must exist, but a broken one only fails when a run loads it."""
    (workdir / "configs" / "universes" / "crm.universe.json").write_text("{not json")
    pack = load_pack_toml(write(workdir, ONE))
    assert pack.scenarios[0].name == "a"
