"""The JTC demo (`--controller jtc`): `demo` (processes, phases, command line), `report`
(metrics, table, plot)."""
