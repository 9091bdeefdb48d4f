"""Numeric checks of emitted ModelNew files, run in a worker process under Triton's interpreter.

Triton's interpreter must be switched on before ``triton`` is first imported (its own helper
functions are compiled or interpreted at import), and the test session may already have imported
it in compiled mode; so the checks run in one long-lived child started with TRITON_INTERPRET=1.
The child reads one JSON request per line and answers one JSON line:

    {"body": "...task body...", "skills": [...], "params": {...}, "inputs": "python expr" | null,
     "dtype": "bfloat16" | null, "tol": 1e-4, "expect": 1, "policy": "fp32" | "tf32" | null,
     "reference": "float64" | null (the reference model and inputs in that dtype),
     "record": ["BLOCK_N", ...] | null (launch arguments recorded with each kernel's name),
     "index_64": true | null (every launch indexes in 64 bits, as for offsets past 2**31)}
    -> {"sources": [...], "checked": [...skills per design...],
        "launched": [...kernel names launched per design...]} or {"error": "..."}

A request with ``"op": "resized"`` checks a task file's first designs at other sizes
(:func:`resized`). A request with ``"op": "outputs"`` runs the first ranked design holding
``skill`` on inputs given as float32 bit patterns and returns what it computed, for tests that
check a contract of their own rather than a match with PyTorch:

    {"op": "outputs", "body": "...", "skill": "...", "params": {...},
     "inputs": [[name, shape, [int32 bits...]], ...]}
    -> {"source": "...", "outputs": {name: [each output, floats as int32 bits]}}
"""

from __future__ import annotations

import functools
import itertools
import json
import sys
import tempfile
import textwrap
import traceback
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def write_task(folder: Path, body: str, name: str = "task") -> Path:
    """A task file from its body (imports added)."""
    path = folder / f"{name}.py"
    path.write_text(HEADER + textwrap.dedent(body))
    return path


def module_task(init: str, forward: str, inputs: tuple[str, str]) -> str:
    """A task whose ``__init__`` runs the statements ``init`` (lines after the first indented
    by 8 spaces) and whose forward returns ``forward`` of x; ``inputs``: the input and the
    list of variant input sets."""
    return f"""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        {init}
    def forward(self, x):
        return {forward}
def get_inputs():
    return [{inputs[0]}]
def get_input_variants():
    return {inputs[1]}
def get_init_inputs():
    return []
"""


def norm_task(norm: str, shape: str, variants: str = "[]") -> str:
    """A task applying ``nn.<norm>`` (weight in [0.5, 1.5], bias near 0) to x of ``shape``."""
    return f"""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.{norm}
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.1)
    def forward(self, x):
        return self.norm(x)
def get_inputs():
    return [torch.randn{shape}]
def get_input_variants():
    return {variants}
def get_init_inputs():
    return []
"""


# a softmax row with a single finite entry among -inf (a masked attention row)
MASKED_ROW_VARIANT = (
    '[[torch.full((2, 17000), -float("inf")).index_fill(1, torch.tensor([5]), 0.0)]]'
)


def softmax_rows_task(shape: str, variants: str = "[]") -> str:
    """A task applying ``torch.softmax`` over the last dimension of x of ``shape`` (x 4)."""
    return f"""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.softmax(x, dim=-1)
def get_inputs():
    return [torch.randn{shape} * 4.0]
def get_input_variants():
    return {variants}
def get_init_inputs():
    return []
"""


def forward_task(forward: str, inputs: str, variants: str = "[]", params: str = "x") -> str:
    """A task whose forward(``params``) runs the statements ``forward`` (lines after the first
    indented by 8 spaces) on ``inputs``, with ``variants`` as extra input sets."""
    return f"""
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, {params}):
        {forward}
def get_inputs():
    return [{inputs}]
def get_input_variants():
    return {variants}
def get_init_inputs():
    return []
"""


