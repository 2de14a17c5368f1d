"""Memory layouts of model tensors: YAML dimensions <-> memory order.

The instruction document names two layouts and says that "based on the
dimensionality and layout, certain dimensions shall be divisible by the SIMD
vector width".  tensorsoc fixes them so that lanes always run along the
contiguous *feature* dimension (the ``aligned`` one), which is what the PCORE
kernels need (docs/pcore.md):

* ``row_first``: C order, the **last** dimension is contiguous and aligned
  (linear weights ``(n_out, n_in)``: one row of ``n_in`` contiguous; conv
  weights ``(kh, kw, c_in, c_out)``: ``c_out`` contiguous).
* ``col_first`` 2D ``(n, b)``: column-major, dimension 0 contiguous and
  aligned (each column is one feature vector).
* ``col_first`` 3D ``(h, w, c)``: the channel vector of each pixel contiguous,
  pixels row by row; ``c`` aligned.  Flattening to ``(h*w*c, 1)`` (TENS_LIN)
  therefore moves no data.
* ``col_first`` 4D ``(h, w, c, n)``: ``n`` such feature maps one after the
  other; ``c`` aligned.
"""

import numpy as np

from tensorsoc.spec.numbers import ELEMENT_BYTES  # noqa: F401 (every model tensor holds int16 Q.frac elements)

LAYOUTS = ("col_first", "row_first")


def aligned_dim(ndim, layout):
    if layout == "row_first":
        return ndim - 1
    return 0 if ndim == 2 else 2


def _col_perm(ndim):
    """Axis order (slowest first) of a col_first tensor in memory."""
    return {2: (1, 0), 3: (0, 1, 2), 4: (3, 0, 1, 2)}[ndim]


def to_memory(arr, layout):
    """Logical array (YAML dimensions) -> 1-D array in memory order."""
    arr = np.asarray(arr)
    if layout == "row_first":
        return arr.reshape(-1)
    return arr.transpose(_col_perm(arr.ndim)).reshape(-1)


def from_memory(flat, dims, layout):
    """1-D array in memory order -> logical array of shape ``dims``."""
    dims = tuple(dims)
    flat = np.asarray(flat)
    if layout == "row_first":
        return flat.reshape(dims)
    perm = _col_perm(len(dims))
    inv = np.argsort(perm)
    return flat.reshape(tuple(dims[p] for p in perm)).transpose(inv)


def host_mask(dims, layout, padding):
    """Boolean logical array: True for elements the host streams.  With
    stream padding ``p`` the last ``p`` lanes of the aligned dimension (which
    then equals VW) are not sent; they read as 0 on the device."""
    a = aligned_dim(len(dims), layout)
    idx = np.arange(dims[a]).reshape([-1 if i == a else 1 for i in range(len(dims))])
    return np.broadcast_to(idx < dims[a] - padding, dims)


def host_to_device(host, dims, layout, padding, fill=0):
    """Host-order values (memory order, padded lanes skipped) -> logical array."""
    mask = to_memory(host_mask(dims, layout, padding), layout)
    mem = np.full(mask.shape, fill, dtype=np.asarray(host).dtype)
    mem[mask] = host
    return from_memory(mem, dims, layout)


def device_to_host(arr, layout, padding):
    """Logical array -> host-order values (memory order, padded lanes dropped)."""
    mask = to_memory(host_mask(arr.shape, layout, padding), layout)
    return to_memory(arr, layout)[mask]


def _pack(items, total, tensor_of, offset_of, padding_of, values):
    buf = bytearray(total)
    for item in items:
        t = tensor_of(item)
        data = np.asarray(device_to_host(values[t], t.layout, padding_of(item)), dtype=np.int64)
        data = data.astype("<i2").tobytes()
        buf[offset_of(item):offset_of(item) + len(data)] = data
    return bytes(buf)


def host_input(model, values):
    """The WTensor bytes of ``model`` (sw.model.frontend.Model) whose input
    tensors hold ``values`` ({Tensor: logical array}): each H2C stream at its
    offset, padded lanes not sent, int16 little-endian."""
    return _pack(model.inputs, model.input_bytes, lambda op: op.h2c, lambda op: op.h2c_offset,
                 lambda op: op.h2c_padding, values)


def host_output(model, values):
    """The RTensor bytes of ``model`` whose output tensors hold ``values``."""
    return _pack(model.outputs, model.output_bytes, lambda op: op.c2h, lambda op: op.c2h_offset,
                 lambda op: op.c2h_padding, values)
