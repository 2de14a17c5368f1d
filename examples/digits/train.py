"""Train the digits CNN in numpy and export it as ONNX (development only).

    .venv/bin/pip install -e '.[dev]'        # scikit-learn, for its bundled data set
    .venv/bin/python examples/digits/train.py

scikit-learn's bundled 8x8 handwritten digits (1,797 images, 10 classes),
pixel values 0..16 scaled to 0..1, split 80/20 (stratified, seed 0).  The
network, trained with plain numpy (forward and backward written out, Adam):

    [N, 1, 8, 8] -> Conv 3x3, 1 -> 8, pad 1, ReLU -> MaxPool 2x2
                 -> Flatten (128) -> Gemm 128 -> 32, ReLU -> Gemm 32 -> 10

Writes, beside this file: digits_cnn.onnx, test_x.npy / test_y.npy (the
held-out split, [360, 1, 8, 8] float32 and [360] int64) and calib_x.npy
(256 training images for `tsoc model import --calibrate`).  These are
committed: running the example needs neither this script nor scikit-learn.
"""

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 0
EPOCHS = 40
BATCH = 32
LR = 3e-3


def load_split():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]           # [N, 1, 8, 8]
    return train_test_split(x, d.target.astype(np.int64), test_size=0.2, stratify=d.target, random_state=SEED)


def patches(x):
    """im2col of [N, 1, 8, 8] for a 3x3 window, pad 1: [N, 64, 9]."""
    n = x.shape[0]
    xp = np.pad(x[:, 0], ((0, 0), (1, 1), (1, 1)))
    cols = [xp[:, dy:dy + 8, dx:dx + 8] for dy in range(3) for dx in range(3)]
    return np.stack(cols, axis=-1).reshape(n, 64, 9)


class Net:
    def __init__(self, rng):
        self.p = {"wc": rng.normal(0, np.sqrt(2 / 9), (8, 9)), "bc": np.zeros(8),
                  "w1": rng.normal(0, np.sqrt(2 / 128), (32, 128)), "b1": np.zeros(32),
                  "w2": rng.normal(0, np.sqrt(2 / 32), (10, 32)), "b2": np.zeros(10)}

    def forward(self, x):
        p, c = self.p, {}
        c["pt"] = patches(x)
        z = c["pt"] @ p["wc"].T + p["bc"]                         # [N, 64, 8]
        c["zc"] = z
        a = np.maximum(z, 0).reshape(-1, 8, 8, 8).transpose(0, 3, 1, 2)   # NCHW [N, 8, 8, 8]
        blocks = a.reshape(-1, 8, 4, 2, 4, 2)
        pooled = blocks.max(axis=(3, 5))                          # [N, 8, 4, 4]
        c["mask"] = blocks == pooled[:, :, :, None, :, None]
        c["f"] = pooled.reshape(len(x), -1)                       # C-H-W flatten, as ONNX's Flatten
        c["z1"] = c["f"] @ p["w1"].T + p["b1"]
        c["h1"] = np.maximum(c["z1"], 0)
        return c["h1"] @ p["w2"].T + p["b2"], c

    def backward(self, c, dlogits):
        p, g = self.p, {}
        g["w2"], g["b2"] = dlogits.T @ c["h1"], dlogits.sum(0)
        dz1 = (dlogits @ p["w2"]) * (c["z1"] > 0)
        g["w1"], g["b1"] = dz1.T @ c["f"], dz1.sum(0)
        dpool = (dz1 @ p["w1"]).reshape(-1, 8, 4, 4)
        da = (c["mask"] * dpool[:, :, :, None, :, None]).reshape(-1, 8, 8, 8)   # ties share the gradient
        dz = da.transpose(0, 2, 3, 1).reshape(-1, 64, 8) * (c["zc"] > 0)
        g["wc"] = np.einsum("nkc,nkp->cp", dz, c["pt"])
        g["bc"] = dz.sum((0, 1))
        return g


def train(xtr, ytr, rng):
    net = Net(rng)
    m = {k: np.zeros_like(v) for k, v in net.p.items()}
    v = {k: np.zeros_like(v) for k, v in net.p.items()}
    step = 0
    for epoch in range(EPOCHS):
        order = rng.permutation(len(xtr))
        for s in range(0, len(xtr), BATCH):
            idx = order[s:s + BATCH]
            logits, cache = net.forward(xtr[idx])
            e = np.exp(logits - logits.max(1, keepdims=True))
            prob = e / e.sum(1, keepdims=True)
            prob[np.arange(len(idx)), ytr[idx]] -= 1
            grads = net.backward(cache, prob / len(idx))
            step += 1
            for k, gk in grads.items():
                m[k] = 0.9 * m[k] + 0.1 * gk
                v[k] = 0.999 * v[k] + 0.001 * gk ** 2
                net.p[k] -= LR * (m[k] / (1 - 0.9 ** step)) / (np.sqrt(v[k] / (1 - 0.999 ** step)) + 1e-8)
    return net


def export(net, path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    p = net.p

    def init(name, arr):
        return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)
    inits = [init("conv_w", p["wc"].reshape(8, 1, 3, 3)), init("conv_b", p["bc"]),
             init("fc1_w", p["w1"]), init("fc1_b", p["b1"]), init("fc2_w", p["w2"]), init("fc2_b", p["b2"])]
    nodes = [helper.make_node("Conv", ["image", "conv_w", "conv_b"], ["conv"], name="conv", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv"], ["conv_relu"], name="conv_relu"),
             helper.make_node("MaxPool", ["conv_relu"], ["pool"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1),
             helper.make_node("Gemm", ["flat", "fc1_w", "fc1_b"], ["fc1"], name="fc1", transB=1),
             helper.make_node("Relu", ["fc1"], ["fc1_relu"], name="fc1_relu"),
             helper.make_node("Gemm", ["fc1_relu", "fc2_w", "fc2_b"], ["scores"], name="fc2", transB=1)]
    graph = helper.make_graph(nodes, "digits_cnn",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 1, 8, 8])],
                              [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="tensorsoc examples/digits/train.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def main():
    rng = np.random.default_rng(SEED)
    xtr, xte, ytr, yte = load_split()
    t0 = time.perf_counter()
    net = train(xtr, ytr, rng)
    seconds = time.perf_counter() - t0
    acc = {name: float(np.mean(net.forward(x)[0].argmax(1) == y)) for name, x, y in
           (("train", xtr, ytr), ("test", xte, yte))}
    export(net, HERE / "digits_cnn.onnx")
    np.save(HERE / "test_x.npy", xte.astype(np.float32))
    np.save(HERE / "test_y.npy", yte)
    np.save(HERE / "calib_x.npy", xtr[:256].astype(np.float32))
    print(f"trained in {seconds:.1f} s ({EPOCHS} epochs of {len(xtr)} images): train accuracy "
          f"{100 * acc['train']:.2f}%, test {100 * acc['test']:.2f}% ({len(xte)} images)")
    print(f"wrote {HERE / 'digits_cnn.onnx'}, test_x.npy, test_y.npy, calib_x.npy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
