"""`wt verify`: check universes against the live server they were recorded from (docs/verify.md).

Import from the modules: `check_universe` (`verify_universe`, `VerifyOptions`), `findings`,
`updating` (`--update`), `render`. This package re-exports nothing, so importing one pure module
(`surface_diff`, `schema_compat`, `result_shapes`) loads no serving code.
"""
