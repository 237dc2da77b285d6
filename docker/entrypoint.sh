#!/bin/bash
# Source ROS 2 and the workspace, then run the command (as the ros:<distro> images'
# /ros_entrypoint.sh does). The `--` keeps this script's arguments away from setup.bash.
set -e

# shellcheck source=/dev/null
source "/opt/ros/${ROS_DISTRO}/setup.bash" --
# Absent only before the first build, e.g. in a dev container with fresh build volumes.
if [ -f /ws/install/setup.bash ]; then
  # shellcheck source=/dev/null
  source /ws/install/setup.bash --
fi

exec "$@"
