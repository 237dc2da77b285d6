"""What lab_viewer's buttons and the target gizmo do: IK previews, moves through the
executor's action, the live target stream, and the tools (joint map, damping sweep, link
lengths, pick and place). A mixin of LabViewer, kept apart so each module stays small."""

from __future__ import annotations

import time
from typing import Any

from action_msgs.msg import GoalStatus
from geometry_msgs.msg import PointStamped
import numpy as np
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from arm_ik.lab import texts
from arm_ik.lab.controls import NEAREST, ORIENTATIONS
from arm_ik.lab.drawing import format_number, manipulability_along
from arm_ik.lab.joint_map_image import grid_from_arrays, render
from arm_ik.lab.panel import Outcome
from arm_ik.lab.state import LabState
from arm_ik.middleware import RESEND_AFTER
from arm_ik.nodes.common import constant_names
from arm_ik.nodes.conversions import seconds_of
from arm_ik.nodes.lab_remote import call
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import MotionErrorCode
from arm_interfaces.srv import GetJointMap, SolveIK
from arm_kinematics.common.checks import check_vector, positive_reason
from arm_kinematics.common.joint_state import positions_by_name
from arm_kinematics.description.bundled import expand_xacro_file
from arm_kinematics.description.chain_rules import load_chain
from arm_kinematics.model.arm_model import ArmModel, DescriptionError
from arm_kinematics.motion import laws

MOTION_CODES = constant_names(MotionErrorCode)
FIRST_MAP_TRIES = 30        # one a second