def attention_task(
    forward: str, inputs: str, init: str = "", variants: str = "[]", params: str = "q, k, v"
) -> str:
    """A task whose ``__init__`` runs the statements ``init`` (buffers, parameters) and whose
    forward(``params``) runs the statements ``forward`` on ``inputs`` (``math`` imported)."""
    init_lines = "\n".join(f"        {line}" for line in init.splitlines()) or "        pass"
    forward_lines = "\n".join(f"        {line}" for line in forward.splitlines())
    return f"""
import math


class Model(nn.Module):
    def __init__(self):
        super().__init__()
{init_lines}

    def forward(self, {params}):
{forward_lines}


def get_inputs():
    return [{inputs}]


def get_input_variants():
    return {variants}


def get_init_inputs():
    return []
"""


def scan_task(expr: str, extra_arg: str, inputs: str, variant: str = "") -> str:
    """A task returning ``expr`` of ``x`` (and ``extra_arg``, e.g. ``", mask"``) on ``inputs``,
    with ``variant`` (an input list's items) as a second input set when given."""
    variants = f"[[{variant}]]" if variant else "[]"
    return forward_task(f"return {expr}", inputs, variants, f"x{extra_arg}")


def load_design(tmp: Path, body: str, skill: str, params: dict[str, int]) -> tuple[Any, Path]:
    """(the emitted ModelNew's module, the task's path) for the first ranked design of the task
    ``body`` holding ``skill``, with ``params``; the source is written to a file, from which
    ``@triton.jit`` reads it (for runs on a GPU, without the interpreter)."""

    from kernelwright.design.emit import emit

    path = write_task(tmp, body)
    part, designs = designs_for(path)
    (design,) = [d for d in designs if skill in d.skills][:1]
    source = emit(part, with_params(design, params), path.read_text(), task_name="t", size="small")
    return import_source(tmp / "candidate.py", source), path


