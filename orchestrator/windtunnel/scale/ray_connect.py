"""Joining a Ray cluster for `wt run --executor ray`: what each kind of address means.

`--ray-address` takes what `ray.init` takes: `HOST:PORT` (the head's GCS port, 6379 unless
`ray start --port` said otherwise) from a node of the cluster, `ray://HOST:10001` (Ray Client,
`pip install 'ray[client]'`) from outside it, or `auto`. A dashboard address
(`http://HOST:8265`) is where `ray job submit` sends a job; a driver cannot join through it, so
it is refused with the command that does what the user meant. Without `--ray-address`, Ray's
own rules apply (`RAY_ADDRESS`, which `ray job submit` sets for its entrypoint; else a local
instance started for this run).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ..errors import ConfigError

__all__ = ["check_address", "connect"]

_SCHEMES = ("ray",)
_DASHBOARD_SCHEMES = ("http", "https")


def check_address(address: str | None, where: str = "--ray-address") -> str | None:
    """`address` if a driver can join a cluster through it; else a `ConfigError` saying what to
    use instead (`where` names the option or variable it came from)."""
    if address is None:
        return None
    scheme, sep, _ = address.partition("://")
    scheme = scheme.lower() if sep else ""
    if scheme in _DASHBOARD_SCHEMES:
        raise ConfigError(
            f"{address} is a Ray dashboard (Jobs API) address, where `ray job submit` sends "
            f"jobs; a driver cannot join a cluster through it. Submit this run there: ray job "
            f"submit --address {address} --working-dir . -- wt run PACK --executor ray -o DIR "
            "(Ray gives the job its cluster), or give the cluster's address: HOST:6379 from a "
            "node of the cluster, ray://HOST:10001 (Ray Client) from outside it",
            path=where,
        )
    if sep and scheme not in _SCHEMES:
        raise ConfigError(
            f"{address}: unknown scheme {scheme!r}; expected HOST:PORT, ray://HOST:PORT or auto",
            path=where,
        )
    return address


def connect(ray: Any, address: str | None) -> bool:
    """Join the cluster at `address` unless this process already has (then that connection is
    used and left open). Returns whether it joined, so the caller knows to `ray.shutdown()`. A
    failure is one `ConfigError` line naming where it tried."""
    if ray.is_initialized():
        return False
    if address is None:
        # `RAY_ADDRESS` set to the dashboard for `ray job submit` is a common mix-up.
        check_address(os.environ.get("RAY_ADDRESS"), "RAY_ADDRESS")
    address = check_address(address)
    client = address is not None and address.lower().startswith("ray://")
    options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if not client:
        options["include_dashboard"] = False
    try:
        ray.init(address=address, **options)
    except (ConnectionError, TimeoutError, ValueError, RuntimeError) as exc:
        where = address or os.environ.get("RAY_ADDRESS") or "a local Ray instance"
        raise ConfigError(
            f"cannot join the Ray cluster at {where}: {_reason(exc, client)}"
        ) from None
    return True


def _reason(exc: BaseException, client: bool) -> str:
    """One line from Ray's error: its first line and, when it goes on (a server's traceback),
    its last. A Ray Client server that could not start a session often sends no reason at
    all: the user is told where the head logs it."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    reason = lines[0] if len(lines) == 1 else f"{lines[0]} {lines[-1]}"
    if client and len(lines) == 1 and reason.endswith(":"):
        reason += " (no reason given; the head's logs/ray_client_server*.err say why)"
    return reason
