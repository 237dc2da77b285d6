"""The run blocks of docs/servos.md, docs/teleoperation.md and docs/servo_jog.md,
checked as test_readme.py checks every other document's (its docstring says how): a module of
their own (``arm_testing.readme_terminal.SHARES``), so that `make test`'s parallel workers run
them beside the rest of the documents.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arm_testing.bringup_harness import installed
from arm_testing.readme_terminal import check_block_runs, document_blocks, share_of, terminals
from arm_testing.ros_harness import claimed_domain

REPO = Path(__file__).resolve().parents[3]
BLOCKS = document_blocks(REPO)

pytestmark = pytest.mark.skipif(not installed('arm_bringup'),
                                reason='the workspace is not built and sourced')


@pytest.fixture(scope='module')
def terminal_of():
    with claimed_domain() as claim, terminals(REPO, claim.domain_id, BLOCKS) as terminal:
        yield terminal


@pytest.mark.parametrize('block', share_of(Path(__file__).stem, BLOCKS), ids=lambda b: b.id)
def test_block_runs_as_written(terminal_of, block):
    check_block_runs(terminal_of, block, REPO)
