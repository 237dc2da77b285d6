"""The arm in the browser: its URDF drawn by viser's ViserUrdf (through yourdfpy), or, when
its mesh files cannot be found or read, as the capsules of its safety geometry.

A user's URDF names its meshes ``package://<package>/...``; the lab gets the URDF as text,
so those are looked for where config_writer.resolve_mesh looks (the folder of ``urdf_file``
and its parents, AMENT_PREFIX_PATH, ROS_PACKAGE_PATH). An arm whose meshes are missing used
to be drawn as nothing at all, so the view showed only the planned path's grey ghost
outlines (colours.GHOST): every link is then a capsule instead, and the node logs why.
"""

from __future__ import annotations

from collections.abc import Sequence
import io
from pathlib import Path

import numpy as np

from arm_ik.lab.colours import CAPSULE_COLOUR, JOINT_COLOUR
from arm_kinematics.common.urdf_tree import lenient_text
from arm_kinematics.description.meshes import default_search_paths, resolve_mesh
from arm_kinematics.description.safety_config import default_safety_section, parse_safety_config
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene.geometry import SafetyGeometry

# Shapes yourdfpy gives no colour (an STL without a URDF material): light grey, opaque.
# Vertex-coloured meshes keep their colours (they used to turn this grey as well).
PLAIN = (200, 200, 200, 255)


class MeshError(RuntimeError):
    """The URDF's visual meshes cannot all be found or read (the message says which)."""


def search_paths(urdf_file: str = '') -> list[Path]:
    """Where package:// meshes are looked for (see config_writer.default_search_paths)."""
    return default_search_paths(urdf_file or None)


def load_urdf(urdf_text: str, paths: Sequence[str | Path] = ()):
    """A yourdfpy URDF with its visual scene, ready for ViserUrdf.

    yourdfpy gives primitive shapes per-face colours; copying those (ViserUrdf copies each
    mesh) makes trimesh build a scipy sparse matrix, which is slow for nothing. Each shape
    is turned into a plain mesh with per-vertex colours here instead (numpy only).

    Raises:
        MeshError: a mesh file did not resolve through ``paths``, or trimesh could not
            read one (a .dae needs pycollada), or the URDF has no visual geometry.
    """
    import trimesh
    import yourdfpy
    unresolved: list[str] = []

    def resolve(fname: str) -> str:
        found = resolve_mesh(fname, paths)
        if found is None:
            unresolved.append(fname)
            return fname
        return str(found)

    try:
        # Bytes: lxml refuses a str that carries an encoding declaration (most vendor URDFs).
        # As the core reads it (undeclared vendor prefixes, blank lines before the
        # declaration: accepted by urdfdom, refused by lxml).
        urdf = yourdfpy.URDF.load(io.BytesIO(lenient_text(urdf_text).encode('utf-8')),
                                  build_scene_graph=True, load_meshes=True,
                                  build_collision_scene_graph=False,
                                  load_collision_meshes=False, filename_handler=resolve)
    except Exception as error:  # noqa: BLE001 - trimesh raises anything on a bad file
        raise MeshError(f'a mesh file could not be read: {type(error).__name__}: '
                        f'{error}') from None
    if unresolved:
        raise MeshError(f'{len(unresolved)} mesh file(s) not found (first: '
                        f'{unresolved[0]}) in the folder of urdf_file and its parents, '
                        'AMENT_PREFIX_PATH and ROS_PACKAGE_PATH: give lab_viewer urdf_file '
                        '(the URDF file robot_description came from) or set ROS_PACKAGE_PATH')
    geometry = urdf.scene.geometry
    if not geometry:
        raise MeshError('the URDF has no visual geometry')
    for name, mesh in list(geometry.items()):
        geometry[name] = trimesh.Trimesh(np.array(mesh.vertices), np.array(mesh.faces),
                                         vertex_colors=_vertex_colours(mesh), process=False)
    return urdf


def _vertex_colours(mesh) -> np.ndarray:
    """(V, 4) uint8 colours of a trimesh mesh: its face or vertex colours, or a texture's
    main colour, else PLAIN; always opaque (the lab draws nothing of the arm see-through)."""
    colours = np.tile(np.array(PLAIN, dtype=np.uint8), (len(mesh.vertices), 1))
    visual = mesh.visual
    kind = getattr(visual, 'kind', None)
    if kind == 'face':
        colours[mesh.faces.ravel()] = np.repeat(visual.face_colors, 3, axis=0)
    elif kind == 'vertex':
        colours[:] = visual.vertex_colors
    elif kind == 'texture':
        main = getattr(getattr(visual, 'material', None), 'main_color', None)
        if main is not None and len(main) == 4:
            colours[:] = np.asarray(main, dtype=np.uint8)
    colours[:, 3] = 255
    return colours


