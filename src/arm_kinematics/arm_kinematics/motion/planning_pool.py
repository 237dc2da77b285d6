"""Where the executor plans: one planning process (or, with ``planning_process: false``, a
thread), its start, rebuild, restart after a crash and shutdown.

Why a process: IK-heavy planning (a Cartesian line solves IK hundreds of times, a detour
searches a grid) is pure Python; in a thread of the executor's process it holds the GIL for
milliseconds at a time and delays the control tick (benchmarks/bench_motion.py measures
both: the "planning in a thread" row). One worker, started with ``spawn`` (this process
already runs DDS threads, which ``fork`` would copy half-alive) and warmed up at once so the
first goal does not wait for it. ``worker`` holds the entry points the process runs.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from functools import partial
import multiprocessing
from multiprocessing import resource_tracker
import signal
import threading

import numpy as np

from arm_kinematics.motion import worker
from arm_kinematics.motion.follow import target_goal
from arm_kinematics.motion.planner import MotionPlanner
from arm_kinematics.motion.safety_check import SceneData

STOP_WAIT = 2.0    # s, how long close waits for a plan in progress


class PlanningPool:
    """Runs ``worker.<name>`` in the planning process, or the planner's method in a thread.

    Args:
        spec, planner: what the process builds its planner from, and this process's planner
            (used by the thread backend).
        in_process: plan in a thread of this process instead.
        on_error: told (in words) when the process died and a new one is started.
    """

    def __init__(self, spec: worker.PlannerSpec, planner: MotionPlanner, in_process: bool,
                 on_error: Callable[[str], None] = lambda _: None) -> None:
        self.in_process = in_process
        self._on_error = on_error
        self._spec, self._planner = spec, planner
        self._pool = self._start()

    @property
    def kind(self) -> str:
        return 'thread' if self.in_process else 'separate process'

    def _start(self) -> ThreadPoolExecutor | ProcessPoolExecutor:
        if self.in_process:
            return ThreadPoolExecutor(max_workers=1, thread_name_prefix='planner')
        # Ctrl-C goes to the whole process group, and a child that gets it while it still
        # imports dies with a traceback before its initializer can ignore it: the child is
        # born with SIGINT blocked (the mask survives fork and exec; the pool spawns in this
        # thread) and ``worker.initialize`` unblocks it once it ignores it. The resource
        # tracker is started first: its own start unblocks SIGINT in the calling thread.
        resource_tracker.ensure_running()
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            pool = ProcessPoolExecutor(max_workers=1,
                                       mp_context=multiprocessing.get_context('spawn'),
                                       initializer=worker.initialize, initargs=(self._spec,))
            pool.submit(worker.ready)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return pool

    def submit(self, name: str, *args: object) -> Future:
        """Run ``name`` ('plan', 'validate' or 'solve_target') with ``args``; a dead process
        is replaced (from the latest spec) and the call goes to the new one."""
        if self.in_process:
            call = partial(target_goal, self._planner) if name == 'solve_target' else \
                getattr(self._planner, name)
            return self._pool.submit(call, *args)
        try:
            return self._pool.submit(getattr(worker, name), *args)
        except BrokenProcessPool:
            self._on_error('the planning process died; starting a new one')
            self._pool = self._start()
            return self._pool.submit(getattr(worker, name), *args)

    def solve_target(self, point: np.ndarray, seed: np.ndarray, solver: str) -> Future:
        """IK of a live target checked as a move from ``seed`` (``follow.target_goal``: a
        Future of its ``TargetGoal``), off this process's GIL."""
        return self.submit('solve_target', point, seed, solver)

    def set_scene(self, scene: SceneData | None) -> Future:
        """Check against ``scene`` from the next plan on; a restarted process starts with it."""
        self._spec = replace(self._spec, scene=scene)
        return self.submit('set_scene', scene)

    def rebuild(self, spec: worker.PlannerSpec, planner: MotionPlanner) -> None:
        """The same arm with a new run-time setting (the obstacle radius): the running process
        rebuilds its planner, queued before the next plan (the pool has one worker), and
        keeps its warm caches."""
        self._spec, self._planner = spec, planner
        if not self.in_process:
            try:
                self._pool.submit(worker.rebuild, spec)
            except BrokenProcessPool:
                pass            # the next plan starts a new process, from the new spec

    def restart(self, spec: worker.PlannerSpec, planner: MotionPlanner) -> None:
        """A new arm model: a new process; the old one is shut down without waiting."""
        old = self._pool
        self._spec, self._planner = spec, planner
        self._pool = self._start()
        old.shutdown(wait=False)

    def close(self, wait: float = STOP_WAIT) -> None:
        """Shut down, waiting at most ``wait`` s. Waiting lets the pool close its pipes
        before the interpreter exits; without it Python 3.11's exit hook can write to a closed
        one ("OSError: [Errno 9] Bad file descriptor" at Ctrl-C). A plan in progress is not
        waited for beyond ``wait``: the planning process leaves by itself once this one is
        gone (``worker``'s parent watch)."""
        stopper = threading.Thread(target=self._pool.shutdown, name='planning-stop',
                                   kwargs={'wait': True, 'cancel_futures': True}, daemon=True)
        stopper.start()
        stopper.join(timeout=wait)
