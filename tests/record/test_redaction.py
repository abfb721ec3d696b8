"""Redaction: secrets found by key, JSON path or regex never reach a file, and the same secret
becomes the same placeholder everywhere, so a replayed agent still matches."""

from __future__ import annotations

import json
from pathlib import Path

import mcp
import pytest
import trio

from tests.record.sdk_upstream import SECRET
from tests.record.upstreams import SDK_UPSTREAM
from windtunnel.errors import ConfigError
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record import RecordingProxy
from windtunnel.record.credentials import mask_url, mask_urls_in
from windtunnel.record.redact import RedactionRules, Redactor, load_rules_file, parse_rule

CALL_RESULT = {
    "content": [{"type": "text", "text": json.dumps({"user": "ana", "api_key": SECRET})}],
    "structuredContent": {"user": "ana", "api_key": SECRET},
}


def redacted(rules: RedactionRules, args: dict[str, object], result: object) -> tuple[object, ...]:
    redactor = Redactor(rules)
    redactor.see_call(args, result)
    return redactor.apply(args), redactor.apply(result), redactor.summary()


def test_a_key_rule_replaces_the_value_wherever_it_appears() -> None:
    """Found under its key in the structured result, the secret goes from the JSON text block too."""
    args, result, summary = redacted(parse_rule("key:API_KEY"), {"user": "ana"}, CALL_RESULT)
    assert args == {"user": "ana"}
    assert result == {
        "content": [
            {"type": "text", "text": json.dumps({"user": "ana", "api_key": "[REDACTED:1]"})}
        ],
        "structuredContent": {"user": "ana", "api_key": "[REDACTED:1]"},
    }
    assert summary == {"key:api_key": 1}


def test_a_path_rule_selects_by_position_with_wildcards() -> None:
    """`$.args.card[*]` takes each element of that argument, and only there (short values too)."""
    args, result, summary = redacted(
        parse_rule("path:$.args.card[*]"), {"card": ["4111", 7], "n": 7}, {"seven": 7}
    )
    assert args == {"card": ["[REDACTED:1]", "[REDACTED:2]"], "n": "[REDACTED:2]"}
    assert result == {"seven": "[REDACTED:2]"}
    assert summary == {"path:$.args.card[*]": 2}


def test_a_regex_rule_replaces_each_match_inside_strings() -> None:
    """Every match is its own secret; text around it stays."""
    args, _, _ = redacted(
        parse_rule(r"regex:sk-live-[0-9a-f]+"), {"note": f"key {SECRET} and sk-live-00ff"}, None
    )
    assert args == {"note": "key [REDACTED:1] and [REDACTED:2]"}


def test_placeholders_are_stable_across_calls() -> None:
    """A secret seen in one call's result has the same placeholder in a later call's args."""
    redactor = Redactor(parse_rule("key:api_key"))
    redactor.see_call({"user": "ana"}, CALL_RESULT)
    redactor.see_call({"api_key": SECRET}, "accepted")
    assert redactor.apply({"api_key": SECRET}) == {"api_key": "[REDACTED:1]"}
    assert redactor.distinct == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("colour:x", "--redact: unknown rule kind 'colour' in 'colour:x'"),
        ("path:args.x", "--redact: a JSON path starts with `$`, got 'args.x'"),
        ("path:$.headers.x", "--redact: JSON path '$.headers.x' must start with `$.args`"),
        ("path:$.args[x]", "--redact: cannot read JSON path '$.args[x]' at character 7"),
        ("regex:(", "--redact: regex '(' does not compile"),
        ("key:", "--redact: empty rule 'key:'"),
    ],
)
def test_bad_rules_are_refused_with_one_clear_line(spec: str, message: str) -> None:
    """Each bad rule names the option and what was expected."""
    with pytest.raises(ConfigError) as info:
        parse_rule(spec)
    assert str(info.value).startswith(message)


def test_a_rules_file_is_read_and_checked(tmp_path: Path) -> None:
    """keys/paths/patterns lists load; an unknown field or a wrong type names the file."""
    good = tmp_path / "rules.toml"
    good.write_text('keys = ["password"]\npaths = ["$.result.token"]\npatterns = ["sk-[a-z]+"]\n')
    assert load_rules_file(str(good)) == RedactionRules(
        keys=["password"], paths=["$.result.token"], patterns=["sk-[a-z]+"]
    )
    bad = tmp_path / "bad.toml"
    bad.write_text('keys = "password"\n')
    with pytest.raises(ConfigError, match=r"bad.toml at \$.keys: expected a list of non-empty"):
        load_rules_file(str(bad))
    bad.write_text('key = ["password"]\n')
    with pytest.raises(ConfigError, match="unknown field"):
        load_rules_file(str(bad))


