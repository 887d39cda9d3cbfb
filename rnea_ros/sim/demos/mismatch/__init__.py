"""The mismatch demo (`--mismatch`): `demo` (record, identify, track), `report` (numbers, targets, plot)."""
