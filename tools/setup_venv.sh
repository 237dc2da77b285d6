#!/usr/bin/env bash
# Create a dedicated virtualenv with pinned ROS 2 wheels from PyPI and make its CMake files
# usable for colcon. Usage: tools/setup_venv.sh <distro: jazzy|kilted> <venv dir>
#
# Why each step:
# - the wheels' CMake exports name the Python and numpy include folders of the machine that
#   built them (/opt/python/cp311-cp311/...); colcon needs this venv's own folders instead;
# - the ros-wheels-bootstrapper re-executes every Python process of the venv with its library
#   path, so the venv holds nothing but this project's pins.
set -euo pipefail

distro=${1:?distro (jazzy or kilted)}
venv=${2:?venv directory}
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3.11}

case "$distro" in
  jazzy|kilted) ;;
  *) echo "setup_venv: unknown distro '$distro' (jazzy or kilted)" >&2; exit 2 ;;
esac
if ! command -v "$python" >/dev/null 2>&1; then
  echo "setup_venv: $python not found; the ROS 2 wheels are built for CPython 3.11" >&2
  exit 2
fi

rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r "$here/requirements/ros-$distro.txt"
# Every dependency of the dev tools is pinned in dev.txt itself (no extras, no resolver drift).
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
  -r "$here/requirements/dev.txt"

py_include=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
np_include=$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')
grep -rlZ --include='*.cmake' '/opt/python/cp311-cp311' "$venv/share" 2>/dev/null \
  | xargs -0 -r sed -i \
      -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#${np_include}#g" \
      -e "s#/opt/python/cp311-cp311/include/python3.11#${py_include}#g"
if grep -rq --include='*.cmake' '/opt/python/cp311-cp311' "$venv/share"; then
  echo "setup_venv: some CMake files still name /opt/python/cp311-cp311" >&2
  exit 1
fi
"$venv/bin/python" - <<'PY'
import rclpy  # noqa: F401  (fails here, not in the middle of a build, when a wheel is missing)
import rosidl_adapter  # noqa: F401
PY
echo "setup_venv: $venv ready (ROS 2 $distro wheels)"
