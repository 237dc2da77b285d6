"""The arm in the browser: its URDF drawn by viser's ViserUrdf (through yourdfpy)."""

from __future__ import annotations

from collections.abc import Sequence
import io

import numpy as np


def load_urdf(urdf_text: str):
    """A yourdfpy URDF with its visual scene, ready for ViserUrdf.

    yourdfpy gives primitive shapes per-face colours; copying those (ViserUrdf copies each
    mesh) makes trimesh build a scipy sparse matrix, and scipy is not a dependency. Each
    shape is turned into a plain mesh with per-vertex colours here instead (numpy only).
    """
    import trimesh
    import yourdfpy
    # Bytes: lxml refuses a str that carries an encoding declaration (most vendor URDFs).
    urdf = yourdfpy.URDF.load(io.BytesIO(urdf_text.encode('utf-8')), build_scene_graph=True,
                              load_meshes=True, build_collision_scene_graph=False,
                              load_collision_meshes=False)
    geometry = urdf.scene.geometry
    for name, mesh in list(geometry.items()):
        colours = np.full((len(mesh.vertices), 4), 200, dtype=np.uint8)
        if mesh.visual is not None and mesh.visual.kind == 'face':
            colours[mesh.faces.ravel()] = np.repeat(mesh.visual.face_colors, 3, axis=0)
        geometry[name] = trimesh.Trimesh(np.array(mesh.vertices), np.array(mesh.faces),
                                         vertex_colors=colours, process=False)
    return urdf


class ArmView:
    """The URDF arm in a viser scene, posed only with checked, finite joint values."""

    def __init__(self, server, urdf_text: str, joint_names: Sequence[str],
                 root: str = '/arm') -> None:
        from viser.extras import ViserUrdf
        self.urdf = load_urdf(urdf_text)
        self.view = ViserUrdf(server, self.urdf, root_node_name=root)
        actuated = list(self.view.get_actuated_joint_names())
        missing = [name for name in joint_names if name not in actuated]
        if missing:
            raise ValueError(f'the URDF has no actuated joints {", ".join(missing)}')
        # Chain order (the model's) → the URDF's actuated order (what update_cfg takes).
        self._order = [list(joint_names).index(name) if name in joint_names else -1
                       for name in actuated]
        self._fixed = np.zeros(len(actuated))
        self.shown: np.ndarray | None = None
        self.refused = 0

    def remove(self) -> None:
        """Take the arm out of the scene (before drawing one with new link lengths)."""
        self.view.remove()

    def show(self, q: Sequence[float]) -> bool:
        """Pose the arm at ``q`` (rad, chain order); False (nothing drawn) when not finite.

        The node checks joint_states before this; this is the last line, so no code path
        can hand viser (which accepts NaN) a non-finite pose.
        """
        values = np.asarray(q, dtype=float)
        if values.shape != (len([k for k in self._order if k >= 0]),) or \
                not np.all(np.isfinite(values)):
            self.refused += 1
            return False
        configuration = np.array([values[k] if k >= 0 else fixed
                                  for k, fixed in zip(self._order, self._fixed)])
        self.view.update_cfg(configuration)
        self.shown = values.copy()
        return True
