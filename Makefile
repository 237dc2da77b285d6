# Two commands do everything: `make test` and `make demo` (see README.md).
#
# With a ROS 2 install sourced (ROS_DISTRO set) they build against it. Otherwise they create a
# dedicated virtualenv with pinned ROS 2 wheels from PyPI: .venv for Jazzy (default) or
# .venv-kilted for `make test ROS_WHEELS=kilted`, each with its own build/install folders.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ROS_WHEELS ?= jazzy
CYCLES ?= 0
ARM ?=
# Your own arm: a URDF (or xacro) file, its chain and configuration (see docs/own_arm.md).
URDF ?=
BASE ?=
TIP ?=
ARM_CONFIG ?=
# CONTROLLER=stand_in: the executor drives a joint_trajectory_controller stand-in through its
# follow_joint_trajectory action (docs/controllers.md).
CONTROLLER ?=
# SERVOS=sim: the SO-101 on the simulated servo bus through servo_bridge.
SERVOS ?=
# TELEOP=1 (with SERVOS=sim): leader-follower teleoperation on two simulated buses
# (docs/teleoperation.md).
TELEOP ?=
# make move_group: the SRDF of your arm (groups, named states, disabled collisions).
SRDF ?=
# Any other option of the demo runner, e.g. DEMO_ARGS=--no-lab.
DEMO_ARGS ?=
PYTEST_ARGS ?=
# Every test run ends with its slowest tests (docs/tests.md, "Where the suite's time goes").
DURATIONS ?= --durations=15
# Parallel pytest workers (pytest-xdist; 0: one process, as before). A test module stays in
# one worker with its process group (--dist loadfile), each test on a ROS domain of its own
# (docs/tests.md, "Parallel workers"). Three on this 2-core machine (the suite waits as much
# as it computes): a fresh clone's make test in 13-14.5 minutes, against 18-20 with two.
TEST_WORKERS ?= 3
# A ROS-suite test that fails is run once more (pytest-rerunfailures) and fails the suite only
# if it fails again; the summary lists every rerun by name (RERUN lines) with the traceback of
# its first try: each is a flake to mend, most often a time bound a loaded machine broke
# (docs/tests.md, "Reruns"). 0: none.
TEST_RERUNS ?= 1
CORE_TEST_WORKERS ?= 2
# A command put before the core tests' processes (make test: 'nice -n 19').
CORE_NICE ?=
# Packages colcon builds at once: one more than the cores. moveit_msgs, the longest build, then
# starts as soon as the two small packages it needs are built, instead of after every package
# alphabetically before it (a fresh build 2 min 06 s -> 1 min 48 s here).
BUILD_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
BENCH_ARGS ?=

ifneq ($(filter-out jazzy kilted,$(ROS_WHEELS)),)
$(error ROS_WHEELS must be jazzy or kilted, got '$(ROS_WHEELS)')
endif

ifdef ROS_DISTRO
  # A sourced ROS 2 install: build with its colcon and Python.
  SUFFIX :=
  VENV_STAMP :=
  ACTIVATE := true
  PY := python3
  # A build folder a pip-route build configured keeps its options: the C++ interfaces back.
  COLCON_ARGS := --cmake-args -DARM_INTERFACES_PYTHON_ONLY=OFF --no-warn-unused-cli
else
  ifeq ($(ROS_WHEELS),jazzy)
    SUFFIX :=
  else
    SUFFIX := -$(ROS_WHEELS)
  endif
  VENV := $(CURDIR)/.venv$(SUFFIX)
  VENV_STAMP := $(VENV)/.installed
  PY := $(VENV)/bin/python
  ACTIVATE := source $(VENV)/bin/activate && export AMENT_PREFIX_PATH=$(VENV) \
              CMAKE_PREFIX_PATH=$(VENV)
  # without_ros/ holds the subsets of control_msgs, moveit_msgs (and the two messages packages
  # moveit_msgs needs) that a ROS 2 install brings itself (its COLCON_IGNORE hides them from every
  # other build; see without_ros/README.md). Only rclpy uses the messages here, so arm_interfaces
  # skips its C++ generators (ARM_INTERFACES_PYTHON_ONLY: its build 67 s -> 39 s alone).
  COLCON_ARGS := --base-paths . without_ros/control_msgs without_ros/moveit_msgs \
                 without_ros/octomap_msgs without_ros/object_recognition_msgs \
                 --cmake-args -DPython3_EXECUTABLE=$(PY) -DBUILD_TESTING=OFF \
                 -DARM_INTERFACES_PYTHON_ONLY=ON --no-warn-unused-cli
