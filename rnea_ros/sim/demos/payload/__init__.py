"""The payload demo (`--payload`): `demo`, `scenario` (no ROS), `plant` (its simulator process),
`supervisor` (ROS)."""
