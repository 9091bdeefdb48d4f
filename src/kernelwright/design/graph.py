"""The captured graph: a small IR of our own, made of frozen, JSON-ready records.

    OpGraph
      inputs    GraphInput(name, kind, target)      user inputs, parameters and buffers (FQNs)
      nodes     Node(name, kind, target, args, meta) core ATen calls, getitems and shape arithmetic
      outputs   Arg...                              what ``forward`` returns
      symbols   Symbol(name, input, dim, hint)      where each symbolic size comes from
      init      "[3, 12]"                           Model's construction arguments, as a
                                                    Python literal ("" when they are not one)
      held      (input, dim)...                     user-input dimensions whose captured size
                                                    the graph holds in a value (a float
                                                    computed from it)
      writes    "hidden"...                         attributes the forward writes: the last
                                                    outputs are their new values (an RNN's
                                                    hidden state kept on the module), the
                                                    others are returned

Shapes are symbolic (``torch.export`` with automatic dynamic dimensions) so a kernel's wrapper
can compute every size from the runtime tensors; each ``TensorMeta`` also keeps the concrete
sizes and strides seen at capture (``hint``, ``strides``) for the skills' preconditions and the
default parameters.

Arguments are plain values (``int``, ``float``, ``bool``, ``str``, ``None``), tuples of
arguments, or one of the small records below: a reference to another node (:class:`Ref`), a
dtype (:class:`DType`), or a value the IR carries but never interprets (:class:`Opaque`:
devices, layouts, memory formats).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference to the value of node (or graph input) ``name``."""

    name: str


@dataclass(frozen=True, slots=True)
class DType:
    """A torch dtype by name (``float32``, ``int64``, ``bool``)."""

    name: str


@dataclass(frozen=True, slots=True)
class Opaque:
    """A value carried but not interpreted (a device, a layout): printed back as ``text``."""

    text: str


Arg = Union[int, float, bool, str, None, Ref, DType, Opaque, tuple["Arg", ...]]  # noqa: UP007

FLOAT_DTYPES = frozenset({"float32", "float16", "bfloat16", "float64"})


