"""A live upstream with awkward answers: the official `mcp` SDK's `MCPServer`, with tools whose
results hold secrets where redaction is easy to miss and names that carry terminal control bytes.

Run as a program it serves stdio (`python tests/record/hostile_upstream.py [ARGS...]`, any
arguments ignored, so a test can put a secret on its command line); `tests/record/hostile_http.py`
serves it over Streamable HTTP behind a few hostile HTTP behaviours.
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer

KEY_SECRET = "sk-live-0a1b2c3d4e5f60718293a4b5"
"""Used as an object key by `keyring`."""
PIN = 482193
"""The number `pin` answers (the SDK repeats it in the JSON text block)."""
ESCAPED_TOOL = "ring\x1b]0;owned\x07"
"""A tool name that retitles a terminal and rings its bell when printed raw."""
ESCAPED_KEY = "note\x1b[2J"
"""An object key that clears a terminal when printed raw."""


def build_hostile_server() -> MCPServer:
    server = MCPServer("hostile-upstream")
    rings = {"n": 0}

    @server.tool(description="Who holds each API key, by key.")
    def keyring() -> dict[str, Any]:
        return {KEY_SECRET: {"owner": "ana"}}

    @server.tool(description="The card's PIN.")
    def pin() -> dict[str, Any]:
        return {"pin": PIN, "card": "visa"}

    @server.tool(name=ESCAPED_TOOL, description="Rings: every call answers the next number.")
    def ring() -> int:
        rings["n"] += 1
        return rings["n"]

    @server.tool(description="A note with a contact address under an odd key.")
    def contact() -> dict[str, Any]:
        return {ESCAPED_KEY: "ana@bluewing-logistics.com"}

    @server.tool(description="Answered by the HTTP front with comments forever (hostile_http).")
    def keepalive() -> str:
        return "never reached over HTTP"

    @server.tool(description="Answered by the HTTP front with a 500 quoting a key (hostile_http).")
    def leak() -> str:
        return "never reached over HTTP"

    @server.tool(description="A text of `size` bytes.")
    def blob(size: int) -> str:
        return "x" * size

    return server


if __name__ == "__main__":
    build_hostile_server().run("stdio")
