"""A pack names its command agent's own interpreter (`python`): `{python}` is the agent's venv."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from windtunnel.cli.main import main
from windtunnel.errors import ConfigError
from windtunnel.runner import read_results
from windtunnel.runner.pack_config import load_pack_toml

CRM = Path(__file__).parents[2] / "configs" / "examples" / "crm.universe.json"

# The agent imports a module only its own venv has, and answers with the venv it runs in.
AGENT = """\
import sys
import only_in_the_agents_venv
print(only_in_the_agents_venv.WHERE, sys.argv[1:], sys.prefix)
"""

PACK = """\
[pack]
name = "own-venv"

[agent]
kind = "command"
command = ["{{python}}", "agent.py", "from-pack"]
{python_line}

[[scenario]]
name = "lookup"
task = "Look up Bluewing"
upstreams = {{ crm = "crm.universe.json" }}
"""


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    """A pack directory whose agent has its own venv (.venv) holding a module Wind Tunnel lacks."""
    directory = tmp_path / "pack"
    directory.mkdir()
    venv = directory / ".venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60
    )
    site = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_path('purelib'))",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    Path(site).mkdir(parents=True, exist_ok=True)
    (Path(site) / "only_in_the_agents_venv.py").write_text("WHERE = 'agent venv'\n")
    assert not (Path(sysconfig.get_path("purelib")) / "only_in_the_agents_venv.py").exists()
    (directory / "agent.py").write_text(AGENT)
    shutil.copy(CRM, directory / "crm.universe.json")
    (directory / "pack.toml").write_text(PACK.format(python_line='python = ".venv/bin/python"'))
    return directory


def outputs(run_dir: Path) -> list[str | None]:
    return [trace.output for trace in read_results(run_dir, with_calls=False)]


@pytest.mark.timeout(120)
def test_python_runs_the_agent_in_its_own_venv(agent_dir: Path, tmp_path: Path) -> None:
    """`python = ".venv/bin/python"`: `{python}` is the agent's venv, found from the pack file."""
    venv = str(agent_dir / ".venv")
    pack = str(agent_dir / "pack.toml")
    assert main(["run", pack, "-o", str(tmp_path / "run"), "--progress", "plain"]) == 0
    assert outputs(tmp_path / "run") == [f"agent venv ['from-pack'] {venv}"]


@pytest.mark.timeout(120)
def test_agent_command_keeps_the_packs_interpreter(agent_dir: Path, tmp_path: Path) -> None:
    """`--agent-command '{python} agent.py ...'` (as the demo does) runs in the pack's venv too."""
    venv = str(agent_dir / ".venv")
    pack = str(agent_dir / "pack.toml")
    override = ["--agent-command", "{python} agent.py v2"]
    run_dir = tmp_path / "run"
    assert main(["run", pack, "-o", str(run_dir), "--progress", "plain", *override]) == 0
    assert outputs(run_dir) == [f"agent venv ['v2'] {venv}"]


@pytest.mark.timeout(120)
def test_without_python_the_agent_gets_wind_tunnels_interpreter(
    agent_dir: Path, tmp_path: Path
) -> None:
    """No `python`: `{python}` is Wind Tunnel's interpreter, where the agent's import fails."""
    (agent_dir / "pack.toml").write_text(PACK.format(python_line=""))
    run_dir = tmp_path / "run"
    assert (
        main(["run", str(agent_dir / "pack.toml"), "-o", str(run_dir), "--progress", "plain"]) == 1
    )
    (row,) = read_results(run_dir, with_calls=False)
    assert row.error is not None
    assert "No module named 'only_in_the_agents_venv'" in row.error


@pytest.mark.parametrize(
    ("python_line", "message"),
    [
        (
            'python = "venv/bin/python"',
            "no such interpreter '{dir}/venv/bin/python' (python = 'venv/bin/python' is "
            "relative to the pack file; create the agent's venv first)",
        ),
        ('python = ".venv"', "'{dir}/.venv' is a directory, expected the agent's interpreter"),
        (
            'python = "agent.py"',
            "'{dir}/agent.py' is not executable, expected the agent's interpreter",
        ),
        ('python = ""', "must not be empty"),
    ],
)
def test_a_bad_interpreter_is_one_clear_error(
    agent_dir: Path, python_line: str, message: str
) -> None:
    """A missing, directory or non-executable `python` names the pack file, key and path."""
    pack = agent_dir / "pack.toml"
    pack.write_text(PACK.format(python_line=python_line))
    with pytest.raises(ConfigError) as info:
        load_pack_toml(pack)
    assert str(info.value) == f"{pack} at agent.python: {message.format(dir=agent_dir)}"


def test_python_belongs_to_command_agents_only(agent_dir: Path) -> None:
    """`python` on a python agent is refused like any key of another agent kind."""
    pack = agent_dir / "pack.toml"
    agent = '[agent]\nkind = "python"\ncallable = "m:f"\npython = ".venv/bin/python"\n'
    scenario = PACK[PACK.index("[[scenario]]") :].replace("{{", "{").replace("}}", "}")
    pack.write_text(f'[pack]\nname = "x"\n\n{agent}\n{scenario}')
    with pytest.raises(ConfigError) as info:
        load_pack_toml(pack)
    assert str(info.value) == f"{pack} at agent.python: not used by agent kind 'python'"
