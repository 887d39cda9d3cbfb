"""ament_python build script for rnea_ros (also installs with plain pip)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "rnea_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "bench"]),
    package_data={PACKAGE: ["py.typed"]},  # PEP 561: the package ships its type hints
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
    ],
    install_requires=["setuptools", "numpy"],
    extras_require={"fast": ["numba"]},
    zip_safe=True,
    maintainer="rnea_ros developers",
    maintainer_email="dev@rnea-ros.invalid",
    description="Real-time RNEA inverse dynamics node for ROS 2 and ros2_control.",
    license="BSD-3-Clause",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "inverse_dynamics_node = rnea_ros.node.main:main",
            "mujoco_sim_node = rnea_ros.sim.sim_node:main",
            "multisine_trajectory = rnea_ros.sim.multisine_node:main",
            "trajectory_feedforward_node = rnea_ros.node.trajectory_feedforward:main",
            "rnea_ros_identify = rnea_ros.identify:main",
            "rnea_ros_record = rnea_ros.tools.record:main",
            "rnea_ros_trigger = rnea_ros.tools.trigger:main",
            "rnea_ros_param = rnea_ros.tools.param:main",
        ],
    },
)