class LabMoves:
    """Moves and tools of the lab (LabViewer supplies the node, layout, scene, clients)."""

    layout: Any
    scene: Any
    model: ArmModel
    pipeline: Any
    state: LabState

    # ------------------------------------------------------------------ target and moves
    def _on_drag(self) -> None:
        position, reason = check_vector(self.scene.target.position, 3, 'target')
        wxyz, _ = check_vector(self.scene.target.wxyz, 4, 'target orientation')
        if position is None:
            return
        self.state.set_target(position, wxyz)
        if not self.layout.value('live_follow'):
            self._preview()

    def set_target(self, position: np.ndarray) -> Outcome:
        """Move the gizmo (as a drag would) and run what a drag runs."""
        self.scene.target.position = tuple(float(v) for v in position)
        self._on_drag()
        return Outcome(True, f'target at {np.round(position, 3).tolist()} m')

    def _stream_target(self) -> None:
        if not self.layout.value('live_follow'):
            return
        target = self.state.stream_target()
        message = PointStamped()
        message.header.stamp = self.get_clock().now().to_msg()
        message.header.frame_id = self.model.base_link
        message.point.x, message.point.y, message.point.z = (float(v) for v in target)
        self.target_publisher.publish(message)

    def _goal_fields(self) -> dict[str, Any]:
        branch = self.layout.value('branch')
        return {'solver': self.layout.value('solver'),
                'branch': '' if branch == NEAREST else branch,
                'goal_type': int(ORIENTATIONS[self.layout.value('orientation')])}

    def _preview(self) -> None:
        """IK of the dragged target on the IK service (one request in flight at a time)."""
        token = self.state.begin_preview(time.monotonic(), RESEND_AFTER)
        if token is None:
            return
        target, wxyz = self.state.target()
        if not self.pipeline.ik_client.service_is_ready():
            self.state.end_preview(token)
            return
        fields = self._goal_fields()
        request = SolveIK.Request(goal_type=fields['goal_type'], solver=fields['solver'],
                                  branch=fields['branch'])
        pose = request.target.pose
        pose.position.x, pose.position.y, pose.position.z = (float(v) for v in target)
        pose.orientation.w, pose.orientation.x, pose.orientation.y, pose.orientation.z = (
            float(v) for v in wxyz)
        request.target.header.frame_id = self.model.base_link
        future = self.pipeline.ik_client.call_async(request)
        future.add_done_callback(lambda done: self._preview_done(done, token))

    def _preview_done(self, future, token: int) -> None:
        if future.exception() is None and future.result() is not None:
            response = future.result()
            self.state.record_ik(response.solver, response.branch, response.error_code.val,
                                 response.message, response.position_error,
                                 response.iterations)
        if self.state.end_preview(token):
            self._background(self._preview)

    def _plan_and_go(self) -> Outcome:
        if self.layout.value('live_follow'):
            return Outcome(False, 'live follow is on: the target streams; switch it off to '
                           'plan one move')
        target, wxyz = self.state.target()
        goal = MoveToTarget.Goal()
        fields = self._goal_fields()
        goal.target.header.frame_id = self.model.base_link
        pose = goal.target.pose
        pose.position.x, pose.position.y, pose.position.z = (float(v) for v in target)
        pose.orientation.w, pose.orientation.x, pose.orientation.y, pose.orientation.z = (
            float(v) for v in wxyz)
        goal.goal_type, goal.solver, goal.branch = (fields['goal_type'], fields['solver'],
                                                    fields['branch'])
        goal.motion_law = self.layout.value('motion_law')
        goal.speed_scale = float(self.layout.value('motor_speed'))
        note = self._take_over()
        return self._send_goal(goal, target, f'move to {np.round(target, 3).tolist()} m',
                               note)

    def _take_over(self) -> str:
        """Stop a running scripted cycle before a move of the panel's own, as a click in
        RViz does (target_input's ~/stop_cycle): else the cycle's next step would take the
        arm back from the user. Returns a note for the outcome ('' when none ran)."""
        if not self.state.cycle_running:
            return ''
        response, reason = call(self.pipeline.cycle_clients['cycle_stop'],
                                Trigger.Request(), self._timeout)
        if response is None:
            return f'; the scripted cycle could not be paused: {reason}'
        self.state.cycle_running = False
        self.layout.cycle_status.content = texts.cycle_markdown(
            False, f'paused by the panel: {response.message}')
        return '; the scripted cycle is paused (Resume scripted cycle starts it again)'

    def _pause_cycle(self) -> Outcome:
        """The panel's "Pause: take over": stop the scripted cycle; the executor holds the
        pose reached and the panel's moves are the only ones sent."""
        response, reason = call(self.pipeline.cycle_clients['cycle_stop'],
                                Trigger.Request(), self._timeout)
        if response is None:
            return Outcome(False, f'pause: {reason}')
        if response.success:
            self.state.cycle_running = False
        message = (f'{response.message}: the panel has the arm; Resume scripted cycle '
                   'starts the cycle again from its first step') if response.success \
            else response.message
        self.layout.cycle_status.content = texts.cycle_markdown(False, message)
        return Outcome(bool(response.success), message)

    def _go_home(self) -> Outcome:
        goal = MoveToTarget.Goal()
        goal.joint_target = JointState(name=list(self.names),
                                       position=[float(v) for v in self.home])
        law = self.layout.value('motion_law')
        # Joint targets move with a joint-space law only.
        goal.motion_law = law if law in (laws.MIN_JERK, laws.EXPONENTIAL) else laws.MIN_JERK
        goal.speed_scale = float(self.layout.value('motor_speed'))
        note = self._take_over()
        return self._send_goal(goal, self.model.frames(self.home)[-1, :3, 3], 'home pose', note)

    def _send_goal(self, goal: MoveToTarget.Goal, target: np.ndarray, what: str,
                   note: str = '') -> Outcome:
        if not self.pipeline.move_client.server_is_ready():
            return Outcome(False, "the trajectory executor's move_to_target action is not "
                           'available (is trajectory_executor running?)')
        self.state.track(target)
        self.layout.move_status.content = f'**sending** {what} ...'

        def send() -> None:
            future = self.pipeline.move_client.send_goal_async(
                goal, feedback_callback=self._on_feedback)
            future.add_done_callback(lambda done: self._on_goal_response(done, what))
        self._hop.post(send)
        return Outcome(True, f'goal sent: {what}{note}')

    def _on_goal_response(self, future, what: str) -> None:
        handle = future.result() if future.exception() is None else None
        if handle is None or not handle.accepted:
            self.layout.move_status.content = f'✗ {what}: the goal was not accepted'
            return
        self.layout.move_status.content = f'**moving**: {what}'
        handle.get_result_async().add_done_callback(
            lambda done: self._on_result(done, what))

    def _on_feedback(self, message) -> None:
        self.layout.move_status.content = f'**moving**: {message.feedback.progress * 100:.0f} %'

    def _on_result(self, future, what: str) -> None:
        if future.exception() is not None:
            self.layout.move_status.content = f'✗ {what}: {future.exception()}'
            return
        wrapped = future.result()
        result = wrapped.result
        code = MOTION_CODES.get(result.error_code.val, str(result.error_code.val))
        ok = wrapped.status == GoalStatus.STATUS_SUCCEEDED
        self.layout.move_status.content = (
            f'{"✓" if ok else "✗"} **{code}** ({what}): {result.message}; final error '
            f'{format_number(result.final_error * 1000.0, 2)} mm, '
            f'{len(result.contact_points)} contacts')
        if not ok:
            self.state.fail(f'move: {code}: {result.message}')
        self.state.set_move_contacts([np.array([p.x, p.y, p.z]) for p in result.contact_points])
        path = result.executed_path
        if path.points:
            self._last_path = path
            self._background(self._plot_move, path)
            if self.layout.joint_map is not None:
                self._background(self._refresh_joint_map)

    def _plot_move(self, path: JointTrajectory) -> None:
        rows = [positions_by_name(self.names, path.joint_names, point.positions)[0]
                for point in path.points]
        keep = [k for k, q in enumerate(rows) if q is not None]
        if len(keep) < 2:
            return
        times = np.array([seconds_of(path.points[k].time_from_start) for k in keep])
        positions = np.array([rows[k] for k in keep])
        self.layout.plot(self.layout.joint_plot, times, *positions.T)
        self.layout.plot(self.layout.w_plot, times, manipulability_along(self.model,
                                                                         positions))

    def _trigger(self, key: str) -> Outcome:
        response, reason = call(self.pipeline.cycle_clients[key], Trigger.Request(),
                                self._timeout)
        if response is None:
            return Outcome(False, reason)
        if key == 'cycle_start' and response.success:
            self.state.cycle_running = True
        self.layout.cycle_status.content = texts.cycle_markdown(
            self.state.cycle_running, response.message)
        return Outcome(bool(response.success), response.message)

    # ------------------------------------------------------------------ tools
    def _refresh_joint_map(self) -> Outcome:
        if self.layout.joint_map is None:
            return Outcome(False, 'this arm has no (shoulder, elbow) joint map')
        request = GetJointMap.Request(use_current_state=True)
        if self._last_path is not None:
            request.path = self._last_path
        response, reason = call(self.pipeline.map_client, request, max(self._timeout, 10.0))
        if response is None:
            return Outcome(False, f'joint map: {reason}')
        if response.error_code != GetJointMap.Response.OK:
            self.layout.joint_map_text.content = f'✗ {response.message}'
            return Outcome(False, f'joint map: {response.message}')
        m = response.map
        try:
            grid = grid_from_arrays(m.row_min, m.row_step, m.row_count, m.column_min,
                                    m.column_step, m.column_count, m.cells, m.path_rows,
                                    m.path_columns, m.contact_rows, m.contact_columns)
        except ValueError as error:
            return Outcome(False, f'joint map: {error}')
        self.layout.joint_map.image = render(grid, cell_pixels=max(2, 480 // max(
            m.row_count, m.column_count)))
        self.layout.joint_map_text.content = texts.joint_map_caption(
            list(m.axis_joint_names), dict(zip(m.base_state.name, m.base_state.position)),
            response.message)
        return Outcome(True, f'joint map: {response.message}')

    def _first_joint_map(self) -> None:
        """The map at the first joint_states, retried while safety_monitor starts up (it
        answers NO_JOINT_STATE until its own first message); when it never comes, the
        tab keeps its note on what the map shows, with the reason."""
        outcome = Outcome(False, 'the lab stopped')
        for _ in range(FIRST_MAP_TRIES):
            if not self.context.ok():
                return
            outcome = self._refresh_joint_map()
            if outcome.ok:
                return
            time.sleep(1.0)
        self.layout.joint_map_text.content = (f'{texts.joint_map_note(self.model)}\n\n'
                                              f'The first map failed: {outcome.message}')

    def _damping_sweep(self) -> Outcome:
        table, count = texts.damping_sweep_markdown(self.model)
        self.layout.sweep_table.content = table
        return Outcome(True, f'damping sweep: {count} values of λ')

    def _apply_lengths(self) -> Outcome:
        panel = self.layout.length_panel
        if panel is None:
            return Outcome(False, 'this arm has no link-length arguments')
        mappings = {key.removeprefix('length_'): panel.value(key) for key in panel.handles}
        for name, value in mappings.items():
            reason = positive_reason(value, name)
            if reason:
                self.layout.length_status.content = f'✗ {reason}'
                return Outcome(False, reason)
        try:
            urdf = expand_xacro_file(self._config.lab_xacro,
                                     {name: repr(float(v)) for name, v in mappings.items()})
            model = load_chain(urdf, self.model.base_link, self.model.tip_link,
                               self.model.default_speed).model
        except (DescriptionError, OSError) as error:
            self.layout.length_status.content = f'✗ {error}'
            return Outcome(False, f'link lengths: {error}')
        # All nodes or none: the first refusal (the executor's, while the arm moves) stops
        # it, and nodes that already took the new URDF get the old one back.
        old = self.model.urdf
        applied, lines, accepted_all = [], [], True
        running = {f'{namespace.rstrip("/")}/{name}'
                   for name, namespace in self.get_node_names_and_namespaces()}
        for remote, required in self.pipeline.description_holders:
            if not required and self.pipeline.qualified(remote.name) not in running:
                lines.append((True, f'{remote.name}: not running, skipped'))
                continue
            accepted, message = remote.set('robot_description', urdf, self._timeout)
            # The answers name the node and its reason; the URDF itself is too long to show.
            lines.append((accepted, message.replace(repr(urdf), 'the new URDF')))
            if not accepted:
                accepted_all = False
                for done in applied:
                    done.set('robot_description', old, self._timeout)
                if applied:
                    lines.append((False, 'rolled back: '
                                  + ', '.join(remote.name for remote in applied)))
                break
            applied.append(remote)
        if accepted_all:
            self.state.update_scene('model', model)
        self.layout.length_status.content = '\n'.join(
            f'- {"✓" if ok else "✗"} {line}' for ok, line in lines)
        return Outcome(accepted_all, 'link lengths: ' + '; '.join(line for _, line in lines))