class ArmView:
    """The URDF arm in a viser scene, posed only with checked, finite joint values.

    ``capsules`` is True when the meshes could not be shown and the arm is drawn from
    ``geometry``'s capsules; ``reason`` then says why.
    """

    def __init__(self, server, urdf_text: str, joint_names: Sequence[str],
                 geometry: SafetyGeometry, root: str = '/arm',
                 paths: Sequence[str | Path] = ()) -> None:
        from viser.extras import ViserUrdf
        self.shown: np.ndarray | None = None
        self.refused = 0
        self._count = len(joint_names)
        self.view = self.capsule_view = None
        self.reason = ''
        try:
            self.urdf = load_urdf(urdf_text, paths)
        except MeshError as error:
            self.reason = str(error)
            self.capsule_view = CapsuleView(server, geometry, root)
            return
        self.view = ViserUrdf(server, self.urdf, root_node_name=root)
        actuated = list(self.view.get_actuated_joint_names())
        missing = [name for name in joint_names if name not in actuated]
        if missing:
            raise ValueError(f'the URDF has no actuated joints {", ".join(missing)}')
        # Chain order (the model's) → the URDF's actuated order (what update_cfg takes).
        self._order = [list(joint_names).index(name) if name in joint_names else -1
                       for name in actuated]
        self._fixed = np.zeros(len(actuated))

    @property
    def capsules(self) -> bool:
        return self.capsule_view is not None

    def remove(self) -> None:
        """Take the arm out of the scene (before drawing one with new link lengths)."""
        if self.view is not None:
            self.view.remove()
        if self.capsule_view is not None:
            self.capsule_view.remove()

    def show(self, q: Sequence[float]) -> bool:
        """Pose the arm at ``q`` (rad, chain order); False (nothing drawn) when not finite.

        The node checks joint_states before this; this is the last line, so no code path
        can hand viser (which accepts NaN) a non-finite pose.
        """
        values = np.asarray(q, dtype=float)
        if values.shape != (self._count,) or not np.all(np.isfinite(values)):
            self.refused += 1
            return False
        if self.capsule_view is not None:
            self.capsule_view.show(values)
        else:
            configuration = np.array([values[k] if k >= 0 else fixed
                                      for k, fixed in zip(self._order, self._fixed)])
            self.view.update_cfg(configuration)
        self.shown = values.copy()
        return True


class CapsuleView:
    """The arm as its safety capsules (a cylinder and two end spheres per link), posed by FK.

    A capsule's length only changes with a prismatic joint inside it; its cylinder is then
    drawn again (viser replaces a node of the same name), else only moved.
    """

    def __init__(self, server, geometry: SafetyGeometry, root: str = '/arm') -> None:
        self.scene = server.scene
        self.geometry = geometry
        self.root = root
        self._lengths = np.full(len(geometry.capsules), np.nan)
        self._cylinders: list = [None] * len(geometry.capsules)
        self._ends = [(self.scene.add_icosphere(f'{root}/capsule_{k}/start',
                                                radius=float(capsule.radius),
                                                color=JOINT_COLOUR, subdivisions=2),
                       self.scene.add_icosphere(f'{root}/capsule_{k}/end',
                                                radius=float(capsule.radius),
                                                color=JOINT_COLOUR, subdivisions=2))
                      for k, capsule in enumerate(geometry.capsules)]
        self.show(np.clip(np.zeros(geometry.model.dof), geometry.model.lower,
                          geometry.model.upper))

    def show(self, q: np.ndarray) -> None:
        starts, ends, _ = self.geometry.link_segments(q)
        for k, (start, end) in enumerate(zip(starts[0], ends[0])):
            axis = end - start
            length = float(np.linalg.norm(axis))
            if not abs(length - self._lengths[k]) < 1e-6:
                self._lengths[k] = length
                self._cylinders[k] = self.scene.add_cylinder(
                    f'{self.root}/capsule_{k}/link', radius=float(
                        self.geometry.capsules[k].radius), height=max(length, 1e-6),
                    color=CAPSULE_COLOUR)
            cylinder = self._cylinders[k]
            cylinder.position = tuple(float(v) for v in 0.5 * (start + end))
            cylinder.wxyz = tuple(float(v) for v in _z_to(axis))
            first, last = self._ends[k]
            first.position = tuple(float(v) for v in start)
            last.position = tuple(float(v) for v in end)

    def remove(self) -> None:
        for cylinder in self._cylinders:
            if cylinder is not None:
                cylinder.remove()
        for first, last in self._ends:
            first.remove()
            last.remove()


def _z_to(direction: np.ndarray) -> np.ndarray:
    """Quaternion (w, x, y, z) turning +Z onto ``direction`` (viser's cylinders lie along Z)."""
    norm = float(np.linalg.norm(direction))
    if norm < 1e-12:
        return np.array([1.0, 0.0, 0.0, 0.0])
    d = direction / norm
    w = 1.0 + d[2]
    if w < 1e-9:                       # straight down: half a turn about X
        return np.array([0.0, 1.0, 0.0, 0.0])
    quaternion = np.array([w, -d[1], d[0], 0.0])     # (1 + z·d, z × d)
    return quaternion / np.linalg.norm(quaternion)


def arm_view_of(server, model: ArmModel, geometry: SafetyGeometry | None, label: str,
                paths: Sequence[str | Path] = ()) -> ArmView:
    """The arm drawn from its URDF meshes, or as capsules when they cannot be shown: those
    of ``geometry``, else of the default safety section of ``model``."""
    capsules = geometry or SafetyGeometry(model, parse_safety_config(
        default_safety_section(model), label))
    return ArmView(server, model.urdf, model.joint_names, capsules, paths=paths)
