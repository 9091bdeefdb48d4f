"""Device ceilings (measured) and the roofline floor they give."""

from kernelwright.hardware.ceilings import Ceilings, load_ceilings, measure_ceilings, store_ceilings
from kernelwright.hardware.roofline import Work, speed_of_light

__all__ = ["Ceilings", "Work", "load_ceilings", "measure_ceilings", "speed_of_light",
           "store_ceilings"]
