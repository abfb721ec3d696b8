"""`_fast_path_head.read_head`: the one request shape read without h11, and never more than h11 takes.

The claim that matters is the subset rule: any head `read_head` accepts, h11 accepts too, with
the same request line, headers and body size. Hypothesis builds heads from the pieces that tell
parsers apart (line endings, folding, spaces around colons, odd bytes in names and values,
duplicates, framing headers) and checks every verdict against h11's.
"""

from __future__ import annotations

import h11
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.mcp._fast_path_head import MAX_HEAD, NEED_MORE, Head, read_head

LINE = b"POST /mcp HTTP/1.1"
GOOD = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nAccept-Encoding: gzip, deflate\r\n"
    b"Connection: keep-alive\r\nUser-Agent: python-httpx/0.28.1\r\n"
    b"accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n"
    b"mcp-protocol-version: 2025-11-25\r\nContent-Length: 4\r\n\r\n"
)


def h11_head(data: bytes) -> tuple[h11.Request, int] | None:
    """What h11 makes of `data`: the request and where its body starts, or None if it refuses."""
    connection = h11.Connection(h11.SERVER)
    connection.receive_data(data)
    try:
        event = connection.next_event()
    except h11.RemoteProtocolError:
        return None
    if not isinstance(event, h11.Request):
        return None
    return event, len(data) - len(connection.trailing_data[0])


def test_the_sdk_clients_head_is_read_with_its_headers_and_body_size() -> None:
    head = read_head(GOOD + b"body", LINE)
    assert head == Head(
        size=len(GOOD),
        headers={
            "host": "127.0.0.1:8000",
            "accept-encoding": "gzip, deflate",
            "connection": "keep-alive",
            "user-agent": "python-httpx/0.28.1",
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": "2025-11-25",
            "content-length": "4",
        },
        content_length=4,
    )


def test_every_prefix_of_an_accepted_head_needs_more() -> None:
    for end in range(len(GOOD) - 1):
        assert read_head(GOOD[:end], LINE) == NEED_MORE, GOOD[:end]
    assert isinstance(read_head(GOOD, LINE), Head)


@pytest.mark.parametrize(
    "data",
    [
        b"GET /mcp HTTP/1.1\r\n",  # another method: refused as soon as it shows
        b"POST /other HTTP/1.1\r\nHost: x\r\n",
        b"POST /mcp HTTP/1.0\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"POST /mcp HTTP/1.1\nHost: x\nContent-Length: 0\n\n",  # bare LF
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nX: a\rb\r\n\r\n",  # bare CR
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nX: a\r\n b\r\n\r\n",  # folded
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n",  # space before colon
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nX\x00: 1\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nX: \x7f\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nhost: y\r\nContent-Length: 0\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nExpect: 100-continue\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nUpgrade: h2c\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nContent-Length: 0\r\n\r\n",  # no Host
        b"POST /mcp HTTP/1.1\r\nHost: x\r\n\r\n",  # no Content-Length
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: +4\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 4 4\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 1234567890123456789\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nX: " + b"a" * MAX_HEAD,  # too long, unfinished
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nX: " + b"a" * MAX_HEAD + b"\r\n\r\n",  # too long
    ],
)
def test_anything_else_is_not_ours(data: bytes) -> None:
    assert read_head(data, LINE) is None


def test_whitespace_around_a_value_is_not_part_of_it() -> None:
    data = b"POST /mcp HTTP/1.1\r\nHost:\t x \t\r\nContent-Length:7\r\nX-Empty:\r\n\r\n"
    head = read_head(data, LINE)
    assert isinstance(head, Head)
    assert head.headers == {"host": "x", "content-length": "7", "x-empty": ""}
    assert head.content_length == 7


HOSTS = [b"Host: x", b"host:x", b"Host: 127.0.0.1:8000 ", b"Host:", b"Host : x"]
LENGTHS = [
    b"Content-Length: 5",
    b"content-length:05",
    b"Content-Length:\t5 ",
    b"Content-Length: -5",
    b"Content-Length: 5, 5",
    b"Content-Length: 99",
]
EXTRAS = [
    b"X-Tab:\ta\tb\t",
    b"X-Odd: \x80\xff",
    b"X-Ctl: a\x01b",
    b"X-Del: \x7f",
    b" folded",
    b"\tfolded",
    b"Bad Name: 1",
    b"Bad\x00: 1",
    b"(paren): 1",
    b"X: a\rb",
    b"X: a\nb",
    b"Transfer-Encoding: chunked",
    b"Expect: 100-continue",
    b"Connection: keep-alive",
    b"Connection: close",
    b"Upgrade: websocket",
    b"mcp-protocol-version: 2025-11-25",
    b":empty-name",
    b"",
    *HOSTS,
    *LENGTHS,
]
# CRLF mostly, so that most heads get as far as their fields.
ENDINGS = st.sampled_from([b"\r\n", b"\r\n", b"\r\n", b"\n"])


@settings(max_examples=3000, deadline=None)
@given(
    request_line=st.sampled_from(
        [LINE, LINE, LINE, b"POST /mcp HTTP/1.0", b"POST  /mcp HTTP/1.1", b"post /mcp HTTP/1.1"]
    ),
    fields=st.permutations([st.sampled_from(HOSTS), st.sampled_from(LENGTHS)]).flatmap(
        lambda required: st.tuples(*required)
    ),
    extras=st.lists(st.sampled_from(EXTRAS), max_size=4),
    endings=st.lists(ENDINGS, min_size=7, max_size=7),
    end=ENDINGS,
)
def test_an_accepted_head_is_read_as_h11_reads_it(
    request_line: bytes,
    fields: tuple[bytes, bytes],
    extras: list[bytes],
    endings: list[bytes],
    end: bytes,
) -> None:
    lines = [*fields, *extras]
    data = request_line + b"\r\n" + b"".join(map(bytes.__add__, lines, endings)) + end
    ours = read_head(data + b"body!", LINE)
    if not isinstance(ours, Head):
        return
    theirs = h11_head(data + b"body!")
    assert theirs is not None, data
    request, body_at = theirs
    assert (request.method, request.target, request.http_version) == (b"POST", b"/mcp", b"1.1")
    assert body_at == ours.size
    assert {k.decode(): v.decode("latin-1") for k, v in request.headers} == ours.headers
    assert int(dict(request.headers)[b"content-length"]) == ours.content_length


def test_the_generated_heads_include_accepted_ones() -> None:
    """The property above is only as good as its inputs: some of them must be accepted."""
    accepted = []

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(
        fields=st.tuples(st.sampled_from(HOSTS), st.sampled_from(LENGTHS)),
        extras=st.lists(st.sampled_from(EXTRAS), max_size=4),
    )
    def count(fields: tuple[bytes, bytes], extras: list[bytes]) -> None:
        data = LINE + b"\r\n" + b"".join(line + b"\r\n" for line in [*fields, *extras])
        accepted.append(isinstance(read_head(data + b"\r\n", LINE), Head))

    count()
    assert 10 <= sum(accepted) < len(accepted)
