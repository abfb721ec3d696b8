"""Faults injected into a replay on purpose (issue 28): the model and its spellings (`spec`)."""

from __future__ import annotations

from .spec import (
    ALL_TOOLS,
    FAILURE_MODES,
    FAULT_EXTRA_KEY,
    FAULT_FIELDS,
    FAULT_KINDS,
    Fault,
    FaultKind,
    draw,
    fault_from_table,
    faults_for_failure_mode,
    faults_from_tables,
    parse_fault,
    parse_faults,
)

__all__ = [
    "ALL_TOOLS",
    "FAILURE_MODES",
    "FAULT_EXTRA_KEY",
    "FAULT_FIELDS",
    "FAULT_KINDS",
    "Fault",
    "FaultKind",
    "draw",
    "fault_from_table",
    "faults_for_failure_mode",
    "faults_from_tables",
    "parse_fault",
    "parse_faults",
]
