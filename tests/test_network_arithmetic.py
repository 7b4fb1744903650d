"""benchmarks/network_arithmetic.py: the multiply-adds of a network's run, counted from its graph,
and the Pi 4 estimate made of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from benchmarks.network_arithmetic import NetworkRuns, multiply_adds, pi4_estimate_ms  # noqa: E402
from bunco_pi.vision.face_reader import MODEL_PATH as FACES_PATH  # noqa: E402
from bunco_pi.vision.face_reader import shipped_face_reader  # noqa: E402
from bunco_pi.vision.net import FINDER_PATH, MODEL_PATH, NetDie, detect, read_net, shipped_finder  # noqa: E402


def _weights(name: str, shape: tuple[int, ...]) -> TensorProto:
    return numpy_helper.from_array(np.full(shape, 0.01, np.float32), name)


@pytest.fixture
def small_net(tmp_path: Path) -> Path:
    """A strided 3x3 convolution, a grouped 1x1 one, pooling and a fully connected layer."""
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1"], ["c1"], kernel_shape=[1, 1], group=2),
        helper.make_node("GlobalAveragePool", ["c1"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "w2", "b2"], ["g"], transB=1),
        helper.make_node("Transpose", ["g"], ["gt"], perm=[1, 0]),
        helper.make_node("Gemm", ["gt", "w3"], ["h"], transA=1),  # (5, n)' x (5, 6): n x 6
        helper.make_node("MatMul", ["h", "w4"], ["y"]),  # (n, 6) x (6, 7): n x 7
    ]
    graph = helper.make_graph(
        nodes, "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [_weights("w0", (8, 3, 3, 3)), _weights("b0", (8,)), _weights("w1", (4, 4, 1, 1)),
         _weights("w2", (5, 4)), _weights("b2", (5,)), _weights("w3", (5, 6)), _weights("w4", (6, 7))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "small.onnx"
    onnx.save(model, str(path))
    return path


def test_a_small_graph_is_counted_layer_by_layer(small_net: Path) -> None:
    # by hand, for 2 pictures of 10x12: the first convolution makes 2 x 8 x 5 x 6 values, each of
    # 3 x 3 x 3 products; the grouped one 2 x 4 x 5 x 6, each of 4 (its group's channels); the
    # fully connected layer 2 x 5, each of 4; the transposed product 2 x 6, each of 5; the last
    # 2 x 7, each of 6
    by_hand = 2 * 8 * 5 * 6 * 27 + 2 * 4 * 5 * 6 * 4 + 2 * 5 * 4 + 2 * 6 * 5 + 2 * 7 * 6
    assert multiply_adds(small_net, (2, 3, 10, 12)) == by_hand


def test_the_count_is_for_the_shape_given(small_net: Path) -> None:
    # one picture twice the side: the convolutions' values four times one picture's; the rest is
    # of the pooled picture, one picture's
    assert multiply_adds(small_net, (1, 3, 20, 24)) == (
        8 * 10 * 12 * 27 + 4 * 10 * 12 * 4 + 5 * 4 + 6 * 5 + 7 * 6)
    with pytest.raises(ValueError, match="rank"):
        multiply_adds(small_net, (3, 10, 12))


def test_the_shipped_network_is_counted_as_its_layers_make_it() -> None:
    # the training script's layers at 320x240, 3x3 each: 3 to 16 channels at full size, 16 to
    # 24 at half, 24 to 32 at half, 32 to 48 at a quarter, three 48 to 48 and the 48 to 9 answers
    full, half, quarter = 320 * 240, 160 * 120, 80 * 60
    by_layers = 9 * (full * 3 * 16 + half * 16 * 24 + half * 24 * 32 + quarter * 32 * 48
                     + 3 * quarter * 48 * 48) + quarter * 48 * 9
    assert by_layers == 599_270_400
    assert multiply_adds(MODEL_PATH, (1, 3, 240, 320)) == by_layers


@pytest.mark.parametrize("path", [MODEL_PATH, FINDER_PATH])
def test_the_dice_networks_cost_in_proportion_to_their_pixels(path: Path) -> None:
    # fully convolutional, every stride dividing the sides: four times the pixels, four times the work
    small = multiply_adds(path, (1, 3, 240, 320))
    assert multiply_adds(path, (1, 3, 480, 640)) == 4 * small
    # three colours in, at least a 3x3 convolution of them to each output: far from nothing
    assert small > 240 * 320 * 3 * 9


def test_the_face_reader_costs_the_same_for_each_crop() -> None:
    one = multiply_adds(FACES_PATH, (1, 3, 40, 40))
    assert one > 0
    assert multiply_adds(FACES_PATH, (6, 3, 40, 40)) == 6 * one


def test_every_run_of_a_reader_is_counted_and_run_is_put_back() -> None:
    before = ort.InferenceSession.run
    frame = np.zeros((480, 640, 3), np.uint8)
    with NetworkRuns() as runs:
        read_net(frame)
        read_net(frame)
    assert runs.runs == 2
    # the network sees a 640x480 frame at its working width, 320x240
    assert runs.multiply_adds == 2 * multiply_adds(MODEL_PATH, (1, 3, 240, 320))
    assert runs.seconds > 0
    assert ort.InferenceSession.run is before
    assert "run" not in ort.InferenceSession.__dict__ or before is ort.InferenceSession.__dict__["run"]
    runs.reset()
    assert (runs.runs, runs.multiply_adds, runs.seconds) == (0, 0, 0.0)


def test_each_network_s_runs_are_counted_apart() -> None:
    """Which network a reading's arithmetic goes to: the finder looking at the frame twice (at its
    scale and half of it) and the face reader reading two crops of each of its dice."""
    frame = np.zeros((480, 640, 3), np.uint8)
    faces = shipped_face_reader()
    with NetworkRuns() as runs:
        read_net(frame)
        detect(frame, shipped_finder(), zoom_out=True)
        dice = [NetDie((100.0, 100.0), 30.0, 0.9, 2, 0.9), NetDie((300.0, 200.0), 30.0, 0.9, 5, 0.9)]
        faces.read(frame, dice)
    whole = multiply_adds(FINDER_PATH, (1, 3, 240, 320)) + multiply_adds(FINDER_PATH, (1, 3, 120, 160))
    assert runs.by_network == {
        MODEL_PATH.name: (1, multiply_adds(MODEL_PATH, (1, 3, 240, 320))),
        FINDER_PATH.name: (2, whole),
        FACES_PATH.name: (1, multiply_adds(FACES_PATH, (4, 3, 40, 40))),
    }
    assert runs.multiply_adds == sum(done for _, done in runs.by_network.values())
    runs.reset()
    assert runs.by_network == {}


def test_run_is_put_back_when_the_reading_fails() -> None:
    before = ort.InferenceSession.run
    with pytest.raises(RuntimeError, match="dropped"), NetworkRuns() as runs:
        read_net(np.zeros((480, 640, 3), np.uint8))
        raise RuntimeError("the camera dropped out")
    assert runs.runs == 1
    assert ort.InferenceSession.run is before


def test_the_pi4_estimate_scales_the_rest_and_counts_the_networks_arithmetic() -> None:
    # 10 ms here, 4 of them in the networks (600 M multiply-adds): 6 ms x 5, and 600 M at 6 G/s
    assert pi4_estimate_ms(10.0, 4.0, 600e6, 5.0, rate=6e9) == pytest.approx(30.0 + 100.0)
    # a stage with no network is the CPU ratio alone
    assert pi4_estimate_ms(2.0, 0.0, 0.0, 5.0) == pytest.approx(10.0)
