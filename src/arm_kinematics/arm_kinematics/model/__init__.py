"""The chain model: a serial chain from base to tip, with FK, Jacobians and limits.

``ArmModel`` (``arm_model``) is the one model every layer above computes with; it is built
from a URDF by ``ArmModel.from_urdf`` (base and tip links name the chain). ``kernel`` is the
fast path of its FK and Jacobian.
"""

from arm_kinematics.model.arm_model import ArmModel, DescriptionError, FULL_TURN, Joint

__all__ = ['ArmModel', 'DescriptionError', 'FULL_TURN', 'Joint']
