# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
# The ROS 2 distribution whose rclpy and message wheels the venv gets: jazzy (.venv,
# requirements.txt) or kilted (.venv-kilted: requirements-dev.txt without its ros-jazzy-* lines,
# then requirements-kilted.txt). Taken from the command line only (`make test-ros
# ROS_DISTRO=kilted`), so that a sourced ROS install's own ROS_DISTRO does not pick the venv.
ROS_DISTRO := $(if $(filter command line,$(origin ROS_DISTRO)),$(ROS_DISTRO),jazzy)
DISTRO_REQUIREMENTS := $(if $(filter jazzy,$(ROS_DISTRO)),,requirements-$(ROS_DISTRO).txt)
VENV ?= $(if $(filter jazzy,$(ROS_DISTRO)),.venv,.venv-$(ROS_DISTRO))
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# launch_testing's pytest plugins (ROS 2 command-line wheels, when installed) do not load under pytest 9
PYTEST := $(PY) -m pytest -p no:launch_testing -p no:launch_ros
# ROS 2 Jazzy's launch, launch_testing and ros2 command-line wheels (a ROS install's tools): when
# this folder exists, set-up installs them into the Jazzy venv and `make test` runs the
# ROS-install tests (test/support/ros_install.py); without it those tests skip. Default:
# shared/ros2-wheels beside the repo.
ROS2_WHEELS ?= $(abspath $(CURDIR)/../shared/ros2-wheels)
export ROS2_WHEELS
# set-up again when the wheels are there but not yet in the venv, or newer than it
# (Jazzy's wheels: into the Jazzy venv only)
ROS2_SETUP := $(if $(filter jazzy,$(ROS_DISTRO)),$(if $(wildcard $(ROS2_WHEELS)/install.sh),\
	$(wildcard $(ROS2_WHEELS)/*.whl) $(if $(wildcard $(VENV)/.ros2-wheels),,FORCE)))
# The real rqt_reconfigure (rqt, qt_gui, PyQt5; Xvfb and Qt's libraries by apt-get as root): when
# this folder exists, set-up installs it into the Jazzy venv after the ros2-wheels, and `make test`
# drives the nodes through its GUI (test/ros/*/test_rqt_reconfigure*.py); without it those tests
# skip. install.sh is idempotent (pip and only the missing Debian packages).
RQT_WHEELS ?= $(abspath $(CURDIR)/../shared/rqt-wheels)
export RQT_WHEELS
RQT_SETUP := $(if $(filter jazzy,$(ROS_DISTRO)),$(if $(wildcard $(RQT_WHEELS)/install.sh),\
	$(wildcard $(RQT_WHEELS)/*.whl) $(if $(wildcard $(VENV)/.rqt-wheels),,FORCE)))

# ROS 2 Jazzy's ros2_control (controller_manager, joint_trajectory_controller,
# forward_command_controller, joint_state_broadcaster, topic_based_ros2_control), prebuilt: when
# this folder exists, set-up installs it into the Jazzy venv (its install.sh apt-gets the runtime
# libraries: root) and the demos run the real controllers (rnea_ros/sim/ros2_control.py applies
# its setup.sh for them); again when its tarball or installer changes. Without it they simulate them.
ROS2_CONTROL ?= $(abspath $(CURDIR)/../shared/ros2-control)
ROS2_CONTROL_STAMP := $(if $(filter jazzy,$(ROS_DISTRO)),$(if $(wildcard $(ROS2_CONTROL)/install.sh),$(VENV)/.ros2-control))

.PHONY: demo test test-unit test-ros test-kilted lint bench soak-sequences clean

$(STAMP): requirements.txt requirements-dev.txt $(DISTRO_REQUIREMENTS) setup.py rnea_ros/compiled/_pointer_call.c $(ROS2_SETUP) $(RQT_SETUP)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
ifeq ($(ROS_DISTRO),jazzy)
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	if [ -x "$(ROS2_WHEELS)/install.sh" ]; then "$(ROS2_WHEELS)/install.sh" $(PY) && touch $(VENV)/.ros2-wheels; fi
	if [ -x "$(RQT_WHEELS)/install.sh" ]; then "$(RQT_WHEELS)/install.sh" $(PY) && touch $(VENV)/.rqt-wheels; fi
else
	grep -hv '^ros-jazzy-\|^-r ' requirements.txt requirements-dev.txt > $(VENV)/requirements-base.txt
	$(PY) -m pip install --quiet -r $(VENV)/requirements-base.txt -r $(DISTRO_REQUIREMENTS)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
endif
	touch $(STAMP)

# numba's kernel cache, so that no first start compiles; again after any edit of rnea_ros/compiled/
# (its one cache stamp is a digest of those sources: rnea_ros/compiled/jit.py)
COMPILED_SOURCES := $(shell find rnea_ros/compiled -name '*.py' -o -name '*.pyi' -o -name '*.c')
KERNEL_CACHE := $(VENV)/.kernel-cache
$(KERNEL_CACHE): $(STAMP) $(COMPILED_SOURCES)
	$(PY) -m rnea_ros.compiled.cache
	touch $@

$(VENV)/.ros2-control: $(STAMP) $(wildcard $(ROS2_CONTROL)/*.tar.xz) $(wildcard $(ROS2_CONTROL)/install.sh)
	"$(ROS2_CONTROL)/install.sh" $(PY)
	touch $@

demo: $(KERNEL_CACHE) $(ROS2_CONTROL_STAMP)
	$(PY) -m rnea_ros.demo $(DEMO_ARGS)

# pytest-xdist workers of `make test`, `make test-unit` and `make test-ros` (each with a
# ROS_DOMAIN_ID of its own; test/conftest.py's scheduler keeps a test/ros module's node process on
# one worker and runs the real-time tests one after the other). 4 on 2 cores: most tests wait on
# node processes and real-time demos (the figures: docs/tests.md)
TEST_WORKERS ?= 4
XDIST := -n $(TEST_WORKERS)
# the modules of the tests that keep real time (mark realtime, test/conftest.py REALTIME)
REALTIME_TESTS := test/system/test_demo.py test/ros/inverse_dynamics/test_node.py test/ros/mujoco_sim/test_sim_node.py

# every test: test/unit, test/ros (real rclpy processes) and test/system (closed-loop demos,
# colcon and pip builds); the folders mirror the package (test/conftest.py). The real-time tests
# run after the others, alone, so that no parallel test delays their wall clock.
test: $(KERNEL_CACHE) $(ROS2_CONTROL_STAMP) lint
	$(PYTEST) -q $(XDIST) --durations=25 -m "not realtime" test
	$(PYTEST) -q --durations=10 -m realtime $(REALTIME_TESTS)

# the unit tests only: no ROS processes (test/unit, pytest mark unit)
test-unit: $(KERNEL_CACHE)
	$(PYTEST) -q $(XDIST) test/unit

# the ROS-facing tests (real rclpy processes), e.g. on another distribution's wheels:
# `make test-ros ROS_DISTRO=kilted`; ROS_TESTS narrows them (pytest arguments: a folder
# test/ros/<node>, a file, -k ...)
ROS_TESTS ?= test/ros
# on another distribution than Jazzy, without the tests of ../shared's Jazzy-built tools
# (pytest mark jazzy_tools: rqt_reconfigure, ros2_control, the ros2 command line), which set-up
# installs into the Jazzy venv only
ROS_SELECT := $(if $(filter jazzy,$(ROS_DISTRO)),,-m "not jazzy_tools")
test-ros: $(KERNEL_CACHE) $(ROS2_CONTROL_STAMP)
	$(PYTEST) -q $(XDIST) $(ROS_SELECT) $(ROS_TESTS)

# what CI runs on ROS 2 Kilted besides `make test` on Jazzy (the README says why this subset)
test-kilted:
	$(MAKE) test-ros ROS_DISTRO=kilted

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports  # layers, no cycles, no ROS in the core (setup.cfg [importlinter])

# what only the benchmarks need (a peer tool they run beside rnea_ros), on top of the set-up
BENCH_STAMP := $(VENV)/.bench-installed
$(BENCH_STAMP): $(STAMP) requirements-bench.txt
	$(PY) -m pip install --quiet -r requirements-bench.txt
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP) $(KERNEL_CACHE) $(ROS2_CONTROL_STAMP)
	$(PY) bench/bench_kernels.py
	$(PY) bench/bench_latency.py
	$(PY) bench/bench_start.py
	$(PY) bench/bench_floating_cycle.py
	$(PY) bench/tail_latency.py --seconds 600 --gc-compare
	$(PY) bench/cycle_allocations.py
	$(PY) bench/soak.py --rate 20000
	$(MAKE) soak-sequences
	$(PY) bench/interpolation_error.py
	$(PY) bench/compare_toppra.py
	$(PY) bench/friction_semantics.py
	$(PY) bench/identify_mismatch.py
	$(PY) bench/identify_tiago.py
	$(PY) bench/demo_all_arms.py
	$(PY) bench/demo_real_time.py

# The long stateful fuzz of the running node (make test runs 30 sequences of 20 steps).
soak-sequences: $(KERNEL_CACHE)
	RNEA_FUZZ_SEQUENCES=300 RNEA_FUZZ_STEPS=30 RNEA_FUZZ_RANDOM=1 $(PY) -m pytest -q -s -p no:cacheprovider \
		test/ros/inverse_dynamics/test_fuzz_node_sequences.py

FORCE:

clean:
	rm -rf .venv .venv-kilted build install log *.egg-info
