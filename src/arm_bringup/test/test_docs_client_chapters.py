"""The run blocks of docs/lerobot.md and docs/moveit.md, checked as test_readme.py checks
every other document's (its docstring says how): a module of their own
(``arm_testing.readme_terminal.SHARES``), so that `make test`'s parallel workers run them beside
the rest of the documents.
"""

from __future__ import annotations

import pytest

from arm_testing.bringup_harness import installed
from arm_testing.readme_terminal import share_tests

pytestmark = pytest.mark.skipif(not installed('arm_bringup'),
                                reason='the workspace is not built and sourced')

terminal_of, test_block_runs_as_written = share_tests(__file__)
