"""The scene's collision objects and the collision witness in the lab's 3D view (viser).

Objects are drawn from ``scene_objects.ObjectDrawing`` values: one moved keeps its node (only
its pose changes), one whose shape changed is drawn anew, one no longer in the scene is
removed. Objects in contact are red; links in contact carry a label at their origin.
Objects are opaque: a see-through one inside the see-through reach shell, nearer the camera
than the shell's centre, was hidden by it (the browser draws see-through nodes back to front
by their centres, and the shell's front face is drawn first).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from arm_ik.lab.colours import SCENE_OBJECT, TOUCHING
from arm_ik.lab.scene_objects import ObjectDrawing

ROOT = '/scene_objects'


class ObjectView:
    """Scene-object nodes of a viser scene, by object id; the render tick alone calls it."""

    def __init__(self, scene) -> None:
        self.scene = scene
        self.handles: dict[str, object] = {}
        self._keys: dict[str, tuple] = {}
        self._touching: frozenset[str] = frozenset()
        self._labels: dict[str, object] = {}
        self._serial = 0        # node names: an id may hold any character, '/' included

    def show(self, drawings: Sequence[ObjectDrawing]) -> None:
        """Draw exactly these objects (add, move, redraw, remove)."""
        wanted = {drawing.id: drawing for drawing in drawings}
        for object_id in [k for k in self.handles if k not in wanted]:
            self.handles.pop(object_id).remove()
            self._keys.pop(object_id)
        for object_id, drawing in wanted.items():
            handle = self.handles.get(object_id)
            if handle is not None and self._keys[object_id] == drawing.shape_key:
                handle.position, handle.wxyz = drawing.position, drawing.wxyz
                continue
            if handle is not None:
                handle.remove()
            self.handles[object_id] = self._add(drawing)
            self._keys[object_id] = drawing.shape_key

    def _add(self, drawing: ObjectDrawing):
        self._serial += 1
        name = f'{ROOT}/{self._serial}'
        colour = TOUCHING if drawing.id in self._touching else SCENE_OBJECT
        common = {'color': colour, 'position': drawing.position, 'wxyz': drawing.wxyz}
        if drawing.kind in ('box', 'bounds'):
            # A mesh drawn as its bounds is a wireframe: a stand-in, not the object.
            return self.scene.add_box(name, dimensions=drawing.size,
                                      wireframe=drawing.kind == 'bounds', **common)
        if drawing.kind == 'sphere':
            return self.scene.add_icosphere(name, radius=drawing.size[0], subdivisions=3,
                                            **common)
        if drawing.kind == 'cylinder':
            return self.scene.add_cylinder(name, radius=drawing.size[0],
                                           height=drawing.size[1], **common)
        return self.scene.add_mesh_simple(name, drawing.vertices, drawing.faces, **common)

    def set_collision(self, objects: Collection[str],
                      marks: Sequence[tuple[str, str, np.ndarray]]) -> None:
        """Objects in contact (red, the others back to their colour) and the labels of the
        links in contact: (link, text, position m) each."""
        touching = frozenset(objects)
        if touching != self._touching:
            self._touching = touching
            for object_id, handle in self.handles.items():
                handle.color = TOUCHING if object_id in touching else SCENE_OBJECT
        shown = {link for link, _, _ in marks}
        for link in [k for k in self._labels if k not in shown]:
            self._labels.pop(link).remove()
        for link, text, position in marks:
            where = tuple(float(v) for v in position)
            label = self._labels.get(link)
            if label is not None and label.text == text:
                label.position = where
                continue
            if label is not None:
                label.remove()
            self._serial += 1
            self._labels[link] = self.scene.add_label(f'/collision_labels/{self._serial}',
                                                      text, position=where)

    @property
    def labels(self) -> dict[str, str]:
        """{link: label text} of the links labelled now."""
        return {link: label.text for link, label in self._labels.items()}
