"""Dexterity metrics against hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.ik.metrics import (
    _symmetric3_extreme_eigenvalues,
    condition_number,
    dexterity,
    elbow_sensitivity,
    manipulability,
    reach_fraction,
)
from arm_kinematics.ik.solvers.base import Workspace, workspace_from_model

L1, L2 = 0.95, 0.85


def _planar_jacobian(q1: float, q2: float, l1: float = L1, l2: float = L2) -> np.ndarray:
    """d(x, z)/d(q1, q2) of a two-link arm in its plane (m/rad)."""
    s1, c1 = math.sin(q1), math.cos(q1)
    s12, c12 = math.sin(q1 + q2), math.cos(q1 + q2)
    return np.array([[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]])


@pytest.mark.parametrize('q1, q2', [(0.0, 0.5), (0.3, -1.2), (1.0, 2.0), (-0.4, 3.0)])
def test_two_link_manipulability_is_l1_l2_sin_q2(q1, q2):
    assert manipulability(_planar_jacobian(q1, q2)) == pytest.approx(
        L1 * L2 * abs(math.sin(q2)), rel=1e-12)


def test_pointer3_manipulability_adds_the_yaw_lever(load_arm):
    # det Jv = u · l1 · l2 · sin q2 with u the tip's distance from the yaw axis.
    model = load_arm('pointer3')
    for q in ([0.2, 0.4, -1.0], [1.0, 0.1, 0.6], [-2.0, 1.2, -2.0]):
        jacobian = model.jacobian(np.array(q))
        tip = model.fk(np.array(q))[:3, 3]
        expected = math.hypot(tip[0], tip[1]) * L1 * L2 * abs(math.sin(q[2]))
        assert manipulability(jacobian) == pytest.approx(expected, rel=1e-9)
        # A 6-row Jacobian is read through its position rows.
        assert manipulability(jacobian) == manipulability(jacobian[:3])
        assert condition_number(jacobian) == condition_number(jacobian[:3])


def test_condition_number_of_known_matrices():
    assert condition_number(np.eye(3)) == pytest.approx(1.0)
    assert condition_number(np.diag([1.0, 2.0, 4.0])) == pytest.approx(4.0)
    rotation = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))[0]
    assert condition_number(rotation @ np.diag([0.5, 3.0, 1.5])) == pytest.approx(6.0)
    # Extra joints (n > 3): still σmax/σmin of the 3 × n matrix.
    wide = np.hstack([np.diag([2.0, 1.0, 0.5]), np.zeros((3, 2))])
    assert condition_number(wide) == pytest.approx(4.0)


def test_singular_cases_are_infinite_without_division_errors(load_arm):
    model = load_arm('pointer3')
    with np.errstate(all='raise'):
        stretched = model.jacobian(np.array([0.3, 0.5, 0.0]))
        assert condition_number(stretched) == math.inf
        assert manipulability(stretched) == pytest.approx(0.0, abs=1e-12)
        assert condition_number(_planar_jacobian(0.4, 0.0)) == math.inf
        assert condition_number(_planar_jacobian(0.4, math.pi)) == math.inf
        assert condition_number(np.zeros((3, 3))) == math.inf
        assert manipulability(np.zeros((3, 3))) == 0.0
        assert condition_number(np.ones((3, 2))) == math.inf    # fewer joints than rows
        # Straight up above the yaw axis: the yaw moves nothing.
        assert condition_number(model.jacobian(np.array([0.0, math.pi / 2, 0.0]))) == math.inf
    assert math.isfinite(condition_number(model.jacobian(np.array([0.3, 0.5, -1.0]))))


@pytest.mark.parametrize('bad', [np.zeros((4, 3)), np.zeros(3), np.zeros((3, 0)),
                                 [[1.0, math.nan], [0.0, 1.0]], [[1.0, math.inf, 0.0]] * 3])
def test_bad_jacobians_raise_value_error(bad):
    with pytest.raises(ValueError):
        manipulability(bad)
    with pytest.raises(ValueError):
        condition_number(bad)


def test_reach_fraction(load_arm):
    workspace = Workspace(np.array([0.0, 0.0, 0.4]), 2.0)
    assert reach_fraction(workspace, [0.0, 0.0, 0.4]) == 0.0
    assert reach_fraction(workspace, [1.2, 0.0, 2.0]) == pytest.approx(1.0)
    assert reach_fraction(workspace, [0.0, -3.0, 0.4]) == pytest.approx(1.5)
    assert reach_fraction(workspace, np.array([0.6, 0.8, 0.4])) == pytest.approx(0.5)
    assert reach_fraction(workspace, [1e308, 1e308, 0.0]) > 1e300
    assert reach_fraction(Workspace(np.zeros(3), 0.0), [1.0, 0.0, 0.0]) == math.inf
    # Malformed requests are described, not refused with an exception.
    for bad in ([math.nan, 0.0, 0.0], [math.inf, 0.0, 0.0], [1.0, 2.0], None, 'abc',
                [0.5, 'a', 1.0], np.zeros((2, 2))):
        assert math.isnan(reach_fraction(workspace, bad))
    model = load_arm('pointer3')
    stretched = model.fk(np.array([0.7, 0.3, 0.0]))[:3, 3]
    assert reach_fraction(workspace_from_model(model), stretched) == pytest.approx(1.0)


def test_elbow_sensitivity():
    assert elbow_sensitivity(L1, L2, L1 + L2, 0.0) == math.inf
    assert elbow_sensitivity(L1, L2, L1 - L2, math.pi) == math.inf
    assert elbow_sensitivity(0.0, L2, 0.5, 1.0) == math.inf
    r = math.hypot(L1, L2)
    assert elbow_sensitivity(L1, L2, r, math.pi / 2) == pytest.approx(r / (L1 * L2))
    assert elbow_sensitivity(L1, L2, r, -math.pi / 2) == pytest.approx(r / (L1 * L2))
    # Against the derivative of q2(r) = acos((r² − l1² − l2²) / (2·l1·l2)) (rad/m).
    for q2 in (0.3, 1.1, 2.5):
        radius = math.sqrt(L1 ** 2 + L2 ** 2 + 2 * L1 * L2 * math.cos(q2))
        h = 1e-6

        def elbow(dist: float) -> float:
            return math.acos((dist ** 2 - L1 ** 2 - L2 ** 2) / (2 * L1 * L2))
        numeric = abs(elbow(radius + h) - elbow(radius - h)) / (2 * h)
        assert elbow_sensitivity(L1, L2, radius, q2) == pytest.approx(numeric, rel=1e-6)


def _reference(rows: np.ndarray) -> tuple[float, float]:
    """Manipulability and condition number straight from LAPACK (det, eigvalsh)."""
    gram = rows @ rows.T
    determinant = float(np.linalg.det(gram))
    eigenvalues = np.linalg.eigvalsh(gram)
    condition = math.sqrt(eigenvalues[-1] / eigenvalues[0]) if eigenvalues[0] > 0.0 \
        else math.inf
    return math.sqrt(max(determinant, 0.0)), condition


# Fewer joints than rows is singular whatever the pose (tested above).
@pytest.mark.parametrize('rows, columns', [(rows, columns) for rows in (2, 3)
                                           for columns in (2, 3, 4, 6) if columns >= rows])
def test_closed_form_dexterity_matches_lapack(rows, columns):
    # dexterity's closed-form eigenvalues (and its eigvalsh fallback below 1e-6·λmax)
    # against LAPACK, over conditioning from 1 to 1e7 (σ ratio) and random bases.
    rng = np.random.default_rng(rows * 10 + columns)
    for _ in range(300):
        left = np.linalg.qr(rng.normal(size=(rows, rows)))[0]
        right = np.linalg.qr(rng.normal(size=(columns, columns)))[0][:rows]
        sigma = np.sort(10.0 ** rng.uniform(-7.0, 0.0, size=rows))[::-1] * rng.uniform(0.1, 3.0)
        jacobian = left @ np.diag(sigma) @ right
        volume, condition = dexterity(jacobian.tolist())
        expected_volume, expected_condition = _reference(jacobian)
        # sqrt(det G) of a near-singular G is rounding-limited in any method (LAPACK's det
        # too): absolute 1e-7 of the scale is what both reach.
        scale = sigma[0] ** rows
        assert volume == pytest.approx(float(np.prod(sigma)), rel=1e-6, abs=1e-7 * scale)
        assert volume == pytest.approx(expected_volume, rel=1e-6, abs=1e-7 * scale)
        # Through the Gram matrix λmin carries an error of about eps·λmax, so the
        # condition number κ is good to about eps·κ² whichever way G's eigenvalues are
        # found; the closed form is used only where it is good to 1e-9.
        kappa = sigma[0] / sigma[-1]
        if kappa > 5e6:
            continue    # λmin within rounding of zero: infinite or rounding (tested above)
        tolerance = max(1e-9, 1e-14 * kappa * kappa)
        assert condition == pytest.approx(kappa, rel=tolerance)
        assert condition == pytest.approx(expected_condition, rel=tolerance)


def test_closed_form_dexterity_of_repeated_singular_values():
    # Equal eigenvalues are where the trigonometric solution's arccos is at ±1 and loses
    # half its digits: these must still come out exact (the LAPACK fallback).
    for sigma in ([1.0, 1.0, 1.0], [2.0, 1.0, 1.0], [2.0, 2.0, 1.0], [3.0, 3.0, 1e-4]):
        rotation = np.linalg.qr(np.random.default_rng(3).normal(size=(3, 3)))[0]
        volume, condition = dexterity((rotation @ np.diag(sigma)).tolist())
        kappa = max(sigma) / min(sigma)
        assert condition == pytest.approx(kappa, rel=max(1e-9, 1e-14 * kappa * kappa))
        # det G of a near-singular G: rounding-limited, as in the general test above.
        assert volume == pytest.approx(float(np.prod(sigma)), rel=1e-6)
    assert dexterity([[2.0, 0.0], [0.0, 2.0]]) == (pytest.approx(4.0), pytest.approx(1.0))


def test_closed_form_eigenvalue_bound_holds():
    # The bound that decides between the closed form and LAPACK must cover the closed
    # form's real error, nearly double eigenvalues included.
    rng = np.random.default_rng(17)
    eps = np.finfo(float).eps
    for index in range(3000):
        rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        values = np.sort(10.0 ** rng.uniform(-7.0, 0.0, size=3))[::-1]
        if index % 3 == 0:
            values[2] = values[1] * (1.0 + 10.0 ** rng.uniform(-12.0, -2.0))
        elif index % 3 == 1:
            values[1] = values[0] * (1.0 - 10.0 ** rng.uniform(-12.0, -2.0))
        gram = rotation @ np.diag(values) @ rotation.T
        gram = 0.5 * (gram + gram.T)
        reference = np.linalg.eigvalsh(gram)
        largest, smallest, bound = _symmetric3_extreme_eigenvalues(
            gram[0, 0], gram[0, 1], gram[0, 2], gram[1, 1], gram[1, 2], gram[2, 2])
        slack = 4.0 * eps * reference[-1]    # LAPACK's own rounding
        assert abs(largest - reference[-1]) <= bound + slack
        assert abs(smallest - reference[0]) <= bound + slack


def test_tiny_and_huge_scales_never_divide_by_zero():
    # p³ of the characteristic cubic underflows (or overflows) here: LAPACK takes over.
    rotation = np.linalg.qr(np.random.default_rng(8).normal(size=(3, 3)))[0]
    for scale in (1e-55, 1e-120, 1e60):
        volume, condition = dexterity((scale * rotation @ np.diag([1.0, 2.0, 3.0])).tolist())
        assert condition == pytest.approx(3.0, rel=1e-9)
    assert condition_number(np.array([[1.0, 0.0, 0.0], [1e-120, 1.0, 0.0],
                                      [0.0, 0.0, 1.0]])) == pytest.approx(1.0)
