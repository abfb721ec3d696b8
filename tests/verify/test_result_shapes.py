"""How a re-sent call's answer is compared with its recording (`result_shapes`)."""

from __future__ import annotations

from typing import Any

from windtunnel.verify.result_shapes import result_view, shape_changes, value_difference


def changes(before: Any, after: Any) -> list[tuple[str, str]]:
    return [(c.path, c.change) for c in shape_changes(result_view(before), result_view(after))]


def test_a_bare_payload_is_compared_as_the_result_a_replay_serves() -> None:
    """A recorded dict is served as structuredContent plus its JSON text: the same shape as
    a live CallToolResult carrying the same object."""
    live = {
        "content": [{"type": "text", "text": '{"a": 2, "b": "x"}'}],
        "structuredContent": {"a": 2, "b": "x"},
    }
    assert changes({"a": 1, "b": "y"}, live) == []


def test_removed_and_retyped_keys_break_added_keys_inform() -> None:
    """Breaking changes first: a key gone, a type changed; then the key added."""
    before = {"a": 1, "b": "x", "list": [{"id": 1}]}
    after = {"a": "1", "list": [{"id": 2, "name": "n"}], "c": True}
    found = changes(before, after)
    assert ("structuredContent.a", "type") in found
    assert ("structuredContent.b", "removed") in found
    assert ("structuredContent.list[].name", "added") in found
    assert ("structuredContent.c", "added") in found
    assert [change for _, change in found][-1] == "added"
    assert found.index(("structuredContent.a", "type")) < found.index(
        ("structuredContent.c", "added")
    )


def test_an_empty_array_says_nothing_about_its_elements() -> None:
    """[] recorded, [{"id": 1}] live (or the other way): no shape change."""
    assert changes({"items": []}, {"items": [{"id": 1}]}) == []
    assert changes({"items": [{"id": 1}]}, {"items": []}) == []


def test_an_error_where_a_result_was_is_breaking() -> None:
    ok = {"content": [{"type": "text", "text": "fine"}]}
    failed = {"content": [{"type": "text", "text": "boom"}], "isError": True}
    assert changes(ok, failed) == [("isError", "type")]


def test_content_block_types_in_order() -> None:
    text = {"type": "text", "text": "a"}
    image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
    assert changes({"content": [text, image]}, {"content": [image, text]}) == [("content", "type")]


def test_by_value_placeholders_are_equal_and_the_first_difference_is_named() -> None:
    """Redaction placeholders compare equal whatever their number; JSON text is looked into."""
    before = result_view({"key": "[REDACTED:1]", "n": 1})
    same = result_view({"key": "[REDACTED:4]", "n": 1.0})
    other = result_view({"key": "[REDACTED:1]", "n": 2})
    assert value_difference(before, same) is None
    assert value_difference(before, other) == "$.content[0].text.n"
