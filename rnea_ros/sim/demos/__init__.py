"""The demos, one module or package per family; `rnea_ros.demo.DEMOS` is their table (flag, module,
what it shows). Each runs on the shared pieces of rnea_ros.sim (plants, simulator node, supervisor,
processes, report) and has a `main(argv)` returning its exit status (rnea_ros.sim.cli: OK,
MISSED, REFUSED...)."""