def import_source(file: Path, source: str) -> Any:
    """``source`` written to ``file`` and imported as a module of its own (``@triton.jit``
    reads a kernel's source from its file)."""
    import importlib.util

    file.write_text(source)
    spec = importlib.util.spec_from_file_location(f"candidate_{id(file)}", file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_candidate(source: str) -> Any:
    """An emitted ModelNew file as a module whose functions have their source text (in
    ``linecache`` under a name of their own), as a file's have in the harness: the interpreter
    runs a jitted function's source text where it has it, and knows kernelwright's own combine
    functions by it (``evaluate.interpreter``)."""
    import linecache

    name = f"<candidate {next(_LOADED)}>"
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    module = types.ModuleType("candidate")
    exec(compile(source, name, "exec"), module.__dict__)
    return module


_LOADED = itertools.count()


# Captured graphs (as their dicts) by the text of the task file: many checks send one task body
# with other params, dtypes or policies, and capturing it again (torch.export at dynamic shapes)
# costs about a second each time. What is kept is plain data; each caller gets its own graph.
_CAPTURED: dict[str, dict[str, Any]] = {}


def captured(path: Path) -> Any:
    """The task at ``path`` captured at its small size (a fresh OpGraph, shared by no caller):
    a capture depends on the task's text alone (its seed is fixed), so a text seen before in
    this process is rebuilt from its dict instead of traced again."""
    from kernelwright.design.capture import capture_path
    from kernelwright.design.graph import graph_from_dict

    text = path.read_text()
    if text not in _CAPTURED:
        _CAPTURED[text] = capture_path(path, "small").to_dict()
    return graph_from_dict(_CAPTURED[text])


@functools.cache
def _library() -> Any:
    """The built-in skills, read once a process (``SkillLibrary.builtin()`` looks for installed
    skill packages each call)."""
    from kernelwright.skills.library import SkillLibrary

    return SkillLibrary.builtin()


def designs_for(path: Path) -> tuple[Any, list[Any]]:
    """(partition, ranked designs) of a task at its small size, captured in this process and
    rewritten, lowered and fused as ``plan_task`` does; only designs with a kernel of ours for
    every group a template serves (these checks test the templates, not PyTorch's kernels of
    the designs that leave a product group to it)."""
    from kernelwright.design.fusion import fuse
    from kernelwright.design.lower import lower
    from kernelwright.design.recognise_attention import recognise_attention
    from kernelwright.design.structures import group_options, rank_designs

    library = _library()
    part = fuse(lower(recognise_attention(captured(path))))
    groups = [group_options(part, g, library) for g in part.fused]
    served = sum(1 for g in groups if g.options)
    return part, [d for d in rank_designs(groups, 20) if len(d.choices) == served]


def with_params(design: Any, params: dict[str, int]) -> Any:
    from kernelwright.design.choices import Design

    return Design(
        tuple(c.with_params({**c.params, **params}) for c in design.choices), design.stage
    )


def precision_rule(lines: str, allow_tf32: bool) -> tuple[str, str]:
    """(DOT_PRECISION, QK_PRECISION) as the emitted ``lines`` set them for fp32 operands when the
    caller does or does not allow TF32 for matrix products (the flag is restored)."""
    import torch

    from kernelwright.design.families.gemm.helpers import PY_HELPERS

    scope: dict[str, Any] = {"torch": torch, "q": torch.empty(2, dtype=torch.float32)}
    exec(PY_HELPERS["_dot_precision"], scope)
    allowed = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = allow_tf32
        exec(lines, scope)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allowed
    return scope["DOT_PRECISION"], scope["QK_PRECISION"]


def _bool() -> Any:
    import torch

    return torch.bool


class _Launches:
    """A ``@triton.jit`` kernel that records its name each time it is launched, and its name
    with ``+causal`` where it is launched with ``CAUSAL=True`` or with a causal flag (the first
    0-dim boolean tensor argument: a mask's, decided on the device) holding True, then
    ``+exact`` where the second such flag (the mask is the whole lower triangle) holds True;
    ``keys``: launch arguments recorded after the name (``name BLOCK_N=256``)."""

    def __init__(self, kernel: Any, name: str, record: list[str], keys: Iterable[str]) -> None:
        self.kernel, self.name, self.record, self.keys = kernel, name, record, tuple(keys)

    def __getitem__(self, grid: Any) -> Any:
        launch = self.kernel[grid]

        def run(*args: Any, **kwargs: Any) -> Any:
            flags = [a for a in args if getattr(a, "dtype", None) is _bool() and a.dim() == 0]
            causal = kwargs.get("CAUSAL") is True or any(bool(f) for f in flags[:1])
            name = self.name + ("+causal" if causal else "")
            name += "+exact" if len(flags) > 1 and bool(flags[1]) else ""
            name += "".join(f" {k}={kwargs[k]}" for k in self.keys if k in kwargs)
            self.record.append(name)
            return launch(*args, **kwargs)

        return run


def compare(
    path: Path,
    source: str,
    inputs: Iterable[list[Any]] | None,
    dtype: Any,
    tol: float,
    launched: list[str] | None = None,
    reference: Any = None,
    keys: Iterable[str] = (),
) -> None:
    """Run the emitted ModelNew and the reference on the task's inputs and variants
    (``launched``: collects the name of every kernel launched, in order; ``reference``: the
    dtype the reference runs in, float64 say, its results compared after a cast)."""
    import torch

    from kernelwright.task.module import import_task_module

    task = import_task_module(path, "small")
    module = load_candidate(source)
    if launched is not None:
        for name in [n for n in vars(module) if n.endswith("_kernel")]:
            setattr(module, name, _Launches(getattr(module, name), name, launched, keys))
    sets = list(inputs) if inputs is not None else [task.get_inputs()]
    if inputs is None and hasattr(task, "get_input_variants"):
        sets += list(task.get_input_variants())
    init = task.get_init_inputs() if hasattr(task, "get_init_inputs") else []
    for k, xs in enumerate(sets):
        if dtype is not None:
            xs = [
                x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                for x in xs
            ]
        torch.manual_seed(3)
        ref = task.Model(*init).eval()
        torch.manual_seed(3)
        new = module.ModelNew(*init).eval()
        if dtype is not None:
            ref, new = ref.to(dtype), new.to(dtype)
        ref_xs = xs
        if reference is not None:
            ref = ref.to(reference)
            ref_xs = [
                x.to(reference) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                for x in xs
            ]
        with torch.no_grad():
            want = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in ref_xs])
            got = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in xs])
        want = list(want) if isinstance(want, tuple | list) else [want]
        got = list(got) if isinstance(got, tuple | list) else [got]
        assert len(want) == len(got), f"set {k}: {len(got)} outputs, expected {len(want)}"
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            assert g.shape == w.shape, (
                f"set {k} output {i}: shape {tuple(g.shape)} != {tuple(w.shape)}"
            )
            if reference is None:
                assert g.dtype == w.dtype, f"set {k} output {i}: dtype {g.dtype} != {w.dtype}"
            if w.is_floating_point():
                ok = torch.allclose(g.float(), w.float(), atol=tol, rtol=tol, equal_nan=True)
                err = (g.float() - w.float()).abs().max().item() if w.numel() else 0.0
                assert ok, f"set {k} output {i}: max abs error {err:.3g}"
            else:
                assert torch.equal(g, w), f"set {k} output {i}: integer results differ"
        # a tensor the forward leaves on the model as a plain attribute (a hidden state) is
        # part of what it computes
        for name, w in vars(ref).items():
            if isinstance(w, torch.Tensor):
                g = getattr(new, name, None)
                assert isinstance(g, torch.Tensor), f"set {k}: ModelNew lacks attribute {name}"
                assert g.shape == w.shape and torch.allclose(
                    g.float(), w.float(), atol=tol, rtol=tol, equal_nan=True
                ), f"set {k}: attribute {name} differs after the call"