async def test_a_recorded_secret_never_reaches_the_files_and_replay_still_matches(
    tmp_path: Path,
) -> None:
    """The token a tool issued and the call that used it are both redacted, in the universe and
    the log; replayed, an agent passing the issued (placeholder) token on still hits."""
    proxy = RecordingProxy(SDK_UPSTREAM, name="sdk", redact=parse_rule("key:api_key"))
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode="legacy") as client:
                issued = await client.call_tool("issue_token", {"user": "ana"})
                used = await client.call_tool(
                    "use_token", {"api_key": issued.structured_content["api_key"]}
                )
            await proxy.stop()
        recording = proxy.save(tmp_path / "sdk.universe.json", log=tmp_path / "sdk.jsonl")
        server = RecordedMCPServer(tmp_path / "sdk.universe.json")
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode="legacy") as client:
                replay_issued = await client.call_tool("issue_token", {"user": "ana"})
                replay_used = await client.call_tool(
                    "use_token", {"api_key": replay_issued.structured_content["api_key"]}
                )
            await server.stop()
    assert used.content[0].text == "accepted"
    for file in ("sdk.universe.json", "sdk.jsonl"):
        text = (tmp_path / file).read_text()
        assert SECRET not in text
        assert "[REDACTED:1]" in text
    assert replay_issued.structured_content == {"user": "ana", "api_key": "[REDACTED:1]"}
    assert replay_used.content[0].text == "accepted"
    assert [call.divergence for call in server.call_log()] == [None, None]
    assert recording.redacted == {"key:api_key": 1}
    assert recording.secrets_left == []


def test_a_secret_used_as_an_object_key_is_replaced_there_too() -> None:
    """A regex finds the secret in a key; the key becomes its placeholder, as does the same
    value anywhere else, so an agent passing it back still matches."""
    result = {"structuredContent": {SECRET: {"owner": "ana"}}, "content": [{"text": SECRET}]}
    args, redacted_result, summary = redacted(
        parse_rule(r"regex:sk-live-[0-9a-f]+"), {"key": SECRET}, result
    )
    assert redacted_result == {
        "structuredContent": {"[REDACTED:1]": {"owner": "ana"}},
        "content": [{"text": "[REDACTED:1]"}],
    }
    assert args == {"key": "[REDACTED:1]"}
    assert summary == {"regex:sk-live-[0-9a-f]+": 1}


def test_a_secret_number_is_replaced_in_the_json_text_and_in_prose() -> None:
    """`key:pin` finds 482193 in the structured result: in the JSON text block it becomes the
    quoted placeholder (the text stays the JSON of the redacted value), in prose the bare one,
    and digits that are part of a longer number are left alone."""
    structured = {"pin": 482193, "card": "visa"}
    result = {
        "structuredContent": structured,
        "content": [
            {"type": "text", "text": json.dumps(structured, indent=2)},
            {"type": "text", "text": "PIN 482193 (not 1482193 or 482193.5); note: 'pin 482193'"},
        ],
    }
    _, redacted_result, summary = redacted(parse_rule("key:pin"), {}, result)
    assert isinstance(redacted_result, dict)
    expected = {"pin": "[REDACTED:1]", "card": "visa"}
    assert redacted_result["structuredContent"] == expected
    assert redacted_result["content"][0]["text"] == json.dumps(expected, indent=2)
    assert redacted_result["content"][1]["text"] == (
        "PIN [REDACTED:1] (not 1482193 or 482193.5); note: 'pin [REDACTED:1]'"
    )
    assert summary == {"key:pin": 1}


def test_a_secret_with_characters_json_escapes_is_found_in_the_text_block() -> None:
    """A password with a quote and a non-ASCII letter stands escaped in the JSON text block
    (`\\"`, `\\u00e9`); that spelling is replaced too."""
    password = 'pa"ssé-word'
    structured = {"password": password}
    result = {"structuredContent": structured, "content": [{"text": json.dumps(structured)}]}
    _, redacted_result, _ = redacted(parse_rule("key:password"), {}, result)
    assert isinstance(redacted_result, dict)
    assert redacted_result["content"][0]["text"] == '{"password": "[REDACTED:1]"}'


def test_rules_that_found_nothing_are_named() -> None:
    """`unmatched` lists the rules with no find, named as in the summary."""
    rules = parse_rule("key:API_KEY")
    rules.extend(parse_rule("regex:sk-live-[0-9a-f]+"))
    rules.extend(parse_rule("path:$.args.card"))
    redactor = Redactor(rules)
    redactor.see_call({"note": f"key {SECRET}"}, None)
    assert redactor.unmatched() == ["key:api_key", "path:$.args.card"]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pass@host/mcp", "https://[REDACTED]@host/mcp"),
        ("https://ghp_token@host/mcp", "https://[REDACTED]@host/mcp"),
        (
            "http://h:8/mcp?token=sk&format=json&flag",
            "http://h:8/mcp?token=[REDACTED]&format=[REDACTED]&[REDACTED]",
        ),
        ("http://h/mcp?token=[REDACTED:2]#frag", "http://h/mcp?token=[REDACTED:2]#[REDACTED]"),
        ("postgres://u:p@db/x?sslmode=require", "postgres://[REDACTED]@db/x?sslmode=[REDACTED]"),
        ("http://[::1]:80/mcp", "http://[::1]:80/mcp"),
        ("http://[::1/broken?x=1", "http://[::1/broken?x=[REDACTED]"),
    ],
)
def test_url_credentials_are_always_masked(url: str, shown: str) -> None:
    """Userinfo, query values and the fragment are masked without any rule; placeholders a rule
    put there stay; a URL `urlsplit` refuses is masked all the same."""
    assert mask_url(url) == shown
    assert mask_urls_in(f"cannot be reached at {url}: refused") == (
        f"cannot be reached at {shown}: refused"
    )
