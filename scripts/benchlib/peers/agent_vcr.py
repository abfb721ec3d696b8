"""agent-vcr: a cassette built with its own models from mcp-rec's wire log (its recorder hangs
with pipe clients); replayed over stdio and legacy HTTP+SSE."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .common import (
    ERAS,
    Config,
    Peer,
    Preparing,
    _http_on_port,
)

AGENT_VCR_BUILD = """\
import json, sys
from datetime import datetime, timezone
from agent_vcr.core.format import (JSONRPCRequest, JSONRPCResponse, VCRInteraction, VCRMetadata,
                                   VCRRecording, VCRSession)
frames_path, init_path, out = sys.argv[1:4]
def pairs(path):
    requests, out = {}, []
    for line in open(path):
        frame = json.loads(line)["msg"]
        if "method" in frame and "id" in frame:
            requests[frame["id"]] = frame
        elif "id" in frame and frame["id"] in requests:
            out.append((requests.pop(frame["id"]), frame))
    return out
now = datetime.now(timezone.utc)
init_req, init_resp = next(p for p in pairs(init_path) if p[0]["method"] == "initialize")
seen, interactions = set(), []
for req, resp in [(init_req, init_resp)] + pairs(frames_path):
    key = json.dumps([req["method"], req.get("params")], sort_keys=True)
    if key in seen:
        continue  # reuse: one interaction per distinct request (agent-vcr's best case)
    seen.add(key)
    interactions.append(VCRInteraction(sequence=len(interactions), timestamp=now,
        direction="client_to_server", request=JSONRPCRequest(**req),
        response=JSONRPCResponse(**resp), latency_ms=1.0))
rec = VCRRecording(format_version="1.0.0",
    metadata=VCRMetadata(version="1.0.0", recorded_at=now, transport="stdio"),
    session=VCRSession(initialize_request=JSONRPCRequest(**init_req),
        initialize_response=JSONRPCResponse(**init_resp), capabilities={},
        interactions=interactions))
open(out, "w").write(rec.model_dump_json(indent=1))
"""

PEER = Peer("agent-vcr", ("agent-vcr",))


async def prepare(ctx: Preparing, bin_dir: Path | None, reason: str) -> None:
    work = ctx.work
    configs = ctx.configs
    failed = ctx.failed
    rec_logs = ctx.recordings.get("mcp-rec", {})
    vcr_bin = bin_dir
    if vcr_bin is None or not rec_logs:
        why = reason if vcr_bin is None else "needs mcp-rec's wire log to build its cassette"
        failed("agent-vcr", "stdio", "agent-vcr replay", why)
        failed("agent-vcr", "http", "agent-vcr replay (legacy HTTP+SSE)", why)
    else:
        builder = work / "agentvcr_build.py"
        builder.write_text(AGENT_VCR_BUILD)
        for era in ERAS:
            vcr = work / f"agentvcr-{era}.vcr"
            build = None
            if era in rec_logs and "legacy" in rec_logs:
                build = subprocess.run(  # noqa: ASYNC221  # setup, not timed
                    [
                        str(vcr_bin / "python"),
                        str(builder),
                        str(rec_logs[era]),
                        str(rec_logs["legacy"]),
                        str(vcr),
                    ],
                    capture_output=True,
                    text=True,
                    check=False,
                )
            agent_vcr = str(vcr_bin / "agent-vcr")
            if build is None or build.returncode != 0:
                why = (
                    "no wire log"
                    if build is None
                    else f"building the cassette failed: {build.stderr.strip()[-200:]}"
                )
                configs.append(
                    Config("agent-vcr", "stdio", era, "agent-vcr replay (stdio)", failure=why)
                )
                configs.append(
                    Config(
                        "agent-vcr",
                        "http",
                        era,
                        "agent-vcr replay (legacy HTTP+SSE)",
                        sse=True,
                        failure=why,
                    )
                )
                continue
            configs.append(
                Config(
                    "agent-vcr",
                    "stdio",
                    era,
                    "agent-vcr replay (stdio, method_and_params)",
                    stdio=(agent_vcr, ["replay", "--file", str(vcr), "--transport", "stdio"], {}),
                )
            )
            configs.append(
                Config(
                    "agent-vcr",
                    "http",
                    era,
                    "agent-vcr replay (legacy HTTP+SSE)",
                    sse=True,
                    start_http=_http_on_port(
                        [
                            agent_vcr,
                            "replay",
                            "--file",
                            str(vcr),
                            "--transport",
                            "sse",
                            "--host",
                            "127.0.0.1",
                        ],
                        "/sse",
                    ),
                )
            )
