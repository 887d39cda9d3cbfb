"""The package's ROS nodes, one module (or package) per node, each with its main()."""