@dataclass(frozen=True, slots=True)
class TensorMeta:
    """Shape, dtype and layout of one tensor value.

    Attributes:
        shape: each dimension as a Python expression over the size symbols (``"s77"``,
            ``"100"``, ``"((s53 - 1)//2) + 1"``).
        hint: the concrete sizes at capture.
        strides: the concrete strides at capture (elements).
        dtype: torch dtype name.
    """

    shape: tuple[str, ...]
    hint: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: str

    @property
    def rank(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def numel(self) -> int:
        """Elements at the capture size."""
        n = 1
        for s in self.hint:
            n *= s
        return n

    @property
    def is_float(self) -> bool:
        """A floating dtype."""
        return self.dtype in FLOAT_DTYPES


@dataclass(frozen=True, slots=True)
class Node:
    """One operation.

    Attributes:
        name: unique, a valid Python identifier (the FX node's name).
        kind: ``call`` (a tensor operator), ``getitem`` (one output of a multi-output call) or
            ``sym`` (integer/float shape arithmetic: ``sym_size``, ``operator.mul``...).
        target: ``aten.<op>.<overload>`` for calls, ``kw.<op>`` for kernelwright's own ops made
            by lowering, ``getitem``, or the Python operator for sym nodes (``operator.mul``).
        args, kwargs: the call's arguments.
        meta: the tensor outputs' metadata (several for multi-output calls; empty for sym).
        sym: for sym nodes, the symbolic value (``"s27 + 1"``).
        origin: what a rewrite built this node from, said in the rendered file (``""`` for a
            captured node).
    """

    name: str
    kind: str
    target: str
    args: tuple[Arg, ...] = ()
    kwargs: tuple[tuple[str, Arg], ...] = ()
    meta: tuple[TensorMeta, ...] = ()
    sym: str = ""
    origin: str = ""

    @property
    def out(self) -> TensorMeta:
        """The (first) tensor output's metadata."""
        if not self.meta:
            raise ValueError(f"node {self.name} ({self.target}) has no tensor output")
        return self.meta[0]

    @property
    def op(self) -> str:
        """The operator's short name: ``aten.mul.Tensor`` -> ``mul``; ``kw.scan`` -> ``scan``."""
        parts = self.target.split(".")
        return parts[1] if len(parts) >= 2 else self.target

    def kwarg(self, key: str, default: Any = None) -> Any:
        """A keyword argument's value."""
        for k, v in self.kwargs:
            if k == key:
                return v
        return default

    def refs(self) -> Iterator[str]:
        """Names of the nodes this node reads."""
        yield from _refs(self.args)
        yield from _refs(tuple(v for _, v in self.kwargs))


def _refs(args: tuple[Arg, ...]) -> Iterator[str]:
    for a in args:
        if isinstance(a, Ref):
            yield a.name
        elif isinstance(a, tuple):
            yield from _refs(a)


@dataclass(frozen=True, slots=True)
class GraphInput:
    """A graph input: a forward argument (``user``), a ``parameter``, a ``buffer``, or a tensor
    the model keeps as a plain attribute (``state``: ``self.hidden = torch.randn(...)`` in
    ``__init__``, which ``.cuda()`` does not move).

    ``target`` is the FQN of a parameter, buffer or attribute (``norm.weight``); ``position``
    the index of a user input among the forward's arguments; ``value``: a ``constant``'s
    elements, flat (a tensor the forward makes from literals, ``torch.tensor([1.0, 2.0])``),
    when it is small enough to write into the emitted file.
    """

    name: str
    kind: str
    meta: TensorMeta | None
    target: str = ""
    position: int = -1
    value: tuple[bool | int | float, ...] | None = None


@dataclass(frozen=True, slots=True)
class Symbol:
    """A symbolic size and the user input dimension it was read from."""

    name: str
    input: str
    dim: int
    hint: int


@dataclass(frozen=True, slots=True)
class OpGraph:
    """A captured forward pass: inputs, nodes in execution order, outputs."""

    inputs: tuple[GraphInput, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[Arg, ...]
    symbols: tuple[Symbol, ...] = ()
    size: str = "full"
    init: str = ""
    held: tuple[tuple[str, int], ...] = ()
    writes: tuple[str, ...] = ()
    _index: dict[str, Node] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._index.update({n.name: n for n in self.nodes})

    def node(self, name: str) -> Node:
        """The node called ``name`` (KeyError for inputs)."""
        return self._index[name]

    def has_node(self, name: str) -> bool:
        """Whether ``name`` is a node (not an input)."""
        return name in self._index

    def input(self, name: str) -> GraphInput:
        """The graph input called ``name``."""
        for i in self.inputs:
            if i.name == name:
                return i
        raise KeyError(name)

    def meta(self, name: str) -> TensorMeta:
        """The tensor metadata of an input or of a node's first output."""
        if name in self._index:
            return self._index[name].out
        m = self.input(name).meta
        if m is None:
            raise KeyError(f"{name} has no tensor metadata")
        return m

    def users(self) -> dict[str, list[str]]:
        """Node/input name -> names of the nodes that read it (outputs not included)."""
        users: dict[str, list[str]] = {i.name: [] for i in self.inputs}
        for n in self.nodes:
            users.setdefault(n.name, [])
            for r in n.refs():
                users.setdefault(r, []).append(n.name)
        return users

    @property
    def returned(self) -> tuple[Arg, ...]:
        """The outputs ``forward`` returns (the others are written to attributes)."""
        return self.outputs[: len(self.outputs) - len(self.writes)]

    @property
    def written(self) -> tuple[tuple[str, Arg], ...]:
        """(attribute FQN, its new value) for each attribute the forward writes."""
        return tuple(zip(self.writes, self.outputs[len(self.outputs) - len(self.writes):],
                         strict=True))

    def output_names(self) -> list[str]:
        """Names referenced by the outputs."""
        return list(_refs(self.outputs))

    def pruned(self) -> OpGraph:
        """A copy without the nodes nothing reads (outputs count as readers)."""
        live = set(self.output_names())
        kept: list[Node] = []
        for n in reversed(self.nodes):
            if n.name in live:
                kept.append(n)
                live.update(n.refs())
        return self.replace(tuple(reversed(kept)))

    @property
    def user_inputs(self) -> list[GraphInput]:
        """The forward's tensor arguments, in order."""
        return sorted((i for i in self.inputs if i.kind == "user"), key=lambda i: i.position)

    def replace(
        self,
        nodes: tuple[Node, ...] | None = None,
        outputs: tuple[Arg, ...] | None = None,
    ) -> OpGraph:
        """A copy with new nodes and/or outputs."""
        return OpGraph(
            self.inputs,
            self.nodes if nodes is None else nodes,
            self.outputs if outputs is None else outputs,
            self.symbols,
            self.size,
            self.init,
            self.held,
            self.writes,
        )

    def with_held(self, held: tuple[tuple[str, int], ...]) -> OpGraph:
        """A copy whose held dimensions are ``held``."""
        return OpGraph(
            self.inputs, self.nodes, self.outputs, self.symbols, self.size, self.init, held,
            self.writes,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (see :func:`graph_from_dict`); ``writes`` only where there are some,
        so a graph without them reads as before."""
        data: dict[str, Any] = {
            "inputs": [_input_dict(i) for i in self.inputs],
            "nodes": [_node_dict(n) for n in self.nodes],
            "outputs": [_arg_dict(a) for a in self.outputs],
            "symbols": [[s.name, s.input, s.dim, s.hint] for s in self.symbols],
            "size": self.size,
            "init": self.init,
            "held": [list(h) for h in self.held],
        }
        if self.writes:
            data["writes"] = list(self.writes)
        return data


def graph_from_dict(data: Mapping[str, Any]) -> OpGraph:
    """Rebuild an :class:`OpGraph` from :meth:`OpGraph.to_dict` output."""
    return OpGraph(
        inputs=tuple(
            GraphInput(d["name"], d["kind"], _meta(d["meta"]), d["target"], d["position"],
                       tuple(d["value"]) if d.get("value") is not None else None)
            for d in data["inputs"]
        ),
        nodes=tuple(
            Node(
                d["name"],
                d["kind"],
                d["target"],
                tuple(_arg(a) for a in d["args"]),
                tuple((k, _arg(v)) for k, v in d["kwargs"]),
                tuple(m for m in (_meta(x) for x in d["meta"]) if m is not None),
                d.get("sym", ""),
                d.get("origin", ""),
            )
            for d in data["nodes"]
        ),
        outputs=tuple(_arg(a) for a in data["outputs"]),
        symbols=tuple(Symbol(s[0], s[1], int(s[2]), int(s[3])) for s in data["symbols"]),
        size=data.get("size", "full"),
        init=data.get("init", ""),
        held=tuple((str(h[0]), int(h[1])) for h in data.get("held", ())),
        writes=tuple(str(w) for w in data.get("writes", ())),
    )


def _meta_dict(m: TensorMeta | None) -> Any:
    if m is None:
        return None
    return {
        "shape": list(m.shape),
        "hint": list(m.hint),
        "strides": list(m.strides),
        "dtype": m.dtype,
    }


def _meta(d: Any) -> TensorMeta | None:
    if d is None:
        return None
    return TensorMeta(
        tuple(d["shape"]), tuple(int(x) for x in d["hint"]), tuple(d["strides"]), d["dtype"]
    )


def _input_dict(i: GraphInput) -> dict[str, Any]:
    data = {
        "name": i.name,
        "kind": i.kind,
        "meta": _meta_dict(i.meta),
        "target": i.target,
        "position": i.position,
    }
    if i.value is not None:
        data["value"] = list(i.value)
    return data


def _node_dict(n: Node) -> dict[str, Any]:
    return {
        "name": n.name,
        "kind": n.kind,
        "target": n.target,
        "args": [_arg_dict(a) for a in n.args],
        "kwargs": [[k, _arg_dict(v)] for k, v in n.kwargs],
        "meta": [_meta_dict(m) for m in n.meta],
        "sym": n.sym,
        **({"origin": n.origin} if n.origin else {}),
    }


def _arg_dict(a: Arg) -> Any:
    if isinstance(a, Ref):
        return {"ref": a.name}
    if isinstance(a, DType):
        return {"dtype": a.name}
    if isinstance(a, Opaque):
        return {"opaque": a.text}
    if isinstance(a, tuple):
        return {"tuple": [_arg_dict(x) for x in a]}
    if isinstance(a, float) and (a != a or a in (float("inf"), float("-inf"))):
        return {"float": repr(a)}
    return a


def _arg(d: Any) -> Arg:
    if isinstance(d, dict):
        if "ref" in d:
            return Ref(d["ref"])
        if "dtype" in d:
            return DType(d["dtype"])
        if "opaque" in d:
            return Opaque(d["opaque"])
        if "tuple" in d:
            return tuple(_arg(x) for x in d["tuple"])
        if "float" in d:
            return float(d["float"])
    return d  # type: ignore[no-any-return]
