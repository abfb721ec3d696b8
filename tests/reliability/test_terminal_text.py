"""Terminal control bytes from data never reach a terminal raw: `wt run` progress (agents'
stderr and answers), `wt validate` and `wt import` warnings and `wt explain` all escape them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.reliability.packs import universe_doc, write_pack, write_universe
from tests.reliability.wt_process import RAW_CONTROL, run_wt
from windtunnel.cli.main import main
from windtunnel.terminal_text import escape_terminal

# An OSC 8 link, a screen clear, a bell, a window title, a right-to-left override, an 8-bit CSI.
HOSTILE = "\x1b]8;;http://evil.example\x07click\x1b]8;;\x07\x1b[2J\x07\x1b]0;pwned\x07\u202egnp.exe\x9b31m"
ESCAPED = (
    "\\u001b]8;;http://evil.example\\u0007click\\u001b]8;;\\u0007\\u001b[2J\\u0007"
    "\\u001b]0;pwned\\u0007\\u202egnp.exe\\u009b31m"
)
CONTRACT_A = Path(__file__).parents[1] / "importing/data/traces/contract_a_minimal.wtin.json"


def test_escape_terminal_writes_control_characters_as_visible_escapes() -> None:
    """ESC, BEL, OSC 8, C1 controls, DEL, CR, newlines and bidi overrides become \\uXXXX text."""
    assert escape_terminal(HOSTILE) == ESCAPED
    assert escape_terminal("a\r\nb\x7f\u2066c\u2069") == "a\\u000d\\u000ab\\u007f\\u2066c\\u2069"
    assert escape_terminal("line\nnext\rx", keep_newlines=True) == "line\nnext\\u000dx"
    assert escape_terminal("tab\tand café ✓ 日本") == "tab\tand café ✓ 日本"


@given(st.text())
def test_escaped_text_has_no_control_characters_and_plain_text_is_unchanged(text: str) -> None:
    """Whatever the text, the escaped form holds no control character; safe text is left as is."""
    escaped = escape_terminal(text)
    assert RAW_CONTROL.search(escaped) is None
    assert "\n" not in escaped
    if RAW_CONTROL.search(text) is None and "\n" not in text:
        assert escaped == text


def test_wt_run_progress_escapes_agent_stderr_answers_and_names(tmp_path: Path) -> None:
    """`wt run` progress lines show agents' stderr, answers and scenario names escaped."""
    write_universe(tmp_path / "u.universe.json")
    agent = (
        "import sys\n"
        "if sys.argv[1].startswith('crash'):\n"
        f"    sys.stderr.write({HOSTILE!r} + '\\n'); sys.exit(3)\n"
        f"print({HOSTILE!r})\n"
    )
    pack = write_pack(
        tmp_path,
        {"crash": "u.universe.json", f"answer{HOSTILE}": "u.universe.json"},
        agent=["{python}", "-c", agent, "{scenario}"],
        name=f"pack{HOSTILE}",
    )
    text = pack.read_text() + '[[scenario.scorers]]\nkind = "contains"\ntext = "nothing like it"\n'
    pack.write_text(text)
    outcome = run_wt(["run", str(pack), "-o", str(tmp_path / "run"), "--progress", "plain"])
    assert outcome.code == 1, outcome
    assert RAW_CONTROL.search(outcome.stderr) is None, outcome.stderr
    lines = outcome.stderr.splitlines()
    assert sorted(line.split(" (")[0] for line in lines[:2]) == sorted(
        ["ERROR crash#0", f"FAIL  answer{ESCAPED}#0"]
    )
    [crash] = [line for line in lines if line.startswith("ERROR")]
    assert crash.endswith(f" - agent exited with code 3: {ESCAPED}")
    assert lines[2].startswith(f"pack{ESCAPED}: FAILED: 0 passed, 1 failed, 1 errors of 2")


def test_wt_validate_escapes_names_and_json_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wt validate` warnings (JSON paths with hostile keys) and errors (hostile tool names) are escaped."""
    doc = universe_doc()
    doc["recordings"][0]["args"] = {f"mail{HOSTILE}": "ops@bluewing.io"}
    good = write_universe(tmp_path / "good.universe.json", doc)
    bad_doc = universe_doc()
    bad_doc["recordings"][0]["tool_name"] = f"nope{HOSTILE}"
    bad = write_universe(tmp_path / "bad.universe.json", bad_doc)
    assert main(["validate", str(good), str(bad)]) == 2
    captured = capsys.readouterr()
    assert RAW_CONTROL.search(captured.out + captured.err) is None
    assert captured.out.splitlines()[1:] == [
        f'WARN {good} at $.recordings[0].args["mail{ESCAPED}"]: looks like an email address; '
        "redact it",
        f"INVALID {bad} at $.recordings[0].tool_name: recording names undeclared tool "
        f"'nope\\x1b]8;;http://evil.example\\x07click\\x1b]8;;\\x07\\x1b[2J\\x07\\x1b]0;pwned"
        f"\\x07\\u202egnp.exe\\x9b31m'",
    ]
    assert captured.err == ""


def test_wt_import_escapes_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`wt import` warnings naming hostile tools are escaped."""
    doc = json.loads(CONTRACT_A.read_text())
    doc["upstreams"][0]["tools"][0]["name"] = f"status{HOSTILE}"
    doc["upstreams"][0]["tools"][0]["schema_source"] = "inferred"
    doc["calls"][0]["tool"] = f"status{HOSTILE}"
    trace = tmp_path / "t.wtin.json"
    trace.write_text(json.dumps(doc))
    assert main(["import", str(trace), "-o", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert RAW_CONTROL.search(captured.out + captured.err) is None
    assert (
        f"warning: schema_inferred at $.upstreams[0].tools[0].input_schema: ops.status{ESCAPED}: "
        "no input schema in the trace; inferred from 0 call(s)"
    ) in captured.err.splitlines()


@pytest.mark.parametrize("as_json", [False, True])
def test_wt_explain_escapes_tool_names_keys_and_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    """`wt explain` shows hostile tool names, keys and values escaped; `--json` stays the same JSON."""
    doc = universe_doc(tool=f"t{HOSTILE}", result={f"k{HOSTILE}": f"v{HOSTILE}"})
    universe = write_universe(tmp_path / "u.universe.json", doc)
    args = json.dumps({"q": "a"})
    assert (
        main(["explain", str(universe), f"t{HOSTILE}", args, *(["--json"] if as_json else [])]) == 0
    )
    out = capsys.readouterr().out
    assert RAW_CONTROL.search(out.replace("\n", "")) is None
    if as_json:
        explained = json.loads(out)
        assert (explained["tool"], explained["result"]) == (
            f"t{HOSTILE}",
            {f"k{HOSTILE}": f"v{HOSTILE}"},
        )
    else:
        assert out.splitlines()[0] == f't{ESCAPED}({{"q":"a"}})'
        assert f'k{ESCAPED}":"v{ESCAPED}' in out.splitlines()[2]
