"""Small TOML packs run by the scripted agent (real MCP clients against recorded servers)."""

from __future__ import annotations

from pathlib import Path

CRM = Path(__file__).parents[2] / "configs" / "demo" / "universes" / "crm.universe.json"
DEMO = Path(__file__).parents[2] / "configs" / "demo" / "pack.toml"


def scripted_pack(
    directory: Path,
    scenarios: int,
    *,
    repeats: int = 1,
    wander_every: int = 3,
    extra: str = "",
) -> Path:
    """`scenarios` scenarios `lookup-NN`; every `wander_every`-th leaves the recording and fails."""
    parts = [
        f'[pack]\nname = "scripted"\nconcurrency = 4\nrepeats = {repeats}\ntimeout_s = 60\n',
        '[agent]\nkind = "scripted"\n',
    ]
    for i in range(scenarios):
        query = "Bluewing" if i % wander_every == 0 else "Bluewing Logistics"
        parts.append(
            f'[[scenario]]\nname = "lookup-{i:02d}"\ntask = "look up a client"\n'
            f'upstreams = {{ crm = "{CRM}" }}\n'
            '[[scenario.policies]]\nkind = "no_divergence"\n'
            f'[[scenario.plan]]\ntool = "client_lookup"\nargs = {{ query = "{query}" }}\n'
            '[scenario.scripted]\nfinal_answer = "done"\n'
        )
    path = directory / "pack.toml"
    path.write_text("\n".join(parts) + extra)
    return path
