"""`CallLog`: a server's calls in arrival order, and the listeners told of each one.

The replay engine and the mock server keep their calls here. Calls may arrive from two threads
(over stdio, the reader thread answers plain calls while Trio serves the rest): one reentrant lock
orders the log and the listeners (a listener may read the log), and the replay engine resolves
under the same lock so that sequence state and log order agree. A transport that answers on the
critical path may have the listeners told after its answer is written (`tell_listeners=False`,
then `tell_listeners()`); they still hear of every call once, in log order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .calls import MCPCall

__all__ = ["CallListener", "CallLog"]

CallListener = Callable[[MCPCall], None]


class CallLog:
    def __init__(self) -> None:
        self.listeners: list[CallListener] = []
        self.lock = threading.RLock()
        self._calls: list[MCPCall] = []
        self._untold: list[MCPCall] = []

    def calls(self) -> list[MCPCall]:
        """Every call so far, in arrival order (a copy)."""
        with self.lock:
            return list(self._calls)

    def append(self, call: MCPCall, *, tell_listeners: bool = True) -> None:
        with self.lock:
            self._calls.append(call)
            if self.listeners:
                self._untold.append(call)
            if tell_listeners:
                self.tell_listeners()

    def clear(self) -> None:
        """Forget every call (those not told yet included)."""
        with self.lock:
            self._calls.clear()
            self._untold.clear()

    def tell_listeners(self) -> None:
        """Tell the listeners of every call logged and not told yet, in log order."""
        with self.lock:
            untold, self._untold = self._untold, []
            for call in untold:
                for listener in self.listeners:
                    listener(call)
