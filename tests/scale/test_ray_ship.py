"""What `--executor ray` ships (the tree, the universes outside it) and what it refuses before it
connects: a tree over Ray's package limit, a dashboard address. No Ray cluster needed."""

from __future__ import annotations

import os
import re
import socket
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from tests.scale.packs import CRM, scripted_pack
from windtunnel.cli.main import main
from windtunnel.errors import ConfigError
from windtunnel.runner.pack_config import load_pack
from windtunnel.scale.ray_connect import connect
from windtunnel.scale.ray_executor import load_shipped
from windtunnel.scale.ray_ship import ShippedPack, ship_pack, unpack

_RELATIVE = (
    '[[scenario]]\nname = "relative"\ntask = "look up a client"\n'
    'upstreams = { crm = "../shared/crm.universe.json" }\n'
    '[[scenario.plan]]\ntool = "client_lookup"\n'
)


def _tree(root: Path) -> Path:
    """A pack directory with an agent script, a run directory, venvs, `.git`, a cache and a
    link out, plus a universe outside it (`../shared/`) and one named by an absolute path."""
    (root / "shared").mkdir()
    (root / "shared" / "crm.universe.json").write_bytes(CRM.read_bytes())
    tree = root / "pack"
    (tree / "agents").mkdir(parents=True)
    (tree / "agents" / "agent.py").write_text("print('hi')\n")
    for junk in (".venv", "env", ".git", "agents/__pycache__", "runs/old", "runs/now"):
        (tree / junk).mkdir(parents=True)
        (tree / junk / "file").write_text("not shipped\n")
    (tree / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tree / "passwd").symlink_to("/etc/passwd")
    return scripted_pack(tree, 2, extra=_RELATIVE)


def test_the_archive_holds_the_tree_and_every_universe(tmp_path: Path) -> None:
    """The pack's directory is shipped without the run directory, venvs, `.git`, caches or
    links; universes outside it or named by an absolute path travel under
    `.windtunnel-universes/`, and the unpacked pack reads them there."""
    pack_file = _tree(tmp_path)
    tree = pack_file.parent
    shipment = ship_pack(
        str(pack_file), load_pack(pack_file), working_dir=None, run_dir=tree / "runs" / "now"
    )
    names = sorted(zipfile.ZipFile(BytesIO(shipment.archive)).namelist())
    assert names == [
        ".windtunnel-universes/1/crm.universe.json",
        ".windtunnel-universes/2/crm.universe.json",
        "agents/agent.py",
        "pack.toml",
        "runs/old/file",
    ]
    assert shipment.pack == ShippedPack(
        pack="pack.toml",
        universes={
            "../shared/crm.universe.json": ".windtunnel-universes/1/crm.universe.json",
            str(CRM): ".windtunnel-universes/2/crm.universe.json",
        },
    )
    assert (shipment.root, shipment.files) == (tree.resolve(), 5)

    there = tmp_path / "worker"
    unpack(shipment.archive, there)
    pack = load_shipped(shipment.pack, there)
    assert [sorted(map(str, s.upstreams.values())) for s in pack.scenarios] == [
        [str(there / ".windtunnel-universes/2/crm.universe.json")],
        [str(there / ".windtunnel-universes/2/crm.universe.json")],
        [str(there / ".windtunnel-universes/1/crm.universe.json")],
    ]
    assert pack.source == str(there / "pack.toml")


