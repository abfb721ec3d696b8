"""Start-up: each command loads only what it uses, so the light ones never load the serving stack."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli.test_universe_commands import EXAMPLE
from windtunnel.cli import commands
from windtunnel.cli.main import build_parser, main

DEMO_PACK = Path(__file__).parents[2] / "configs" / "demo" / "pack.toml"
# What a light command must not import: the MCP SDK (and pydantic under it), the HTTP server and
# client stacks, Trio, and the runner's execution side.
HEAVY = {
    "mcp",
    "pydantic",
    "hypercorn",
    "h11",
    "httpx",
    "httpx2",
    "trio",
    "trio_websocket",
    "structlog",
    "windtunnel.mcp",
    "windtunnel.actors",
    "windtunnel.runner.pack_run",
    "windtunnel.agents.command",
}
LOADED = textwrap.dedent(
    """
    import json, sys
    from windtunnel.cli.main import main
    code = main(sys.argv[2:])
    with open(sys.argv[1], "w") as out:
        json.dump({"code": code, "modules": sorted(sys.modules)}, out)
    """
)


def modules_loaded(tmp_path: Path, *argv: str) -> set[str]:
    """Run `wt ARGV` in a fresh interpreter; the top-level and windtunnel modules it imported."""
    report = tmp_path / "loaded.json"
    done = subprocess.run(
        [sys.executable, "-c", LOADED, str(report), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert report.exists(), done.stderr
    result = json.loads(report.read_text())
    assert result["code"] == 0, done.stderr
    return {
        name if name.startswith("windtunnel.") else name.split(".")[0] for name in result["modules"]
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", str(EXAMPLE)],
        ["explain", str(EXAMPLE), "client_lookup", '{"query": "Bluewing"}'],
        ["plan", str(DEMO_PACK)],
        ["plan", str(DEMO_PACK), "--shards", "2"],
    ],
    ids=["validate", "explain", "plan", "plan-shards"],
)
def test_light_commands_do_not_load_the_serving_stack(tmp_path: Path, argv: list[str]) -> None:
    loaded = modules_loaded(tmp_path, *argv)
    assert loaded & HEAVY == set()
    # The command's own module is loaded, and no other command's.
    own = commands.COMMANDS[argv[0]].module
    others = {f"windtunnel.cli.{c.module}" for c in commands.COMMANDS.values()} - {
        f"windtunnel.cli.{own}"
    }
    assert f"windtunnel.cli.{own}" in loaded
    assert loaded & others == set()


def test_help_loads_no_command(tmp_path: Path) -> None:
    report = tmp_path / "loaded.json"
    code = (
        "import json, sys\n"
        "from windtunnel.cli.main import build_parser\n"
        "build_parser(['--help']).format_help()\n"
        f"json.dump(sorted(sys.modules), open({str(report)!r}, 'w'))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    loaded = set(json.loads(report.read_text()))
    assert {f"windtunnel.cli.{c.module}" for c in commands.COMMANDS.values()} & loaded == set()
    assert loaded & HEAVY == set()


@pytest.mark.parametrize("name", ["serve", "run", "record", "verify"])
def test_the_help_of_a_serving_command_loads_its_options_only(tmp_path: Path, name: str) -> None:
    """`wt serve|run|record|verify --help` (and a usage error) parse the options without loading the
    work behind them: `run_later` imports the `*_main` module only when the command runs."""
    report = tmp_path / "loaded.json"
    code = (
        "import json, sys\n"
        "from windtunnel.cli.main import build_parser\n"
        f"build_parser([{name!r}, '--help']).format_help()\n"
        f"json.dump(sorted(sys.modules), open({str(report)!r}, 'w'))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    loaded = set(json.loads(report.read_text()))
    assert f"windtunnel.cli.{commands.COMMANDS[name].module}" in loaded
    assert {module for module in loaded if module.endswith("_main")} == set()
    assert {module.split(".")[0] for module in loaded} & HEAVY == set()
    assert {module for module in loaded if module.startswith("windtunnel.")} & HEAVY == set()


def test_help_lists_every_command_with_its_summary(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for name, command in commands.COMMANDS.items():
        assert f"{name} {' '.join(command.help.split())}" in text


def test_the_full_parser_and_the_lazy_one_agree_on_each_command() -> None:
    full = build_parser()
    for name in commands.COMMANDS:
        lazy = build_parser([name, "--help"])
        assert lazy.format_help() == full.format_help()
        assert _subparser(lazy, name).format_help() == _subparser(full, name).format_help()


def test_a_typo_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["valdiate", "x"])
    assert exited.value.code == 2
    assert "invalid choice: 'valdiate'" in capsys.readouterr().err


def test_ctrl_c_while_a_command_loads_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(name: str, package: str | None = None) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert main(["serve", "--help"]) == 130
    assert capsys.readouterr().err == "wt: interrupted\n"


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise AssertionError(f"no subcommand {name}")
