import kernelwright


def test_all_is_sorted_and_importable():
    assert kernelwright.__all__ == sorted(kernelwright.__all__)
    for name in kernelwright.__all__:
        assert getattr(kernelwright, name) is not None, name


def test_evaluate_is_the_harness_entry_point():
    from kernelwright.evaluate.harness import evaluate

    assert kernelwright.evaluate is evaluate
