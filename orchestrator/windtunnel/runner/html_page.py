"""One self-contained HTML page: inline CSS (and an optional inline script), nothing loaded.

The Content-Security-Policy forbids every fetch; an inline script is allowed by its sha256 hash
only, so the page runs exactly the script it was written with and nothing injected into it.
Pages stay readable with scripts off: scripts only add filtering and search.
"""

from __future__ import annotations

import base64
import hashlib
import html

__all__ = ["CSS", "e", "page", "page_parts"]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1b1f24;
background:#f6f7f9}
main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 12px}h2{font-size:18px;margin:28px 0 10px}
h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;width:100%;background:#fff;margin:4px 0 10px}
th,td{border:1px solid #d8dde3;padding:4px 8px;text-align:left;vertical-align:top;
overflow-wrap:break-word}
td.mono{overflow-wrap:anywhere}
th{background:#eef1f4;font-weight:600}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid #d8dde3;
padding:8px;margin:4px 0}
.cards{display:flex;gap:10px;flex-wrap:wrap;margin-bottom:8px}
.card{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:8px 14px}
.card b{display:block;font-size:20px}
.pill{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;
color:#fff}
.passed{background:#1a7f37}.failed{background:#cf222e}.error{background:#9a6700}
.invalid{background:#6639ba}tr.faulted td{background:#f1ebff}
.neutral{background:#8c959f}
.ok{color:#1a7f37;font-weight:600}.bad{color:#cf222e;font-weight:600}
details.unit{background:#fff;border:1px solid #d8dde3;border-radius:6px;margin:10px 0;
padding:6px 12px}
details.unit>summary{cursor:pointer;font-weight:600;padding:4px 0}
tr.diverged td{background:#fff4e5}
.diff .call{background:#ffebe9}.diff .rec{background:#dafbe1}
code.method{background:#ddf4ff;border-radius:3px;padding:0 3px}
.muted{color:#57606a}
pre .add{background:#dafbe1;display:block}pre .del{background:#ffebe9;display:block}
pre .ctx{display:block}
.charts{display:flex;gap:16px;flex-wrap:wrap}.chart{background:#fff;border:1px solid #d8dde3;
border-radius:6px;padding:8px 12px}.chart h3{margin:0 0 6px}
.toolbar{display:flex;gap:10px;align-items:center;margin:8px 0}
.toolbar input[type=search]{flex:1;padding:4px 8px;font:inherit}
"""


def e(value: object) -> str:
    """HTML-escaped text (quotes too: safe in attributes)."""
    return html.escape(str(value), quote=True)


def page_parts(title: str, *, script: str | None = None) -> tuple[str, str]:
    """The document before and after its body, for pages written piece by piece. `script`
    runs inline, allowed by its hash alone."""
    script_src = ""
    script_tag = ""
    if script is not None:
        digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
        script_src = f"; script-src 'sha256-{digest}'"
        script_tag = f"<script>{script}</script>"
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" '
        f"content=\"default-src 'none'; style-src 'unsafe-inline'{script_src}\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{CSS}</style></head><body><main>"
    )
    return head, "</main>" + script_tag + "</body></html>\n"


def page(title: str, body: str, *, script: str | None = None) -> str:
    """The whole document."""
    head, tail = page_parts(title, script=script)
    return head + body + tail
