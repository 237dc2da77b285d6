"""The (shoulder × elbow) joint map as an RGB image, drawn with numpy alone.

Rows of the map (the shoulder joint) run bottom to top, columns (the elbow) left to right;
free cells are light, floor cells grey-brown, contact cells red, cells with both dark red.
Cells the collision checker found in self-collision are violet, touching a scene object
lilac (the scene objects' colour in the 3D view); on a floor or contact cell these colours
are mixed in half. The path runs blue → orange and the measured contacts are black-ringed
red dots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from arm_ik.lab.colours import (
    MAP_BOTH,
    MAP_CONTACT,
    MAP_FLOOR,
    MAP_FREE,
    MAP_SCENE_CONTACT,
    MAP_SELF_COLLISION,
)
from arm_ik.lab.drawing import gradient

CELL_FLOOR = 1
CELL_CONTACT = 2
CELL_SELF_COLLISION = 4
CELL_SCENE_CONTACT = 8


def _palette() -> np.ndarray:
    """(16, 3) uint8 colour of every combination of the four CELL_* bits: the floor and
    contact colours, or the collision colours (their mean when both), or half of each."""
    palette = np.zeros((16, 3), dtype=np.uint8)
    base = np.array([MAP_FREE, MAP_FLOOR, MAP_CONTACT, MAP_BOTH], dtype=float)
    for bits in range(16):
        marks = [mark for bit, mark in ((CELL_SELF_COLLISION, MAP_SELF_COLLISION),
                                        (CELL_SCENE_CONTACT, MAP_SCENE_CONTACT)) if bits & bit]
        colour = base[bits & 3]
        if marks:
            mark = np.mean(np.array(marks, dtype=float), axis=0)
            colour = mark if not bits & 3 else 0.5 * (colour + mark)
        palette[bits] = np.round(colour)
    return palette


PALETTE = _palette()


@dataclass(frozen=True)
class MapGrid:
    """A joint map in plain arrays (as arm_interfaces/JointMap carries it), rad."""

    row_min: float
    row_step: float
    column_min: float
    column_step: float
    cells: np.ndarray                 # (rows, columns) uint8 CELL_* bits
    path: np.ndarray                  # (K, 2) rad: (row joint, column joint)
    contacts: np.ndarray              # (C, 2) rad


def grid_from_arrays(row_min: float, row_step: float, row_count: int, column_min: float,
                     column_step: float, column_count: int, cells: Sequence[int] | bytes,
                     path_rows: Sequence[float] = (), path_columns: Sequence[float] = (),
                     contact_rows: Sequence[float] = (),
                     contact_columns: Sequence[float] = ()) -> MapGrid:
    """A MapGrid from the message's fields.

    Raises:
        ValueError: sizes that do not match, or non-positive steps.
    """
    flat = np.frombuffer(bytes(cells), dtype=np.uint8) if isinstance(cells, (bytes, bytearray)) \
        else np.asarray(list(cells), dtype=np.uint8)
    if row_count <= 0 or column_count <= 0 or flat.size != row_count * column_count:
        raise ValueError(f'{flat.size} cells for a {row_count} x {column_count} map')
    if not (row_step > 0.0 and column_step > 0.0):
        raise ValueError(f'grid steps must be > 0 (got {row_step}, {column_step})')
    if len(path_rows) != len(path_columns) or len(contact_rows) != len(contact_columns):
        raise ValueError('path or contact rows and columns differ in length')
    path = np.column_stack([path_rows, path_columns]) if len(path_rows) else np.zeros((0, 2))
    contacts = np.column_stack([contact_rows, contact_columns]) if len(contact_rows) else \
        np.zeros((0, 2))
    return MapGrid(row_min, row_step, column_min, column_step,
                   flat.reshape(row_count, column_count), path, contacts)


def render(grid: MapGrid, cell_pixels: int = 6) -> np.ndarray:
    """(H, W, 3) uint8 image of the map, ``cell_pixels`` per cell, row 0 at the bottom."""
    rows, columns = grid.cells.shape
    image = PALETTE[grid.cells & 15]
    image = np.repeat(np.repeat(image, cell_pixels, axis=0), cell_pixels, axis=1)
    image = image[::-1].copy()          # row 0 (lowest shoulder angle) at the bottom
    height, width = image.shape[:2]

    def pixel(angles: np.ndarray) -> np.ndarray:
        """(K, 2) rad → (K, 2) float pixel (y, x) centres."""
        row = (angles[:, 0] - grid.row_min) / grid.row_step
        column = (angles[:, 1] - grid.column_min) / grid.column_step
        return np.column_stack([height - (row + 0.5) * cell_pixels,
                                (column + 0.5) * cell_pixels])

    finite_path = grid.path[np.all(np.isfinite(grid.path), axis=1)]
    if len(finite_path) >= 2:
        points = pixel(finite_path)
        colours = gradient(len(points))
        for k in range(len(points) - 1):
            _line(image, points[k], points[k + 1], colours[k], max(1, cell_pixels // 3))
    elif len(finite_path) == 1:
        _disc(image, pixel(finite_path)[0], cell_pixels, gradient(1)[0])
    finite_contacts = grid.contacts[np.all(np.isfinite(grid.contacts), axis=1)]
    for centre in pixel(finite_contacts):
        _disc(image, centre, cell_pixels * 0.9, (0, 0, 0))
        _disc(image, centre, cell_pixels * 0.6, (255, 30, 30))
    return image


def _disc(image: np.ndarray, centre: np.ndarray, radius: float, colour) -> None:
    """A filled disc, computed on its bounding box only."""
    height, width = image.shape[:2]
    top = int(max(0, np.floor(centre[0] - radius)))
    left = int(max(0, np.floor(centre[1] - radius)))
    bottom = int(min(height, np.ceil(centre[0] + radius) + 1))
    right = int(min(width, np.ceil(centre[1] + radius) + 1))
    if top >= bottom or left >= right:
        return
    y, x = np.ogrid[top:bottom, left:right]
    mask = (y + 0.5 - centre[0]) ** 2 + (x + 0.5 - centre[1]) ** 2 <= radius ** 2
    image[top:bottom, left:right][mask] = colour


def _line(image: np.ndarray, start: np.ndarray, end: np.ndarray, colour, width: int) -> None:
    """A thick line by stamping small squares along it (numpy only, no anti-aliasing)."""
    height, width_px = image.shape[:2]
    steps = int(np.ceil(np.max(np.abs(end - start)))) + 1
    half = width // 2
    for t in np.linspace(0.0, 1.0, steps):
        y, x = np.round(start + (end - start) * t).astype(int)
        image[max(0, y - half):min(height, y + half + 1),
              max(0, x - half):min(width_px, x + half + 1)] = colour
