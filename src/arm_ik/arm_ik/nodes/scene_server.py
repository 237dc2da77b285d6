"""The scene a node owns and serves: ``~/scene/apply`` and ``~/scene/remove``, with the scene
and its markers republished latched on every accepted change (safety_monitor's).

Services change the scene whole or not at all; readers (the joint_states callback) take
``snapshot``, a copy swapped in after each change.
"""

from __future__ import annotations

from collections.abc import Callable
import threading

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile
from visualization_msgs.msg import MarkerArray

from arm_ik.nodes import scene_messages
from arm_ik.nodes.common import LATCHED_QOS
from arm_interfaces.msg import Scene as SceneMsg
from arm_interfaces.srv import ApplySceneObject, RemoveSceneObject
from arm_kinematics.scene.objects import Scene, SceneError
from arm_kinematics.scene.scene_rules import SceneRules


class SceneServer:
    """The scene of ``node`` in ``frame`` (meshes found on ``search_paths``): the arm's floor
    and ball first (``rules``, judged by their own rules), then ``scene_file``'s objects when
    one is given. ``on_change`` gets each accepted scene, after the change.

    Raises:
        SceneError: ``scene_file`` is refused (nothing of it is loaded).
    """

    def __init__(self, node: Node, frame: str, search_paths: list[str], scene_file: str,
                 service_qos: QoSProfile, rules: SceneRules,
                 on_change: Callable[[Scene], None]) -> None:
        self._node = node
        self._lock = threading.Lock()
        self.rules = rules
        self._on_change = on_change
        self.scene = Scene(frame, search_paths)
        rules.seed(self.scene)
        if scene_file:
            self.scene.load_yaml(scene_file)
        self.snapshot = self.scene.copy()
        self._scene_publisher = node.create_publisher(SceneMsg, 'scene', LATCHED_QOS)
        self._marker_publisher = node.create_publisher(MarkerArray, 'scene_markers',
                                                       LATCHED_QOS)
        group = MutuallyExclusiveCallbackGroup()
        for kind, name, handler in ((ApplySceneObject, '~/scene/apply', self._apply_object),
                                    (RemoveSceneObject, '~/scene/remove',
                                     self._remove_object)):
            node.create_service(kind, name, self._guarded(kind, handler),
                                qos_profile=service_qos, callback_group=group)
        self._publish()

    def put(self, spec: dict) -> None:
        """Add or replace an object on the node's own behalf (a run-time parameter, a new
        floor after new link lengths): published like a service's change.

        Raises:
            SceneError: refused (the scene is unchanged).
        """
        with self._lock:
            self.scene.put(spec)
            self._publish()
        self._on_change(self.snapshot)

    def _guarded(self, kind, handler):
        """Wrap a scene handler: a refusal or a fault is success false with the reason."""
        logger = self._node.get_logger()

        def callback(request, response):
            try:
                with self._lock:
                    response = handler(request, response)
                self._on_change(self.snapshot)
                return response
            except SceneError as error:
                response.success = False
                response.message = str(error)
            except Exception as error:  # noqa: BLE001 - the node must survive any fault
                logger.error(f'{kind.__name__} raised: {error!r}')
                response.success = False
                response.message = f'internal error: {error!r} (the scene is unchanged)'
            response.version = self.scene.version
            logger.warning(f'{kind.__name__} refused: {response.message}')
            return response
        return callback

    def _apply_object(self, request: ApplySceneObject.Request,
                      response: ApplySceneObject.Response) -> ApplySceneObject.Response:
        spec = self.rules.admit(scene_messages.spec_from_message(request.object))
        item, replaced = self.scene.put(spec)
        return self._changed(response, f'{"replaced" if replaced else "added"} '
                                       f'{item.spec["type"]} "{item.id}"')

    def _remove_object(self, request: RemoveSceneObject.Request,
                       response: RemoveSceneObject.Response) -> RemoveSceneObject.Response:
        self.rules.check_remove(request.id)
        item = self.scene.remove(request.id)
        return self._changed(response, f'removed "{item.id}"')

    def _changed(self, response, what: str):
        self._publish()
        response.success = True
        response.version = self.scene.version
        response.message = (f'{what} (scene version {self.scene.version}, '
                            f'{len(self.scene)} objects)')
        self._node.get_logger().info(response.message)
        return response

    def _publish(self) -> None:
        """Swap in the new snapshot, then publish the scene and its markers (latched)."""
        self.snapshot = self.scene.copy()
        stamp = self._node.get_clock().now().to_msg()
        self._scene_publisher.publish(scene_messages.scene_message(self.scene, stamp))
        self._marker_publisher.publish(scene_messages.scene_markers(self.scene, stamp))
