"""The arm's servos as one value: its URDF chain, the URDF's joint limits and a validated
calibration file (the project's YAML, arm_servos.calibration, or LeRobot's JSON,
arm_servos.lerobot: the format is read from the content), shared by ``servo_calibrate`` and
``servo_bridge``.
"""

from __future__ import annotations

from dataclasses import dataclass

from arm_kinematics.description.frames import default_frames
from arm_kinematics.model.arm_model import ArmModel
from arm_servos.calibration import Calibration, urdf_joints, UrdfJoint
from arm_servos.lerobot import load_calibration


@dataclass(frozen=True)
class ServoArm:
    """A URDF chain with the limits of every movable joint (the gripper's too)."""

    chain: tuple[str, ...]
    joints: dict[str, UrdfJoint]

    @classmethod
    def from_urdf(cls, urdf: str, base: str = '', tip: str = '') -> ServoArm:
        """Raises DescriptionError (arm_ik.kinematics.model) for a URDF that is not usable."""
        default_base, default_tip = default_frames(urdf)
        model = ArmModel.from_urdf(urdf, base or default_base, tip or default_tip)
        return cls(tuple(model.joint_names), urdf_joints(urdf))

    def load(self, path: str, urdf: str, joint_map: str = '', protocol: str = '') -> Calibration:
        """A calibration file checked against this arm (CalibrationError names the field).

        Args:
            joint_map: for a LeRobot file, ``motor=joint,...`` where motor names are not the
                URDF's joint names (``motor=-`` leaves one out).
            protocol: for a LeRobot file, feetech or dynamixel ('' = from its folder name).
        """
        return load_calibration(path, urdf, self.chain, joint_map, protocol)
