"""What the device can do: measured ceilings and the roofline floor they give."""

from kernelwright.hardware.ceilings import Ceilings, load_or_measure_ceilings
from kernelwright.hardware.roofline import Work, speed_of_light

__all__ = ["Ceilings", "Work", "load_or_measure_ceilings", "speed_of_light"]
