"""pytest plugin (``-p arm_testing.suite_order``, with ``--no-loadscope-reorder``): the ROS
suite's test modules longest first, so that pytest-xdist's ``--dist loadfile`` does not end
with one worker running a long module while the other has nothing left.

xdist's own order is by test count, which put the longest modules last: they have one or two
tests each (the documents' ``make demo`` runs, the lab's browser checks, the endurance run).
Handing out the longest first and the short ones after is the classic longest-processing-time
rule. The list is measured (each module's setup, calls and teardown, a fresh clone's
``make test`` on the project's 2-core machine, issue 39); a module not in it comes after, in
xdist's order. A module that grows long belongs in it; a wrong order costs time, never a result.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

LONGEST_FIRST = (
    'test_lab_viewer_node.py',
    'test_docs_pipeline_chapters.py',
    'test_lab_layout.py',
    'test_motion_reliability.py',
    'test_servo_bridge_node.py',
    'test_demo_runner.py',
    'test_docs_servo_chapters.py',
    'test_trajectory_executor_node.py',
    'test_params_descriptions_viewers.py',
    'test_readme.py',
    'test_real_arm_nodes.py',
    'test_safety_monitor_node.py',
    'test_target_input_node.py',
    'test_follow_joint_trajectory.py',
    'test_docs_client_chapters.py',
    'test_ik_endurance.py',
    'test_target_input_cases.py',
    'test_launch_files.py',
    'test_servo_node.py',
    'test_ctrl_c.py',
    'test_ik_server_node.py',
    'test_ik_reliability.py',
    'test_move_group_servos.py',
    'test_executor_scene_node.py',
    'test_ik_fuzz.py',
)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Reorder ``items`` module by module (a module's own order kept)."""
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}
    counts = Counter(Path(str(item.path)).name for item in items)
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(Path(str(item.path)).name, index)

    def key(indexed: tuple[int, pytest.Item]) -> tuple[int, int, int, int]:
        index, item = indexed
        name = Path(str(item.path)).name
        return (rank.get(name, len(rank)), -counts[name], first_seen[name], index)

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]
