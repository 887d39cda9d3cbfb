"""ament_python build script for rnea_ros (also installs with plain pip)."""

import os
import subprocess
import sys
from glob import glob

from setuptools import Extension, find_packages, setup
from setuptools.command.install_lib import install_lib

PACKAGE = "rnea_ros"


class InstallLibWithKernels(install_lib):
    """install_lib, then the numba kernels compiled into the installed package's cache (next to
    the installed sources), so that the first start of a node finds them (a colcon build, `pip
    install .`). Not for wheels (machine-specific code); skipped without numba; a failure only
    warns (the first start compiles then)."""

    def run(self) -> None:
        super().run()
        if "bdist_wheel" in self.distribution.commands or os.environ.get("RNEA_ROS_NO_NUMBA"):
            return
        path = os.pathsep.join(p for p in (self.install_dir, os.environ.get("PYTHONPATH")) if p)
        command = [sys.executable, "-m", "rnea_ros.compiled.cache"]
        env = {**os.environ, "PYTHONPATH": path}
        try:
            subprocess.run(command, cwd=self.install_dir, env=env, check=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as exc:
            print(f"warning: the numba kernel cache was not prepared ({exc}); the first start compiles it")


def pointer_call_extension() -> list[Extension]:
    """The C extension `rnea_ros.compiled._pointer_call` (the cheapest call into the compiled
    kernels, see rnea_ros/compiled/pointer_kernels.py). Optional: without numpy at build time (pip's
    isolated build) or a C compiler the package installs without it and calls the kernels' numba
    entry points instead."""
    try:
        import numpy
    except ImportError:
        print("note: numpy is not importable at build time: rnea_ros.compiled._pointer_call not built")
        return []
    return [
        Extension(
            f"{PACKAGE}.compiled._pointer_call",
            [f"{PACKAGE}/compiled/_pointer_call.c"],
            include_dirs=[numpy.get_include()],
            optional=True,
        )
    ]


setup(
    name=PACKAGE,
    ext_modules=pointer_call_extension(),
    cmdclass={"install_lib": InstallLibWithKernels},
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "bench"]),
    # PEP 561: the package ships its type hints (the C extension's in a stub)
    package_data={PACKAGE: ["py.typed", "compiled/_pointer_call.pyi"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
    ],
    install_requires=["setuptools", "numpy"],
    extras_require={"fast": ["numba"]},
    zip_safe=False,  # the C extension
    maintainer="rnea_ros developers",
    maintainer_email="dev@rnea-ros.invalid",
    description="Real-time RNEA inverse dynamics node for ROS 2 and ros2_control.",
    license="BSD-3-Clause",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            # each through rnea_ros.ros.entry (ends with its parent, a stop while importing: one line)
            "inverse_dynamics_node = rnea_ros.executables:inverse_dynamics_node",
            "inverse_dynamics_lifecycle_node = rnea_ros.executables:inverse_dynamics_lifecycle_node",
            "mujoco_sim_node = rnea_ros.executables:mujoco_sim_node",
            "multisine_trajectory = rnea_ros.executables:multisine_trajectory",
            "trajectory_feedforward_node = rnea_ros.executables:trajectory_feedforward_node",
            "rnea_ros_identify = rnea_ros.identification.cli:main",
            "rnea_ros_record = rnea_ros.tools.record:main",
            "rnea_ros_trigger = rnea_ros.tools.trigger:main",
            "rnea_ros_param = rnea_ros.tools.param:main",
        ],
    },
)
