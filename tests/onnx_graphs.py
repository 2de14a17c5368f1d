"""ONNX graphs built with onnx.helper for the importer's tests: a LeNet-class
CNN (Conv + BatchNormalization + Relu, MaxPool, Conv, MaxPool then Relu,
Flatten, Gemm, Gemm), an MLP with tanh (MatMul + Add, Gemm with transB),
and small graphs for the error cases.  Weights are seeded random values of
a trained network's size (He-scaled), so the activations stay in range."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _init(name, arr):
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


def make_model(nodes, inits, in_name, in_shape, out_name, out_shape, opset=OPSET):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(in_name, TensorProto.FLOAT, in_shape)],
                              [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, out_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _he(rng, shape, fan_in):
    return rng.normal(0, np.sqrt(2.0 / fan_in), shape)


def lenet(seed=0):
    """[N, 1, 16, 16] -> conv 5x5 -> 6 (+BN, ReLU), maxpool 2, conv 3x3 6 -> 12 pad 1,
    maxpool 2 then ReLU, Flatten, Gemm 108 -> 30 + ReLU, Gemm 30 -> 10."""
    r = np.random.default_rng(seed)
    inits = [_init("w1", _he(r, (6, 1, 5, 5), 25)), _init("b1", r.normal(0, 0.1, 6)),
             _init("g1", r.uniform(0.5, 1.5, 6)), _init("be1", r.normal(0, 0.1, 6)),
             _init("m1", r.normal(0, 0.1, 6)), _init("v1", r.uniform(0.5, 1.5, 6)),
             _init("w2", _he(r, (12, 6, 3, 3), 54)), _init("b2", r.normal(0, 0.1, 12)),
             _init("w3", _he(r, (30, 108), 108)), _init("b3", r.normal(0, 0.1, 30)),
             _init("w4", _he(r, (10, 30), 30)), _init("b4", r.normal(0, 0.1, 10))]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[5, 5]),
             helper.make_node("BatchNormalization", ["c1", "g1", "be1", "m1", "v1"], ["n1"], name="bn1",
                              epsilon=1e-5),
             helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
             helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Relu", ["p2"], ["r2"], name="relu2"),
             helper.make_node("Flatten", ["r2"], ["f"], name="flatten", axis=1),
             helper.make_node("Gemm", ["f", "w3", "b3"], ["g3"], name="fc1", transB=1),
             helper.make_node("Relu", ["g3"], ["r3"], name="relu3"),
             helper.make_node("Gemm", ["r3", "w4", "b4"], ["y"], name="fc2", transB=1)]
    return make_model(nodes, inits, "x", ["N", 1, 16, 16], "y", ["N", 10])


def mlp_tanh(seed=1):
    """[N, 20] -> MatMul 20 -> 24 + Add, Tanh, Gemm 24 -> 5 (transB 0) + Tanh."""
    r = np.random.default_rng(seed)
    inits = [_init("w1", r.normal(0, 0.4, (20, 24))), _init("b1", r.normal(0, 0.2, 24)),
             _init("w2", r.normal(0, 0.4, (24, 5))), _init("b2", r.normal(0, 0.2, 5))]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
             helper.make_node("Add", ["h", "b1"], ["hb"], name="fc1_bias"),
             helper.make_node("Tanh", ["hb"], ["t1"], name="tanh1"),
             helper.make_node("Gemm", ["t1", "w2", "b2"], ["g2"], name="fc2"),
             helper.make_node("Tanh", ["g2"], ["y"], name="tanh2")]
    return make_model(nodes, inits, "x", ["N", 20], "y", ["N", 5])


def single(op, attrs=None, inputs=(), in_shape=("N", 3, 8, 8), out_shape=None, extra_inits=(), seed=2):
    """One node after a 3x3 conv 3 -> 8 (so that the node itself is what fails)."""
    r = np.random.default_rng(seed)
    inits = [_init("cw", r.normal(0, 0.3, (8, in_shape[1], 3, 3)))] + list(extra_inits)
    nodes = [helper.make_node("Conv", ["x", "cw"], ["c"], name="conv", kernel_shape=[3, 3]),
             helper.make_node(op, ["c", *inputs], ["y"], name="bad", **(attrs or {}))]
    return make_model(nodes, inits, "x", list(in_shape), "y", out_shape)
