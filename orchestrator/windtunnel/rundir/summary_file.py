"""`summary.json`, written one scenario at a time.

The file lists pass@k and pass^k for every k up to each scenario's runs (1,000 repeats of 100
scenarios are 200,000 values); the `Summary` holds them as `PassCurve`s, and only one scenario's
values are ever made at once. The bytes are those of `msgspec.json.format(..., indent=2)` over
the whole summary.
"""

from __future__ import annotations

from typing import BinaryIO

import msgspec

from ..runner.repeats import PassCurve
from ..runner.summary import Summary

__all__ = ["write_summary"]

_SCENARIOS = b'\n  "scenarios": {}'


def _curves_as_dicts(value: object) -> object:
    if isinstance(value, PassCurve):
        return dict(value)
    raise NotImplementedError(f"cannot encode {type(value).__name__}")


_encoder = msgspec.json.Encoder(enc_hook=_curves_as_dicts)


def write_summary(f: BinaryIO, summary: Summary) -> None:
    """Write `summary` as indented JSON, ending with a newline."""
    skeleton = msgspec.json.format(
        _encoder.encode(msgspec.structs.replace(summary, scenarios={})), indent=2
    )
    # The marker sits at the top level: a string inside the skeleton holding the same text has
    # its quotes escaped, so it cannot match.
    head, found, tail = skeleton.partition(_SCENARIOS)
    if not found or not summary.scenarios:
        f.write(msgspec.json.format(_encoder.encode(summary), indent=2) + b"\n")
        return
    f.write(head + _SCENARIOS[:-1])
    last = len(summary.scenarios) - 1
    for index, (name, scenario) in enumerate(summary.scenarios.items()):
        one = msgspec.json.format(_encoder.encode({name: scenario}), indent=2)
        lines = one.split(b"\n")[1:-1]  # without the enclosing braces
        f.write(b"\n" + b"\n".join(b"  " + line for line in lines))
        if index != last:
            f.write(b",")
    f.write(b"\n  }" + tail + b"\n")
