"""Triton equivalents of the pallasc examples (examples/*/kernel.mlir).

Each kernel is written the way Pallas' own Triton lowering
(jax/_src/pallas/triton/lowering.py) maps the Pallas kernel onto Triton:

- a block operand is a pointer plus offsets computed from the program ids
  (`start = index * block` per blocked dimension, row-major strides of the
  whole array), loads and stores are `tt.load` / `tt.store` with the kernel's
  own masks only (Pallas adds none for the array edge);
- `jnp.exp` / `lax.rsqrt` on f32 are the libdevice calls `__nv_expf` /
  `__nv_rsqrtf` (Pallas' dispatch tables), f32 division is `arith.divf`
  (Triton: `div.full.f32`), `jnp.maximum` and max-reductions are
  `arith.maxnumf` (tl.maximum, tl.max);
- `pl.dot` is `tt.dot` with an f32 accumulator (bf16/f16 operands: no tf32
  question), an accumulator operand folded in as Triton's combine pass does;
- `lax.fori_loop` is an `scf.for` (Triton pipelines it with num_stages);
- FP contraction is Triton's default (enabled; TRITON_DEFAULT_FP_FUSION=1).

Tile sizes, num_warps and num_stages are the examples' spec.json values
(Pallas' Triton defaults, num_warps 4 and num_stages 3, where a spec gives
none). Pallas' Triton backend has no scratch buffers and no scalar prefetch:
the matmul keeps its accumulator in registers across an in-kernel k loop
(the same kernel written with pointers), and the gather reads its row index
from the index vector itself.

The table of KERNELS below is what vs_triton.py compiles: for each example,
the Triton function, its signature and constexprs, the launch parameters.
"""

import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def add_kernel(x_ptr, y_ptr, o_ptr, N: tl.constexpr, BM: tl.constexpr,
               BN: tl.constexpr):
    # examples/add: [1024, 2048] f32, blocks [32, 256], grid (32, 8).
    i = tl.program_id(0)
    j = tl.program_id(1)
    rows = i * BM + tl.arange(0, BM)
    cols = j * BN + tl.arange(0, BN)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, x + y)


@triton.jit
def softmax_kernel(x_ptr, o_ptr, N: tl.constexpr, BLOCK: tl.constexpr,
                   N_VALID: tl.constexpr):
    # examples/softmax: [4096, 1000] f32, block [None, 1024], grid (4096,).
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N_VALID
    offs = row * N + cols
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    e = libdevice.exp(x - m)
    s = tl.sum(e, axis=0)
    tl.store(o_ptr + offs, e / s, mask=mask)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, o_ptr, N: tl.constexpr,
                     BM: tl.constexpr):
    # examples/layernorm: [4096, 1024] f32, blocks [8, 1024], grid (512,).
    i = tl.program_id(0)
    rows = i * BM + tl.arange(0, BM)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs)
    mean = tl.sum(x, axis=1) / 1024.0
    xc = x - mean[:, None]
    var = tl.sum(xc * xc, axis=1) / 1024.0
    rstd = libdevice.rsqrt(var + 1e-5)
    xn = xc * rstd[:, None]
    w = tl.load(w_ptr + cols)
    b = tl.load(b_ptr + cols)
    tl.store(o_ptr + offs, xn * w[None, :] + b[None, :])


@triton.jit
def matmul_kernel(a_ptr, b_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr,
                  K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    # examples/matmul: [1024, 512] bf16 x [512, 1024] bf16 -> f32, blocks
    # 128 x 128 x 128, grid (8, 8) with the k axis as an in-kernel loop.
    m = tl.program_id(0)
    n = tl.program_id(1)
    rm = m * BM + tl.arange(0, BM)
    rn = n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k * BK + rk)[None, :])
        b = tl.load(b_ptr + (k * BK + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def mha_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, SEQ: tl.constexpr,
                       D: tl.constexpr, BM: tl.constexpr, BK: tl.constexpr):
    # examples/flash_attention: q, k, v, o [8, 1024, 64] f16, q/o blocks
    # [None, 128, 64], k/v the whole sequence walked in blocks of 128,
    # grid (8, 8).
    bh = tl.program_id(0)
    i = tl.program_id(1)
    base = bh * SEQ * D
    rm = i * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :])
    m_i = tl.full((BM,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for kb in range(0, SEQ // BK):
        start = tl.multiple_of(kb * BK, BK)
        rk = start + tl.arange(0, BK)
        k = tl.load(k_ptr + base + rk[:, None] * D + rd[None, :])
        v = tl.load(v_ptr + base + rk[:, None] * D + rd[None, :])
        s = tl.dot(q, tl.trans(k)) * 0.125
        m_next = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = libdevice.exp(m_i - m_next)
        p = libdevice.exp(s - m_next[:, None])
        l_i = alpha * l_i + tl.sum(p, axis=1)
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_next
    o = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], o.to(tl.float16))


@triton.jit
def gather_rows_kernel(idx_ptr, table_ptr, o_ptr, N: tl.constexpr):
    # examples/scalar_prefetch: out[i, :] = table[indices[i], :], [256, 512]
    # f32 table, 16 indices, grid (16,).
    i = tl.program_id(0)
    row = tl.load(idx_ptr + i)
    cols = tl.arange(0, N)
    tl.store(o_ptr + i * N + cols, tl.load(table_ptr + row * N + cols))


# example directory -> (function, signature, constexprs, num_warps, num_stages)
KERNELS = {
    "add": (add_kernel,
            {"x_ptr": "*fp32", "y_ptr": "*fp32", "o_ptr": "*fp32"},
            {"N": 2048, "BM": 32, "BN": 256}, 4, 1),
    "softmax": (softmax_kernel,
                {"x_ptr": "*fp32", "o_ptr": "*fp32"},
                {"N": 1000, "BLOCK": 1024, "N_VALID": 1000}, 4, 1),
    "layernorm": (layernorm_kernel,
                  {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32",
                   "o_ptr": "*fp32"},
                  {"N": 1024, "BM": 8}, 4, 3),
    "matmul": (matmul_kernel,
               {"a_ptr": "*bf16", "b_ptr": "*bf16", "o_ptr": "*fp32"},
               {"M": 1024, "N": 1024, "K": 512, "BM": 128, "BN": 128,
                "BK": 128}, 4, 3),
    "flash_attention": (mha_forward_kernel,
                        {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16",
                         "o_ptr": "*fp16"},
                        {"SEQ": 1024, "D": 64, "BM": 128, "BK": 128}, 4, 2),
    "scalar_prefetch": (gather_rows_kernel,
                        {"idx_ptr": "*i32", "table_ptr": "*fp32",
                         "o_ptr": "*fp32"},
                        {"N": 512}, 4, 3),
}
