"""The bus drivers by protocol name (the calibration file's ``protocol`` field)."""

from __future__ import annotations

from arm_servos.dynamixel import DynamixelBus
from arm_servos.feetech import FeetechBus
from arm_servos.sdk_bus import SdkServoBus

DRIVERS: dict[str, type[SdkServoBus]] = {'feetech': FeetechBus, 'dynamixel': DynamixelBus}