def check(request: dict[str, Any]) -> dict[str, Any]:
    """Emit every ranked design holding all requested skills and compare each with PyTorch."""
    import torch

    from kernelwright.design.emit import emit

    with tempfile.TemporaryDirectory() as tmp:
        path = write_task(Path(tmp), request["body"])
        part, designs = designs_for(path)
        skills = request.get("skills") or []
        chosen = [d for d in designs if all(s in d.skills for s in skills)]
        if len(chosen) < int(request.get("expect", 1)):
            return {
                "error": f"{len(chosen)} designs hold {skills}; "
                f"designs: {[d.skills for d in designs]}"
            }
        inputs = eval(request["inputs"], {"torch": torch}) if request.get("inputs") else None
        dtype = getattr(torch, request["dtype"]) if request.get("dtype") else None
        sources, checked, launches = [], [], []
        # the tf32 policy allows TF32 for matrix products (the wrappers read the flag per call)
        torch.backends.cuda.matmul.allow_tf32 = request.get("policy") == "tf32"
        torch.backends.cudnn.allow_tf32 = request.get("policy") == "tf32"  # convolutions'
        ref_dtype = getattr(torch, request["reference"]) if request.get("reference") else None
        for d in chosen:
            src = emit(
                part,
                with_params(d, request.get("params") or {}),
                path.read_text(),
                task_name="t",
                size="small",
            )
            if request.get("index_64"):  # every launch indexes in 64 bits, as past 2**31
                forced = src.replace("INDEX_64 = (", "INDEX_64 = True or (")
                if forced == src:
                    return {"error": f"design {d.skills}: no launch takes INDEX_64", "source": src}
                src = forced
            launched: list[str] = []
            try:
                tol = float(request.get("tol", 1e-4))
                keys = request.get("record") or ()
                compare(path, src, inputs, dtype, tol, launched, ref_dtype, keys)
            except AssertionError as exc:
                return {"error": f"design {d.skills}: {exc}", "source": src}
            sources.append(src)
            checked.append(d.skills)
            launches.append(launched)
        return {"sources": sources, "checked": checked, "launched": launches}