endif

BUILD_BASE := build$(SUFFIX)
PYTHON_PACKAGES := arm_kinematics arm_servos arm_testing arm_ik arm_bringup
INSTALL_BASE := install$(SUFFIX)
LOG_BASE := log$(SUFFIX)
# Discovery stays on this machine, whatever the caller's environment says.
RUN_ENV := export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST RMW_IMPLEMENTATION=rmw_fastrtps_cpp \
           && set +u && source $(INSTALL_BASE)/setup.bash && set -u

.PHONY: help setup build lint test test-core demo move_group bench clean

help:
	@echo 'make test   build the workspace, lint, run every test (ROS_WHEELS=jazzy|kilted)'
	@echo 'make test-core  the ROS-free core alone (src/arm_kinematics) in a plain venv, no ROS'
	@echo 'make demo   build and run the arm pipeline (CYCLES=1 stops after one cycle;'
	@echo '            URDF=robot.urdf BASE=base_link TIP=tool0 [ARM_CONFIG=arm.yaml] for your'
	@echo '            own arm; CONTROLLER=stand_in drives a controller stand-in through'
	@echo '            follow_joint_trajectory; SERVOS=sim the SO-101 on the simulated'
	@echo '            servo bus, TELEOP=1 with it: leader-follower teleoperation;'
	@echo '            DEMO_ARGS=--no-lab for other runner options)'
	@echo 'make move_group  MoveIt'"'"'s move_group interface for one arm until Ctrl-C (ARM=six_axis,'
	@echo '            or URDF=robot.urdf [SRDF=robot.srdf] [BASE=.. TIP=..]; CONTROLLER=stand_in;'
	@echo '            SERVOS=sim the SO-101 on the simulated servo bus;'
	@echo '            docs/moveit.md)'
	@echo 'make bench  run the benchmarks, write bench_results.json'
	@echo 'make clean  remove build, install, log folders (venvs stay)'

$(VENV_STAMP): requirements/ros-$(ROS_WHEELS).txt requirements/dev.txt tools/setup_venv.sh
	tools/setup_venv.sh $(ROS_WHEELS) $(VENV)
	touch $@

setup: $(VENV_STAMP)

build: setup
	$(ACTIVATE) && colcon --log-base $(LOG_BASE) build --symlink-install \
	  --build-base $(BUILD_BASE) --install-base $(INSTALL_BASE) --parallel-workers $(BUILD_WORKERS) \
	  --event-handlers console_cohesion- summary+ $(COLCON_ARGS)
	# Byte-compile the workspace's own Python packages (build/<package>/<package> links to
	# src/): each node process imports them, and where PYTHONDONTWRITEBYTECODE is set (this
	# machine's environment) Python never writes their cache, so every start compiled about
	# 150 modules again (0.15-0.19 s of CPU per node start, hundreds of starts in make test).
	$(PY) -m compileall -q -j 0 $(foreach p,$(PYTHON_PACKAGES),$(BUILD_BASE)/$(p)/$(p))
	# Compile the core's numba functions into their disk cache once, here, not in the
	# first node or test (tools/warm_compiled.py).
	$(ACTIVATE) && set +u && source $(INSTALL_BASE)/setup.bash && set -u && \
	  python tools/warm_compiled.py

lint: setup
	$(ACTIVATE) && ruff check src benchmarks tools

# The core's tests run in a venv that holds the core's requirements and nothing of ROS, on the
# core as pip installs it (so a missing package file fails here); the nodes' tests after.
CORE_VENV := $(CURDIR)/.venv-core
CORE_PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)

