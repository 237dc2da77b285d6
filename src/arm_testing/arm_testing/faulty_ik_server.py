"""A test-only ik_server whose solver named by the ``faulty_solver`` parameter raises inside
its solve: proves the real server's answer to a solver fault (INTERNAL_ERROR, slots freed,
the node alive), for the first model and for every rebuilt one.

Run as a script (the tests start it through ik_graph.IKGraph.start(faulty_solver=...)); it
takes the real ik_server's parameters.
"""

from __future__ import annotations

import sys

from arm_ik.nodes.common import run
from arm_ik.nodes.ik_server import Derived, EXECUTOR_THREADS, IKServer
from arm_kinematics.ik.result import IKResult

FAULT_MESSAGE = 'fault injected by faulty_ik_server'


def _raise_fault(*args: object, **kwargs: object) -> IKResult:
    raise RuntimeError(FAULT_MESSAGE)


class FaultyIKServer(IKServer):
    """IKServer with one solver replaced by one that raises."""

    def _derived(self, model) -> Derived:
        if not self.has_parameter('faulty_solver'):
            self.declare_parameter('faulty_solver', '')
        derived = super()._derived(model)
        faulty = self.get_parameter('faulty_solver').value
        if faulty in derived.dispatcher.solvers:
            derived.dispatcher.solvers[faulty].solve = _raise_fault
        return derived


if __name__ == '__main__':
    sys.exit(run(FaultyIKServer, None, threads=EXECUTOR_THREADS))
