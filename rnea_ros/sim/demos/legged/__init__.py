"""The legged demos (`--quadruped`, `--humanoid`): `scene` (the robot on a MuJoCo floor), `demo`
(joint PD alone against PD + inverse dynamics)."""
