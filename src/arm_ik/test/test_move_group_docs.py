"""docs/moveit.md's pymoveit2 script runs as written against ``make move_group``'s runner
(python -m arm_bringup.move_group) on the UR5 of example-robot-data with its SRDF (which has
no groups: the chain is added as ``arm``).

On the bundled six_axis arm, what the chapter says to run (``make move_group ARM=six_axis``),
src/arm_bringup/test/test_readme.py runs the same script with every block of the chapter and
checks the same lines (its EXPECT); it is not run a second time here.
"""

from __future__ import annotations

import os
from pathlib import Path
import subprocess
import sys
import time

import pytest

from arm_testing.readme_snippets import read_blocks
from arm_testing.ros_harness import claimed_domain

pytest.importorskip('pymoveit2')
pytest.importorskip('moveit_msgs')

DOC = Path(__file__).resolve().parents[3] / 'docs' / 'moveit.md'


def script() -> str:
    blocks = [b for b in read_blocks(DOC) if b.lang == 'python']
    assert len(blocks) == 1
    return blocks[0].text


def ur5_arguments() -> list[str]:
    from arm_testing.real_arms import robots_dir
    folder = robots_dir() / 'ur_description'
    return ['--urdf', str(folder / 'urdf' / 'ur5_robot.urdf'), '--srdf',
            str(folder / 'srdf' / 'ur5.srdf'), '--base', 'base_link', '--tip', 'tool0']


def test_the_pymoveit2_script_runs_as_written_on_the_ur5(tmp_path):
    with claimed_domain() as claim:
        env = claim.environment()
        runner = subprocess.Popen([sys.executable, '-m', 'arm_bringup.move_group',
                                   *ur5_arguments()], env=env, cwd=tmp_path,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  start_new_session=True)
        try:
            served = next((line for line in runner.stdout if ' served in ' in line), None)
            assert served, 'the move_group runner ended before it served'
            path = tmp_path / 'moveit_user.py'
            path.write_text(script(), encoding='utf-8')
            done = subprocess.run([sys.executable, str(path)], env=env, cwd=tmp_path,
                                  capture_output=True, text=True, timeout=240)
            output = done.stdout + done.stderr
            assert done.returncode == 0, output
            for line in ('home: True', 'pose: True', 'line: True', 'ik: ['):
                assert line in done.stdout, output
        finally:
            os.killpg(runner.pid, 2)
            try:
                runner.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(runner.pid, 9)
            time.sleep(0.5)