$(CORE_VENV)/.installed: requirements/core.txt
	rm -rf $(CORE_VENV)
	$(CORE_PYTHON) -m venv $(CORE_VENV)
	$(CORE_NICE) $(CORE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	  --no-deps -r requirements/core.txt
	touch $@

# pip builds in the tree it installs from (build/, *.egg-info): it builds in a copy, so that a
# colcon build running beside it (make test) never meets its files.
test-core: $(CORE_VENV)/.installed
	copy=$$(mktemp -d) && trap 'rm -rf "$$copy"' EXIT && \
	  tar -C src -c --exclude=__pycache__ --exclude='*.egg-info' --exclude=build \
	    arm_kinematics arm_testing | tar -C "$$copy" -x && \
	  $(CORE_NICE) $(CORE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	    --no-deps --force-reinstall "$$copy/arm_kinematics" "$$copy/arm_testing"
	$(CORE_NICE) $(CORE_VENV)/bin/python -m pytest src/arm_kinematics -n $(CORE_TEST_WORKERS) \
	  --dist loadfile $(DURATIONS) $(PYTEST_ARGS)

# The core's tests need neither ROS nor the workspace: they run beside the venv's setup, lint
# and the build, which leave a core idle for about half their time here (a fresh clone:
# setup 62 s at 80 % of one core, the build 209 s at 134 % of two, test-core 91 s at 156 %),
# at the lowest priority (CORE_NICE), so that they take that idle time and do not slow the
# build's longest chain (with equal priority both slowed: nothing was saved). Each job's
# output is printed whole when it ends (--output-sync).
test:
	@echo 'make test: the venv, lint and the build beside the core tests (each one'"'"'s output when it ends)'
	$(MAKE) --no-print-directory -j 2 --output-sync=target lint build test-core \
	  CORE_NICE='nice -n 19'
	tools/ensure_chromium.sh
	$(ACTIVATE) && $(RUN_ENV) && $(PY) -m pytest src --ignore=src/arm_kinematics \
	  -n $(TEST_WORKERS) --dist loadfile --reruns $(TEST_RERUNS) -rR --rerun-show-tracebacks \
	  $(DURATIONS) $(PYTEST_ARGS)

demo: build
	$(ACTIVATE) && $(RUN_ENV) && $(PY) -m arm_bringup.demo --cycles $(CYCLES) \
	  $(if $(ARM),--arm $(ARM),) $(if $(URDF),--urdf $(abspath $(URDF)),) \
	  $(if $(BASE),--base $(BASE),) $(if $(TIP),--tip $(TIP),) \
	  $(if $(ARM_CONFIG),--arm-config $(abspath $(ARM_CONFIG)),) \
	  $(if $(CONTROLLER),--controller $(CONTROLLER),) \
	  $(if $(SERVOS),--servos $(SERVOS),) $(if $(TELEOP),--teleop,) $(DEMO_ARGS)

move_group: build
	$(ACTIVATE) && $(RUN_ENV) && $(PY) -m arm_bringup.move_group \
	  $(if $(ARM),--arm $(ARM),) $(if $(URDF),--urdf $(abspath $(URDF)),) \
	  $(if $(SRDF),--srdf $(abspath $(SRDF)),) \
	  $(if $(BASE),--base $(BASE),) $(if $(TIP),--tip $(TIP),) \
	  $(if $(ARM_CONFIG),--arm-config $(abspath $(ARM_CONFIG)),) \
	  $(if $(CONTROLLER),--controller $(CONTROLLER),) $(if $(SERVOS),--servos $(SERVOS),)

BENCH_STAMP := $(if $(VENV),$(VENV)/.bench-installed,)

$(BENCH_STAMP): requirements/bench.txt $(VENV_STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/bench.txt
	touch $@

bench: build $(BENCH_STAMP)
	$(ACTIVATE) && $(RUN_ENV) && $(PY) benchmarks/run_all.py $(BENCH_ARGS)

clean:
	rm -rf build install log build-kilted install-kilted log-kilted
