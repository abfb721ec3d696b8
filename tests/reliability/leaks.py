"""What a run may leave behind, read from /proc: listening sockets and processes."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["listening_ports", "processes_with", "tcp_listeners"]


def tcp_listeners() -> dict[int, int]:
    """Socket inode → port, for every TCP socket in LISTEN state on this machine."""
    found: dict[int, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                found[int(fields[9])] = int(fields[1].rsplit(":", 1)[1], 16)
    return found


def listening_ports(pid: int | None = None) -> set[int]:
    """Ports a process (default: this one) is listening on."""
    fd_dir = Path(f"/proc/{pid or os.getpid()}/fd")
    inodes: set[int] = set()
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return {port for inode, port in tcp_listeners().items() if inode in inodes}


def processes_with(marker: str) -> list[int]:
    """Running (not zombie) processes whose command line contains `marker`."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids
