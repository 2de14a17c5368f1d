"""Reference execution of the model compiler's accelerator programs.

Runs every layer program of sw/model/accel.py on the reference executor
(tensor_exec.py) with the PCORE ISS (verification/pcore/iss.py) for each
EXE, and compares each layer's result with the golden model (cnn.py): the
checker of the compiler, which is why it lives here and not beside it.
"""

import numpy as np

from tensorsoc.spec import tensor_isa as isa
from tensorsoc.sw.model import layout as L
from tensorsoc.sw.model.accel import DataBlob, plan
from tensorsoc.verification.golden import cnn
from tensorsoc.verification.golden.tensor_exec import Machine
from tensorsoc.verification.pcore.iss import PcoreISS


def reference_check(model, config, golden=None, arranged=True):
    """Run every layer program on the reference executor
    (verification/golden/tensor_exec.py) with the PCORE ISS for EXE_LOCKSTEP,
    each op on the golden model's values of its operands, and compare its
    result with the golden model.  Returns {layer: (program or reason, ok)}.
    ``arranged``: the programs get a DataBlob (as compiled images do); else
    they rearrange the weights from the tensors themselves."""

    golden = golden or cnn.run(model)
    vals = dict(golden.fixed)
    for t in model.tensors:
        if t.raw is not None and t not in vals:
            vals[t] = t.raw
    # A private DDR: every tensor at its own offset, the tanh table after them.
    offsets, pos = {}, 64
    for t in model.tensors:
        offsets[t] = pos
        pos += -(-t.nbytes // 64) * 64
    table_at = pos
    data = DataBlob(table_at + 2 * isa.SPU_LOOKUP_SIZE)
    progs = plan(model, config, lambda t: offsets[t], tanh_table_addr=table_at, data=data if arranged else None)
    ddr_bytes = data.base + len(data.bytes()) + 64
    results = {}
    compute = [op for op in model.ops if op.kind != "stream"]
    for (index, prog), op in zip(sorted(progs.items()), compute):
        if isinstance(prog, str):
            results[op.layer] = (prog, None)
            continue
        m = Machine.for_soc(config, ddr_bytes=ddr_bytes)
        iss = PcoreISS(config, [0] * prog.origin + prog.code)

        def kernel(mach, exe, iss=iss):
            iss.private[:] = mach.private
            iss.shared[:] = mach.shared
            iss.run(exe.func, process=exe.process)
            mach.private[:] = iss.private.astype(np.int16)
            mach.shared[:] = iss.shared.astype(np.int16)

        m.kernel = kernel
        for t in (op.a, op.b, op.bias if op.bias_en else None, op.batch if op.bn_en else None):
            if t is not None:
                m.ddr_write(offsets[t], L.to_memory(vals[t], t.layout))
        m.ddr_write(table_at, cnn.tanh_table(model.frac_bits))
        m.ddr[data.base:data.base + len(data.bytes())] = np.frombuffer(data.bytes(), dtype=np.uint8)
        m.run(prog.instrs)
        got = m.ddr_read(offsets[op.res], op.res.elements)
        want = L.to_memory(vals[op.res], op.res.layout)
        ok = m.errors == 0 and np.array_equal(got, want) and m.callbacks == [(op.layer, 0)]
        results[op.layer] = (prog, ok)
    return results
