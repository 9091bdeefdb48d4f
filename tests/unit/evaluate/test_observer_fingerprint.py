"""The observer's fingerprint of a tensor is computed in float64 chunks, never a whole copy;
what a launch wrote is told view by view."""

from collections import Counter

import pytest
import torch

from kernelwright.evaluate.guard import observer


def _whole(t: torch.Tensor) -> tuple[float, ...]:
    x = t.reshape(-1).double()
    n = x.numel()
    k = min(16, n)
    idx = torch.arange(k) * max((n - 1) // max(k - 1, 1), 1)  # evenly spaced from the first
    return (float(x.sum()), float((x * x).sum()), *[float(v) for v in x[idx].tolist()])


@pytest.mark.parametrize("n", [1, 7, 64, 1000, 1003])
def test_chunked_fingerprint_equals_the_whole_tensors(monkeypatch, n):
    monkeypatch.setattr(observer, "_PRINT_CHUNK", 64)  # many chunks, the last one partial
    t = torch.randn(n, dtype=torch.float32)
    assert observer.same_print(observer.fingerprint(t), _whole(t))


def test_chunked_fingerprint_tells_a_changed_value(monkeypatch):
    monkeypatch.setattr(observer, "_PRINT_CHUNK", 64)
    t = torch.randn(4, 250)
    before = observer.fingerprint(t)
    t[3, 200] += 1.0  # in the last chunk, at no sampled position
    assert not observer.same_print(before, observer.fingerprint(t))


def test_chunks_are_bounded(monkeypatch):
    """No float64 conversion is larger than a chunk."""
    seen = []
    real = torch.Tensor.double

    def double(self):
        seen.append(self.numel())
        return real(self)

    monkeypatch.setattr(observer, "_PRINT_CHUNK", 100)
    monkeypatch.setattr(torch.Tensor, "double", double)
    observer.fingerprint(torch.randn(1050))
    assert seen and max(seen) <= 100


def test_prints_of_several_tensors_are_each_ones_print():
    tensors = [torch.randn(5, 7), torch.randn(1), torch.empty(0), torch.randn(300)[::3]]
    assert observer.fingerprints(tensors) == [observer.fingerprint(t) for t in tensors]
    assert observer.fingerprints(tensors)[2] == ()


def _launch(watch: observer.ForwardObserver, args: list[torch.Tensor], kernel) -> None:
    watch.before_launch(args, {})
    kernel()
    watch.after_launch(args, {})


def test_a_launch_that_writes_nothing_leaves_overlapping_views_unwritten():
    """Two views of one storage are two arguments; each is compared with itself."""
    x = torch.randn(64)
    watch = observer.ForwardObserver(Counter())
    _launch(watch, [x, x[1:], x[::2]], lambda: None)
    assert watch.written == set()


def test_a_launch_that_writes_a_view_marks_its_storage_written():
    x, y = torch.randn(64), torch.randn(64)
    watch = observer.ForwardObserver(Counter())
    _launch(watch, [x, y[8:]], lambda: y[8:].mul_(2.0))
    assert watch.written == {y.untyped_storage().data_ptr()}


def test_a_launch_that_copies_an_argument_is_not_a_write():
    """A permutation of another argument's values moved them, computed nothing."""
    x, y = torch.randn(64), torch.zeros(64)
    watch = observer.ForwardObserver(Counter())
    _launch(watch, [x, y], lambda: y.copy_(x.flip(0)))
    assert watch.written == set()


def test_outermost_calls_from_raw_events_match_the_profilers_event_tree():
    """The raw-event pass nests calls as the profiler's own tree does: the same outermost ATen
    calls, the same operators below each, the harness's labelled operators left out."""
    from torch.autograd import profiler

    x = torch.randn(32, 32)
    with profiler.profile(use_kineto=True, use_cpu=True) as prof:
        y = torch.softmax(x, 1) @ x
        with observer._harness():
            observer.fingerprints([x, y])
        torch.nn.functional.layer_norm(y, (32,)).sum()
    raw = observer._outermost_calls(prof)
    tree = observer._calls_from_tree(prof.function_events)
    assert [c[0] for c in raw] == [c[0] for c in tree]
    # (the tree merges an operator into a same-named operator that is its only child: sum in sum)
    assert [set(c) for c in raw] == [set(c) for c in tree]
    assert [c[0] for c in raw] == ["aten::softmax", "aten::matmul", "aten::layer_norm",
                                   "aten::sum"]
