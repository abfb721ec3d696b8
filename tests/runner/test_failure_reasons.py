"""How a failed unit's reason reads in the results: the cause, and the fix when there is one."""

from __future__ import annotations

import errno
import os

from windtunnel.fd_limit import open_file_limit
from windtunnel.runner.execute import _reason

HINT = f" (open-file limit {open_file_limit()}; raise it with ulimit -n)"


def _connect_failure() -> Exception:
    """What a client's connect raises when every attempt hit EMFILE: the cause is two links
    down, inside an exception group (as `trio.open_tcp_stream` chains it)."""
    attempt = OSError(errno.EMFILE, os.strerror(errno.EMFILE))
    try:
        try:
            msg = "all attempts to connect to 127.0.0.1:1 failed"
            raise OSError(msg) from ExceptionGroup(msg, [attempt])
        except OSError as exc:
            raise ConnectionError("connect failed") from exc
    except ConnectionError as exc:
        return exc


def test_running_out_of_descriptors_deep_in_a_chain_gets_the_hint() -> None:
    assert _reason(_connect_failure()) == "unexpected ConnectionError: connect failed" + HINT


def test_a_hint_already_in_the_message_is_not_repeated() -> None:
    error = OSError(errno.EMFILE, "Too many open files" + HINT)
    assert _reason(error).count("open-file limit") == 1


def test_other_failures_read_as_before() -> None:
    assert _reason(RuntimeError("boom")) == "unexpected RuntimeError: boom"
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "refused")
    assert _reason(refused) == "unexpected ConnectionRefusedError: [Errno 111] refused"
