"""The arithmetic a network's run costs, counted from its ONNX graph, and what that takes on a Pi 4.

A time measured on a PC and multiplied by a CPU ratio says little about a network: the PC's
wide vector units do many multiply-adds per cycle where a Cortex-A72 does few. What a run
costs on any CPU is its count of multiply-adds; ``multiply_adds`` counts them for an input of a
given shape (every convolution and fully connected layer; what else a graph holds, ReLU,
pooling, costs a small part of it), and ``NetworkRuns`` counts those of every run onnxruntime
makes while it is open, with the time they took here.

The Pi 4's rate (``PI4_MULTIPLY_ADDS_PER_S``): a Cortex-A72 core issues at most one 128-bit
multiply-accumulate (four float32) a cycle, its two FP pipes taking one such instruction
together (as LLVM's scheduling model for the A57/A72 has it), so 6 G a second at 1.5 GHz: 12 G
for the two threads our sessions run (``net.THREADS``). A published CPU timing of MobileNet v1
(569 M multiply-adds, TensorFlow Lite; the threads used not stated) on a Pi 4, 87 ms, is 6.5 G
a second, about half that peak. Half the peak of two cores, 6 G a second, is taken; the peak
(half the time) is the least the networks could take on two cores. It is an estimate, not a
measurement: run the benchmark on a Pi to replace it.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache
from pathlib import Path

PI4_MULTIPLY_ADDS_PER_S = 6e9  # two A72 cores at half their peak (see the docstring)
PI4_PEAK_MULTIPLY_ADDS_PER_S = 12e9  # two A72 cores, one 4-wide multiply-accumulate a cycle each


@lru_cache(maxsize=64)
def multiply_adds(model: Path, input_shape: tuple[int, ...]) -> int:
    """Multiply-adds of one run of the ONNX ``model`` on an input of ``input_shape``: its
    Conv, Gemm and MatMul nodes', with every tensor's shape inferred from the input's."""
    import onnx
    from onnx import shape_inference

    graph_model = onnx.load(str(model))
    graph = graph_model.graph
    initialisers = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initialisers]
    if len(inputs) != 1:
        raise ValueError(f"{model}: {len(inputs)} inputs; one is counted")
    dims = inputs[0].type.tensor_type.shape.dim
    if len(dims) != len(input_shape):
        raise ValueError(f"{model}: input of rank {len(dims)}, shape {input_shape} given")
    for dim, size in zip(dims, input_shape, strict=True):
        dim.ClearField("dim_param")
        dim.dim_value = size
    inferred = shape_inference.infer_shapes(graph_model, strict_mode=True).graph
    shapes: dict[str, tuple[int, ...]] = {}
    for value in (*inferred.input, *inferred.value_info, *inferred.output):
        shapes[value.name] = tuple(d.dim_value for d in value.type.tensor_type.shape.dim)
    for tensor in inferred.initializer:
        shapes[tensor.name] = tuple(tensor.dims)

    def known(name: str) -> tuple[int, ...]:
        shape = shapes.get(name, ())
        if not shape or 0 in shape:  # a size shape inference left unknown would count as nothing
            raise ValueError(f"{model}: the shape of {name!r} is not known for an input of {input_shape}")
        return shape

    total = 0
    for node in inferred.node:
        if node.op_type == "Conv":
            # each output value: one multiply-add per weight of its group's kernel
            weight = known(node.input[1])
            total += math.prod(known(node.output[0])) * math.prod(weight[1:])
        elif node.op_type in ("Gemm", "MatMul"):
            # each output value: one multiply-add per element of the shared dimension
            a = known(node.input[0])
            transposed = any(att.name == "transA" and att.i for att in node.attribute)
            shared = a[-2] if transposed else a[-1]
            total += math.prod(known(node.output[0])) * shared
    return total


class NetworkRuns:
    """While open, every onnxruntime run is counted: its multiply-adds (``multiply_adds`` of
    the session's model at the shape of its input) and the time it took here, in all and per
    model file (``by_network``: its runs and multiply-adds), which says which network a reader's
    time goes to. Nothing a reader does is changed; ``InferenceSession.run`` is wrapped and put
    back on close."""

    def __init__(self) -> None:
        self.multiply_adds = 0
        self.seconds = 0.0
        self.runs = 0
        self.by_network: dict[str, tuple[int, int]] = {}
        self._own: object = None  # the class's own ``run``, if it had one (else it inherits it)

    def __enter__(self) -> NetworkRuns:
        from onnxruntime import InferenceSession

        original = InferenceSession.run
        counter = self

        def counted(session, output_names, input_feed, run_options=None):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            result = original(session, output_names, input_feed, run_options)
            # counted once it ran: a run that failed raised its own error, uncounted
            counter.seconds += time.perf_counter() - start
            counter.runs += 1
            (value,) = input_feed.values()  # our networks take one input
            model = Path(session._model_path)
            done = multiply_adds(model, tuple(value.shape))
            counter.multiply_adds += done
            runs, before = counter.by_network.get(model.name, (0, 0))
            counter.by_network[model.name] = (runs + 1, before + done)
            return result

        self._own = InferenceSession.__dict__.get("run")
        InferenceSession.run = counted
        return self

    def __exit__(self, *exc: object) -> None:
        from onnxruntime import InferenceSession

        if self._own is None:
            del InferenceSession.run  # inherited again, as before
        else:
            InferenceSession.run = self._own

    def reset(self) -> None:
        self.multiply_adds, self.seconds, self.runs = 0, 0.0, 0
        self.by_network = {}


def pi4_estimate_ms(here_ms: float, network_ms: float, multiply_adds_done: float, cpu_ratio: float,
                    rate: float = PI4_MULTIPLY_ADDS_PER_S) -> float:
    """A Pi 4's time for work that took ``here_ms`` here, ``network_ms`` of it in the networks
    (``multiply_adds_done`` of arithmetic): the rest scaled by the CPU ratio, the networks'
    arithmetic at the Pi 4's ``rate``."""
    return max(0.0, here_ms - network_ms) * cpu_ratio + 1000 * multiply_adds_done / rate