def outputs(request: dict[str, Any]) -> dict[str, Any]:
    """The outputs of the first ranked design holding ``request["skill"]`` on the request's
    inputs (see the module docstring); floats as their int32 bits, so that -0.0 and NaN
    payloads survive JSON."""
    import torch

    from kernelwright.design.emit import emit

    with tempfile.TemporaryDirectory() as tmp:
        path = write_task(Path(tmp), request["body"])
        part, designs = designs_for(path)
        chosen = [d for d in designs if request["skill"] in d.skills]
        if not chosen:
            return {
                "error": f"no design holds {request['skill']}; "
                f"designs: {[d.skills for d in designs]}"
            }
        params = request.get("params") or {}
        src = emit(
            part, with_params(chosen[0], params), path.read_text(), task_name="t", size="small"
        )
    module = load_candidate(src)
    model = module.ModelNew()
    found: dict[str, list[Any]] = {}
    for name, shape, bits in request["inputs"]:
        x = torch.tensor(bits, dtype=torch.int32).view(torch.float32).reshape(shape)
        with torch.no_grad():
            got = model(x)
        found[name] = [
            (t.contiguous().view(torch.int32) if t.is_floating_point() else t).tolist() for t in got
        ]
    return {"source": src, "outputs": found}


REFUSED = "this ModelNew was generated for"  # what an emitted file says of a model it was not


def resized(request: dict[str, Any]) -> dict[str, Any]:
    """The first ``top`` ranked designs of the task file at ``path``, emitted at its small size,
    run with each of its small size's constants moved (by +3, and to half + 1) and compared
    with the task's model at that size; a design may refuse a size (its ``ValueError`` naming
    what it was generated for), never compute something else.

    -> {"failures": ["design [skills], name = value: what went wrong", ...], "runs": n}
    """
    import ast

    import torch

    from kernelwright.design.emit import emit
    from kernelwright.task.module import _small_overrides, import_task_module

    path = Path(request["path"])
    text = path.read_text()
    small = _small_overrides(ast.parse(text))
    moves = [
        (name, value)
        for name, size in small.items()
        if isinstance(size, int) and not isinstance(size, bool) and size >= 2
        for value in sorted({size + 3, size // 2 + 1} - {size})
    ]
    part, designs = designs_for(path)
    failures: list[str] = []
    runs = 0
    for design in designs[: int(request.get("top", 2))]:
        source = emit(part, design, text, task_name="t", size="small")
        module = load_candidate(source)
        for name, value in moves:
            task = import_task_module(path, "small")
            setattr(task, name, value)
            torch.manual_seed(5)
            try:  # the task's own model must run at that size, or there is nothing to compare
                inputs = list(task.get_inputs())
                init = list(task.get_init_inputs()) if hasattr(task, "get_init_inputs") else []
                with torch.no_grad():
                    torch.manual_seed(3)
                    want = task.Model(*init).eval()(*inputs)
            except Exception:
                continue
            runs += 1
            label = f"design {list(design.skills)}, {name} = {value}"
            try:
                torch.manual_seed(3)
                with torch.no_grad():
                    got = module.ModelNew(*init).eval()(*inputs)
            except ValueError as exc:
                if not str(exc).startswith(REFUSED):
                    failures.append(f"{label}: ValueError: {exc}")
                continue
            except Exception as exc:
                failures.append(f"{label}: {type(exc).__name__}: {exc}")
                continue
            wants = list(want) if isinstance(want, tuple | list) else [want]
            gots = list(got) if isinstance(got, tuple | list) else [got]
            for i, (w, g) in enumerate(zip(wants, gots, strict=True)):
                if g.shape != w.shape:
                    failures.append(f"{label}: output {i} of shape {tuple(g.shape)}, "
                                    f"not {tuple(w.shape)}")
                elif w.is_floating_point() and not torch.allclose(
                        g.float(), w.float(), atol=1e-3, rtol=1e-3, equal_nan=True):
                    err = (g.float() - w.float()).abs().max().item()
                    failures.append(f"{label}: output {i} off by up to {err:.3g}")
                elif not w.is_floating_point() and not torch.equal(g, w):
                    failures.append(f"{label}: output {i}'s integers differ")
    return {"failures": failures, "runs": runs}


def main() -> None:
    """Serve requests from stdin until it closes."""
    from kernelwright.evaluate.interpreter import prepare_interpreter

    prepare_interpreter()  # as the harness's candidate processes on the CPU
    ops = {"outputs": outputs, "resized": resized}
    for line in sys.stdin:
        try:
            request = json.loads(line)
            reply = ops.get(request.get("op", ""), check)(request)
        except Exception as exc:  # report, never die: the next test still gets an answer
            reply = {
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=6),
            }
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")
    main()
