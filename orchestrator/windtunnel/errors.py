"""The one exception tree of Wind Tunnel.

    WindtunnelError                 -- anything this project raises on purpose
    ├── InputError                  -- bad input in a file or argument; the CLI exits 2
    │   ├── UniverseError           -- a universe file that does not load (file + JSON path)
    │   ├── ConfigError             -- a pack config or CLI argument that does not make sense
    │   └── TraceError              -- a trace that `wt import` cannot read
    ├── UnknownToolError            -- a call to a tool the universe does not declare
    ├── HookRequiredError           -- a `synthesize` policy with no hook to call
    └── ServerError                 -- a server that could not start or failed while serving

A miss is not an exception: it is an answer to the agent plus divergence evidence.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "HookRequiredError",
    "InputError",
    "ServerError",
    "TraceError",
    "UniverseError",
    "UnknownToolError",
    "WindtunnelError",
]


class WindtunnelError(Exception):
    """Base class of every error this project raises on purpose."""


class InputError(WindtunnelError):
    """Bad input: names where it is (file, JSON path) and what was expected."""

    def __init__(self, message: str, *, file: str | None = None, path: str | None = None) -> None:
        self.message = message
        self.file = file
        self.path = path
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.file or ""
        if self.path:
            where = f"{where} at {self.path}" if where else f"at {self.path}"
        return f"{where}: {self.message}" if where else self.message


class UniverseError(InputError):
    """A universe file (or in-memory universe) that is not valid."""


class ConfigError(InputError):
    """A pack config, scenario definition or command-line argument that is not valid."""


class TraceError(InputError):
    """A trace that cannot be imported."""


class UnknownToolError(WindtunnelError):
    """A call named a tool the universe does not declare (recorded as a divergence first)."""

    def __init__(self, tool_name: str, known: list[str]) -> None:
        self.tool_name = tool_name
        self.known = known
        listing = ", ".join(known) if known else "none"
        super().__init__(f"unknown tool {tool_name!r}; this universe declares: {listing}")


class HookRequiredError(WindtunnelError):
    """The universe uses the `synthesize` policy but no hook was given."""


class ServerError(WindtunnelError):
    """A server failed to start or failed while serving."""
