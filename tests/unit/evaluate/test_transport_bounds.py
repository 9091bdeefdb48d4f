"""The judge's bound on a CUDA IPC descriptor: the claimed span must lie in the allocation the
driver reports at the mapping's base (the driver is replaced by a table of allocations)."""

import pytest

from kernelwright.evaluate.transport import TransportError, _check_mapped

MiB = 1 << 20
ALLOCATIONS = {0x7000_0000: 256 * MiB, 0x9000_0000: 64 * MiB}  # base -> size


def driver(ptr: int) -> tuple[int, int] | None:
    for base, size in ALLOCATIONS.items():
        if base <= ptr < base + size:
            return base, size
    return None


def test_a_span_inside_its_allocation_is_accepted():
    _check_mapped(0x7000_0000 + 16 * MiB, 16 * MiB, 240 * MiB, driver)


def test_a_span_past_the_end_is_refused():
    with pytest.raises(TransportError, match="more memory than its allocation"):
        _check_mapped(0x7000_0000 + 16 * MiB, 16 * MiB, 241 * MiB, driver)


def test_a_far_offset_is_bounded_by_the_mapping_not_by_where_it_lands():
    # base + offset lands in another allocation (the judge's own memory): still refused,
    # because the bound is the allocation at the mapping's base
    offset = 0x9000_0000 - 0x7000_0000
    with pytest.raises(TransportError, match="more memory than its allocation"):
        _check_mapped(0x9000_0000, offset, MiB, driver)


def test_an_unplaceable_mapping_is_a_harness_failure_not_a_pass():
    with pytest.raises(RuntimeError, match="cannot bound"):
        _check_mapped(0x1000, 0, 16, driver)
