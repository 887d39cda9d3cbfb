# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# ROS 2 Jazzy's launch, launch_testing and ros2 command-line wheels (a ROS install's tools): when
# this folder exists, set-up installs them and `make test` runs the ROS-install tests
# (test/ros_install.py); without it those tests skip. Default: shared/ros2-wheels beside the repo.
ROS2_WHEELS ?= $(abspath $(CURDIR)/../shared/ros2-wheels)
export ROS2_WHEELS
# set-up again when the wheels are there but not yet in the venv, or newer than it
ROS2_SETUP := $(if $(wildcard $(ROS2_WHEELS)/install.sh),$(wildcard $(ROS2_WHEELS)/*.whl) \
	$(if $(wildcard $(VENV)/.ros2-wheels),,FORCE))

.PHONY: demo test test-unit lint bench soak-sequences clean

$(STAMP): requirements.txt requirements-dev.txt setup.py $(ROS2_SETUP)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -e .
	if [ -x "$(ROS2_WHEELS)/install.sh" ]; then "$(ROS2_WHEELS)/install.sh" $(PY) && touch $(VENV)/.ros2-wheels; fi
	$(PY) -m rnea_ros.kernel_cache  # numba's kernel cache, so that no first start compiles
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m rnea_ros.demo $(DEMO_ARGS)

# every test: unit, ros (real rclpy processes) and system (closed-loop demo, colcon build)
test: $(STAMP) lint
	$(PY) -m pytest -q test

# the unit tests only: no ROS processes (pytest -m unit)
test-unit: $(STAMP)
	$(PY) -m pytest -q -m unit test

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

bench: $(STAMP)
	$(PY) bench/bench_kernels.py
	$(PY) bench/bench_latency.py
	$(PY) bench/bench_start.py
	$(PY) bench/soak.py --rate 20000
	$(MAKE) soak-sequences
	$(PY) bench/interpolation_error.py
	$(PY) bench/compare_toppra.py
	$(PY) bench/friction_semantics.py
	$(PY) bench/identify_mismatch.py
	$(PY) bench/demo_all_arms.py
	$(PY) bench/demo_real_time.py

# The long stateful fuzz of the running node (make test runs 30 sequences of 20 steps).
soak-sequences: $(STAMP)
	RNEA_FUZZ_SEQUENCES=300 RNEA_FUZZ_STEPS=30 RNEA_FUZZ_RANDOM=1 $(PY) -m pytest -q -s -p no:cacheprovider \
		test/test_fuzz_node_sequences.py

FORCE:

clean:
	rm -rf $(VENV) build install log *.egg-info
