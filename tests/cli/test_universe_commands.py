"""`wt validate` and `wt explain`: exit codes, one line per problem, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import UniverseFactory, universe_doc
from windtunnel.cli.main import main

EXAMPLE = Path(__file__).parents[2] / "configs" / "examples" / "crm.universe.json"


def test_validate_ok_and_bad_files(
    write_universe_file: UniverseFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """Good files print `OK` with the counts; each bad file is one `INVALID` line naming the
    file and the JSON path, as an envelope's; exit 2."""
    good = write_universe_file(universe_doc([{"name": "a"}]))
    bad = write_universe_file(
        universe_doc([{"name": "a"}], [{"tool_name": "b", "args": {}, "result": 1}])
    )
    code = main(["validate", str(good), str(bad)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == (
        f"OK {good} (1 tools, 0 recordings)\n"
        f"INVALID {bad} at $.recordings[0].tool_name: recording names undeclared tool 'b'\n"
    )
    assert err == ""


def test_validate_bundled_example(capsys: pytest.CaptureFixture[str]) -> None:
    """The bundled example universe is valid."""
    assert main(["validate", str(EXAMPLE)]) == 0
    assert capsys.readouterr().out == f"OK {EXAMPLE} (2 tools, 4 recordings)\n"


def test_validate_notes_synthesize_hook(
    write_universe_file: UniverseFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """A synthesize universe validates, with a note that a hook is required."""
    path = write_universe_file(universe_doc([{"name": "a"}], matching={"on_miss": "synthesize"}))
    assert main(["validate", str(path)]) == 0
    assert "needs a hook at serve time (tools: a)" in capsys.readouterr().out


def test_explain_hit_and_miss(capsys: pytest.CaptureFixture[str]) -> None:
    """explain names the tier and, for a miss, the nearest recordings and differing keys."""
    assert (
        main(
            [
                "explain",
                str(EXAMPLE),
                "client_lookup",
                '{"query": "Bluewing Logistics", "verbose": true}',
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "keyed hit: recording #0 has equal values on arg_keys ['query']" in out
    assert main(["explain", str(EXAMPLE), "client_lookup", '{"query": "Bluewing"}']) == 0
    out = capsys.readouterr().out
    assert "miss (no_recorded_result); policy fail_call answers" in out
    assert '    query: recorded "Bluewing Logistics" != call "Bluewing"' in out


def test_explain_json_and_absent_keys(capsys: pytest.CaptureFixture[str]) -> None:
    """--json gives machine-readable output; absent sides are left out."""
    assert main(["explain", "--json", str(EXAMPLE), "client_lookup", '{"name": "x"}']) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] == "miss"
    assert data["nearest"][0]["differences"] == {
        "name": {"call": "x"},
        "query": {"recorded": "Bluewing Logistics"},
    }


def test_explain_names_null_arguments_the_recording_lacks(
    write_universe_file: UniverseFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """A miss caused by arguments sent as null (as mcp-use sends omitted ones) names them and
    says what arg_keys would change; with arg_keys covering the call, the same call hits."""
    tools = [{"name": "search", "input_schema": {"type": "object"}}]
    recordings = [{"tool_name": "search", "args": {"q": "x", "page": 1}, "result": []}]
    plain = write_universe_file(universe_doc(tools, recordings))
    call = '{"q": "x", "page": 1, "limit": null, "sort": null, "lang": "en"}'
    assert main(["explain", str(plain), "search", call]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "  null-valued argument(s) the recording lacks: ['limit', 'sort']; some clients send "
        "omitted optional arguments as null: list the keys that identify this call in "
        "matching.arg_keys['search'] so that the others are ignored"
    )
    assert main(["explain", "--json", str(plain), "search", call]) == 0
    assert json.loads(capsys.readouterr().out)["null_args"] == ["limit", "sort"]
    keyed = write_universe_file(universe_doc(tools, recordings, {"arg_keys": {"search": ["q"]}}))
    assert main(["explain", str(keyed), "search", call]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "  keyed hit: recording #0 has equal values on arg_keys ['q']"
    )
    strict = write_universe_file(
        universe_doc(tools, recordings, {"arg_keys": {"search": ["q", "limit"]}})
    )
    assert main(["explain", str(strict), "search", call]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "  null-valued argument(s) the recording lacks: ['limit']; they are among arg_keys, "
        "so the recording must have them too"
    )


def test_explain_sequence_has_no_side_effects(capsys: pytest.CaptureFixture[str]) -> None:
    """Explaining a sequence-mode call twice gives the same first recording."""
    for _ in range(2):
        assert main(["explain", str(EXAMPLE), "list_invoices", '{"account_id": "ACC-1042"}']) == 0
        assert "exact hit: recording #2" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explain", str(EXAMPLE), "client_lookup", "{nope"], "ARGS-JSON is not valid JSON"),
        (["explain", str(EXAMPLE), "client_lookup", "[1]"], "ARGS-JSON must be a JSON object"),
        (["explain", "/no/such.json", "t", "{}"], "/no/such.json: no such file"),
    ],
)
def test_explain_bad_input_exits_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad input is one `wt: error:` line and exit code 2."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("wt: error: ") and message in err and "Traceback" not in err


def test_cli_subprocess_no_traceback_without_debug(tmp_path: Path) -> None:
    """The installed program prints no traceback unless --debug is given."""
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    run = [sys.executable, "-m", "windtunnel", "explain", str(bad), "t", "{}"]
    plain = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert plain.returncode == 2 and "Traceback" not in plain.stderr
    debug = subprocess.run(
        [*run[:3], "--debug", *run[3:]], capture_output=True, text=True, timeout=60
    )
    assert "Traceback" in debug.stderr


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown subcommands and missing arguments are usage errors with exit code 2."""
    with pytest.raises(SystemExit) as info:
        main(["explain"])
    assert info.value.code == 2


def test_validate_warns_about_secrets_without_failing(
    write_universe_file: UniverseFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """Values that look like secrets or personal data are named by JSON path; exit stays 0."""
    doc = universe_doc(
        [{"name": "a"}],
        [
            {
                "tool_name": "a",
                "args": {"q": "dana@harborfresh.io"},
                "result": {"token": "Bearer abcdefghijklmnop", "contact": "ops@bluewing.example"},
            }
        ],
    )
    path = write_universe_file(doc)
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        f"WARN {path} at $.recordings[0].args.q: looks like an email address; redact it",
        f"WARN {path} at $.recordings[0].result.token: looks like a bearer token; redact it",
    ]


def test_explain_the_nth_call_of_a_sequence_tool(capsys: pytest.CaptureFixture[str]) -> None:
    """`--nth N` explains the Nth of identical calls: each takes the next recording, and past
    the last one the call is `sequence_exhausted`."""
    call = ["explain", str(EXAMPLE), "list_invoices", '{"account_id": "ACC-1042"}']
    assert main([*call, "--nth", "2"]) == 0
    out = capsys.readouterr().out
    assert "exact hit: recording #3" in out
    assert "sequence mode: shown as the call number 2 of identical calls in a fresh run" in out
    assert main([*call, "--nth", "3", "--json"]) == 0
    explained = json.loads(capsys.readouterr().out)
    assert (explained["outcome"], explained["reason"], explained["nth"]) == (
        "miss",
        "sequence_exhausted",
        3,
    )
    with pytest.raises(SystemExit) as usage:
        main([*call, "--nth", "0"])
    assert usage.value.code == 2
    assert "expected a whole number from 1" in capsys.readouterr().err


def test_explain_requests_other_than_tool_calls(
    write_universe_file: UniverseFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--method` explains a resource read, prompt get or completion: hit or miss, and why."""
    from tests.surface_world import surface_doc

    world = str(write_universe_file(surface_doc()))
    assert main(["explain", world, "--method", "resources/read", "test://static-text"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "resources/read test://static-text({})",
        "  hit: resource_reads[0] has the same uri",
    ]
    assert main(["explain", world, "--method", "prompts/get", "with_args", '{"arg1": "z"}']) == 0
    assert capsys.readouterr().out.splitlines() == [
        'prompts/get with_args({"arg1":"z"})',
        "  miss (no_recorded_result): no entry of prompt_gets has the same name and canonically "
        "equal arguments; policy fail_call: the JSON-RPC error -32602 answers",
    ]
    completion = '{"ref": {"type": "ref/prompt", "name": "with_args"}, "argument": {"name": "arg1", "value": "a"}}'
    assert (
        main(
            ["explain", "--json", world, "--method", "completion/complete", "with_args", completion]
        )
        == 0
    )
    explained = json.loads(capsys.readouterr().out)
    assert (explained["method"], explained["outcome"], explained["index"]) == (
        "completion/complete",
        "exact",
        0,
    )


def test_validate_notes_server_messages_replay_does_not_send(
    write_universe_file: UniverseFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """Recordings holding server messages are named: replay does not send them."""
    doc = universe_doc(
        [{"name": "t"}],
        [
            {
                "tool_name": "t",
                "args": {},
                "server_messages": [{"method": "notifications/message", "params": {}}],
            }
        ],
    )
    path = write_universe_file(doc)
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        f"{path}: note: 1 recording(s) hold server messages, which are exchanged with the "
        "client again (over stdio, and over HTTP in a session)"
    )


def test_validate_unreadable_files_are_invalid_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing file, a directory and broken JSON are each one `INVALID FILE: ...` line on
    stdout, like an envelope's; exit 2."""
    missing = tmp_path / "missing.universe.json"
    broken = tmp_path / "broken.universe.json"
    broken.write_text('{"windtunnel_universe": 1, "tools": [')
    assert main(["validate", str(missing), str(tmp_path), str(broken)]) == 2
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"INVALID {missing}: no such file",
        f"INVALID {tmp_path}: is a directory, expected a universe file",
        f"INVALID {broken}: Input data was truncated",
    ]
    assert err == ""


def test_explain_names_the_recording_the_nearest_policy_serves(
    write_universe_file: UniverseFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """For a `nearest` miss, explain names the recording whose result answers it: of a
    sequence-mode tool the nearest one the earlier calls left, then none (fail_call), exactly
    as a fresh server answers the same calls."""
    from windtunnel.mcp import RecordedMCPServer
    from windtunnel.universe import load_universe

    doc = universe_doc(
        [{"name": "pages", "mode": "sequence"}, {"name": "find"}],
        [
            {"tool_name": "pages", "args": {"cursor": "a", "size": 2}, "result": {"page": 1}},
            {"tool_name": "pages", "args": {"cursor": "b", "size": 9}, "result": {"page": 2}},
            {"tool_name": "find", "args": {"q": "x", "n": 1}, "result": {"hit": "x"}},
            {"tool_name": "find", "args": {"q": "y", "n": 2}, "result": {"hit": "y"}},
        ],
        matching={"on_miss": "nearest"},
    )
    path = write_universe_file(doc)
    miss = '{"cursor": "z", "size": 9}'
    served = []
    for nth in (1, 2, 3):
        assert main(["explain", "--json", str(path), "pages", miss, "--nth", str(nth)]) == 0
        served.append(json.loads(capsys.readouterr().out)["served"])
    assert served == [1, 0, None]
    server = RecordedMCPServer(load_universe(path))
    answers = [server.call_tool("pages", {"cursor": "z", "size": 9}) for _ in range(3)]
    recorded = [r["result"] for r in doc["recordings"]]
    assert answers[:2] == [recorded[1], recorded[0]]
    assert [call.divergence["matched"] for call in server.call_log()] == served
    assert [call.is_error for call in server.call_log()] == [False, False, True]
    assert main(["explain", str(path), "pages", miss, "--nth", "2"]) == 0
    assert "policy nearest answers with recording #0's result" in capsys.readouterr().out
    assert main(["explain", str(path), "pages", miss, "--nth", "3"]) == 0
    out = capsys.readouterr().out
    assert "no recording not consumed by the earlier calls to serve: fail_call answers" in out
    assert main(["explain", str(path), "find", '{"q": "y", "n": 7}']) == 0
    assert "policy nearest answers with recording #3's result" in capsys.readouterr().out
    assert server.call_tool("find", {"q": "y", "n": 7}) == recorded[3]
