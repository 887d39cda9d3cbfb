"""The collision demo (`--collision`): `demo` (a plant equal to the URDF), `mismatch` (a plant
unlike it), `scenario` (what both share)."""