def test_a_tree_over_rays_limit_is_refused_before_connecting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pack whose tree zips past Ray's package limit (here lowered to 64 KiB with Ray's own
    `RAY_max_grpc_message_size`) stops with exit 2, naming the limit and the size, before
    anything connects or any shard directory is made."""
    monkeypatch.setenv("RAY_max_grpc_message_size", str(64 * 1024))
    pack_file = scripted_pack(tmp_path, 1)
    (tmp_path / "big.bin").write_bytes(os.urandom(256 * 1024))
    run = tmp_path / "runs" / "r"
    argv = ["run", str(pack_file), "--executor", "ray", "-o", str(run)]
    assert main(argv) == 2
    [message] = capsys.readouterr().err.splitlines()
    assert re.fullmatch(
        rf"wt: error: too big to ship to Ray: the files under {re.escape(str(tmp_path))} come "
        r"to more than 0\.1 MiB zipped \(0\.\d MiB read so far, \d files\), and Ray's limit "
        r"for a package is 0\.1 MiB \(65536 bytes, RAY_max_grpc_message_size\); ship a smaller "
        r"tree \(--ray-working-dir\) or keep large files out of the pack's directory",
        message,
    )
    assert not run.exists()


def test_a_smaller_working_dir_ships(tmp_path: Path) -> None:
    """`--ray-working-dir` chooses the tree; one that does not hold the pack is refused (the
    pack's directory is its agent's working directory)."""
    pack_file = scripted_pack(tmp_path, 1)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "note.txt").write_text("x")
    pack = load_pack(pack_file)
    whole = ship_pack(str(pack_file), pack, working_dir=str(tmp_path), run_dir=tmp_path / "r")
    assert sorted(zipfile.ZipFile(BytesIO(whole.archive)).namelist())[-2:] == [
        "pack.toml",
        "sub/note.txt",
    ]
    with pytest.raises(ConfigError, match=r"the pack is outside the tree shipped to Ray"):
        ship_pack(str(pack_file), pack, working_dir=str(tmp_path / "sub"), run_dir=tmp_path / "r")


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("http://127.0.0.1:8265", "is a Ray dashboard (Jobs API) address"),
        ("https://head.example:443", "is a Ray dashboard (Jobs API) address"),
        ("grpc://head:6379", "unknown scheme 'grpc'; expected HOST:PORT, ray://HOST:PORT or auto"),
    ],
)
def test_addresses_a_driver_cannot_join_through_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str, expected: str
) -> None:
    """A dashboard address is where `ray job submit` sends jobs: exit 2 with the command that
    does it, before anything is shipped or connected."""
    pack_file = scripted_pack(tmp_path, 1)
    argv = ["run", str(pack_file), "--executor", "ray", "--ray-address", address]
    assert main([*argv, "-o", str(tmp_path / "r")]) == 2
    [message] = capsys.readouterr().err.splitlines()
    assert message.startswith(f"wt: error: at --ray-address: {address}")
    assert expected in message
    if address.startswith("http://"):
        assert f"ray job submit --address {address} --working-dir . -- wt run" in message


def test_ray_working_dir_needs_the_ray_executor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--ray-working-dir` without `--executor ray` is a usage error (exit 2)."""
    pack_file = scripted_pack(tmp_path, 1)
    assert main(["run", str(pack_file), "--ray-working-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "wt: error: --ray-working-dir needs --executor ray\n"


_PYTHON_PACK = """
from pathlib import Path

from windtunnel.runner.scenario import PlanStep, Scenario, ScenarioPack

HERE = Path(__file__).parent
pack = ScenarioPack(
    "py-pack",
    [
        Scenario(
            name="lookup",
            task="look up a client",
            upstreams={"crm": HERE / "universes" / "crm.universe.json"},
            plan=[PlanStep(tool="client_lookup", args={"query": "Bluewing Logistics"})],
        )
    ],
)
"""


def test_a_python_pack_is_imported_from_the_shipped_tree(tmp_path: Path) -> None:
    """A `file.py:attr` pack ships its directory (`--ray-working-dir`) and, unpacked, names the
    universes of the unpacked tree; one naming a universe outside the tree is refused."""
    tree = tmp_path / "tree"
    (tree / "universes").mkdir(parents=True)
    (tree / "universes" / "crm.universe.json").write_bytes(CRM.read_bytes())
    (tree / "packs.py").write_text(_PYTHON_PACK)
    spec = f"{tree / 'packs.py'}:pack"
    shipment = ship_pack(spec, load_pack(spec), working_dir=str(tree), run_dir=tmp_path / "r")
    assert shipment.pack == ShippedPack(pack="packs.py:pack", toml=False)
    there = tmp_path / "worker"
    unpack(shipment.archive, there)
    pack = load_shipped(shipment.pack, there)
    assert pack.scenarios[0].upstreams == {"crm": there / "universes" / "crm.universe.json"}

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(ConfigError, match=r"upstream 'crm': .* is outside the tree shipped"):
        ship_pack(spec, load_pack(spec), working_dir=str(elsewhere), run_dir=tmp_path / "r")


def test_a_cluster_that_cannot_be_joined_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Ray Client address nobody answers (or, without `ray[client]`, any) is exit 2 and one
    line naming the address, after the tree was shipped and before any shard directory."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"ray://127.0.0.1:{probe.getsockname()[1]}"
    pack_file = scripted_pack(tmp_path, 1)
    run = tmp_path / "r"
    argv = ["run", str(pack_file), "--executor", "ray", "--ray-address", address]
    assert main([*argv, "-o", str(run)]) == 2
    [message] = capsys.readouterr().err.splitlines()
    assert message.startswith(f"wt: error: cannot join the Ray cluster at {address}: ")
    assert not run.exists()


def test_ray_address_set_to_the_dashboard_is_refused_the_same_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`RAY_ADDRESS=http://...` (set for `ray job submit`) is named as the variable it came from."""
    monkeypatch.setenv("RAY_ADDRESS", "http://127.0.0.1:8265")
    pack_file = scripted_pack(tmp_path, 1)
    assert main(["run", str(pack_file), "--executor", "ray", "-o", str(tmp_path / "r")]) == 2
    [message] = capsys.readouterr().err.splitlines()
    assert message.startswith(
        "wt: error: at RAY_ADDRESS: http://127.0.0.1:8265 is a Ray dashboard (Jobs API) address"
    )


class _FailingRay:
    """Stands in for the `ray` module where `ray.init` fails as Ray Client's does when the
    server cannot start a session (`ConnectionAbortedError`, the server's text after a colon)."""

    def __init__(self, message: str) -> None:
        self.message = message

    def is_initialized(self) -> bool:
        return False

    def init(self, address: str, **options: object) -> None:
        raise ConnectionAbortedError(self.message)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (
            "Initialization failure from server:\nTraceback (most recent call last):\n"
            '  File "server.py", line 1\nRuntimeError: no room for a session',
            "Initialization failure from server: RuntimeError: no room for a session",
        ),
        (
            "Initialization failure from server:\n",
            "Initialization failure from server: (no reason given; the head's "
            "logs/ray_client_server*.err say why)",
        ),
    ],
)
def test_a_ray_client_session_that_fails_to_start_says_why_in_one_line(
    message: str, reason: str
) -> None:
    """Ray Client puts the server's reason on the lines after the first: the error keeps the
    last of them, or, with none, says where the head logs it."""
    address = "ray://127.0.0.1:10001"
    with pytest.raises(ConfigError) as raised:
        connect(_FailingRay(message), address)
    assert str(raised.value) == f"cannot join the Ray cluster at {address}: {reason}"
