// Flash-attention forward: o = softmax(q k^T / sqrt(d)) v, per (batch*head),
// with q, k, v, o of shape [8, 1024, 64] f16 (batch*heads, seq, head_dim).
//
// JAX equivalent (after jax/experimental/pallas/ops/gpu/attention.py):
//   def mha_kernel(q_ref, k_ref, v_ref, o_ref, *, sm_scale=0.125,
//                  block_k=128):
//     q = q_ref[...]                                       # [128, 64]
//     m_i = jnp.full((128,), -jnp.inf, jnp.float32)
//     l_i = jnp.zeros((128,), jnp.float32)
//     acc = jnp.zeros((128, 64), jnp.float32)
//     def body(kb, carry):
//       acc, m_prev, l_prev = carry
//       start = pl.multiple_of(kb * block_k, block_k)
//       k = pl.load(k_ref, (pl.ds(start, block_k), slice(None)))
//       v = pl.load(v_ref, (pl.ds(start, block_k), slice(None)))
//       s = pl.dot(q, k, trans_b=True) * sm_scale        # [128, 128] f32
//       m_next = jnp.maximum(m_prev, jnp.max(s, axis=1))
//       alpha = jnp.exp(m_prev - m_next)
//       p = jnp.exp(s - m_next[:, None])
//       l_next = alpha * l_prev + jnp.sum(p, axis=1)
//       acc = acc * alpha[:, None] + pl.dot(p.astype(v.dtype), v)
//       return acc, m_next, l_next
//     acc, m_i, l_i = lax.fori_loop(0, 1024 // block_k, body, (acc, m_i, l_i))
//     o_ref[...] = (acc / l_i[:, None]).astype(o_ref.dtype)
//
//   pl.pallas_call(mha_kernel, grid=(8, 1024 // 128),
//       in_specs=[pl.BlockSpec((None, 128, 64), lambda b, i: (b, i, 0)),
//                 pl.BlockSpec((None, 1024, 64), lambda b, i: (b, 0, 0)),
//                 pl.BlockSpec((None, 1024, 64), lambda b, i: (b, 0, 0))],
//       out_specs=pl.BlockSpec((None, 128, 64), lambda b, i: (b, i, 0)),
//       out_shape=jax.ShapeDtypeStruct((8, 1024, 64), jnp.float16))(q, k, v)
//
// Each grid step (b, i) owns a 128-row block of queries and sees the whole
// key and value sequences of its batch*head; it walks them in blocks of 128
// with an online softmax (running max m, running sum l, rescaled
// accumulator acc), so the 1024x1024 score matrix is never materialized.

pallas.kernel @mha_forward_kernel(%q_ref: !pallas.ref<128x64xf16>,
                                  %k_ref: !pallas.ref<1024x64xf16>,
                                  %v_ref: !pallas.ref<1024x64xf16>,
                                  %o_ref: !pallas.ref<128x64xf16>) {
  %q = pallas.load %q_ref[] : !pallas.ref<128x64xf16> -> tensor<128x64xf16>

  %m_init = arith.constant dense<0xFF800000> : tensor<128xf32>   // -inf
  %l_init = arith.constant dense<0.0> : tensor<128xf32>
  %acc_init = arith.constant dense<0.0> : tensor<128x64xf32>
  %sm_scale = arith.constant dense<0.125> : tensor<128x128xf32>  // 1/sqrt(64)

  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %num_kv_blocks = arith.constant 8 : index                      // 1024 / 128
  %block_k = arith.constant 128 : index

  %acc_out, %m_out, %l_out = scf.for %kb = %c0 to %num_kv_blocks step %c1
      iter_args(%acc = %acc_init, %m_prev = %m_init, %l_prev = %l_init)
      -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>) {
    %start_idx = arith.muli %kb, %block_k : index
    %start_i32 = arith.index_cast %start_idx : index to i32
    %start = pallas.multiple_of %start_i32, 128 : i32
    %k = pallas.load %k_ref[%start : 128, 0 : 64]
        : !pallas.ref<1024x64xf16> -> tensor<128x64xf16>
    %v = pallas.load %v_ref[%start : 128, 0 : 64]
        : !pallas.ref<1024x64xf16> -> tensor<128x64xf16>

    // s = (q k^T) * sm_scale, accumulated in f32.
    %qk = pallas.dot %q, %k {transpose_rhs}
        : tensor<128x64xf16>, tensor<128x64xf16> -> tensor<128x128xf32>
    %s = arith.mulf %qk, %sm_scale : tensor<128x128xf32>

    // Online softmax: new running max, rescale factor for the old state.
    %m_cur = pallas.reduce max %s dims [1] : tensor<128x128xf32> -> tensor<128xf32>
    %m_next = arith.maximumf %m_prev, %m_cur : tensor<128xf32>
    %m_diff = arith.subf %m_prev, %m_next : tensor<128xf32>
    %alpha = math.exp %m_diff : tensor<128xf32>
    %m_next_b = pallas.broadcast_in_dim %m_next dims [0]
        : tensor<128xf32> -> tensor<128x128xf32>
    %s_shifted = arith.subf %s, %m_next_b : tensor<128x128xf32>
    %p = math.exp %s_shifted : tensor<128x128xf32>

    // l = alpha * l + rowsum(p)
    %p_sum = pallas.reduce sum %p dims [1] : tensor<128x128xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %alpha, %l_prev : tensor<128xf32>
    %l_next = arith.addf %l_scaled, %p_sum : tensor<128xf32>

    // acc = alpha * acc + p v (p cast to the value dtype, f32 accumulation).
    %alpha_b = pallas.broadcast_in_dim %alpha dims [0]
        : tensor<128xf32> -> tensor<128x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x64xf32>
    %p_f16 = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf16>
    %acc_next = pallas.dot %p_f16, %v, %acc_scaled
        : tensor<128x128xf16>, tensor<128x64xf16>, tensor<128x64xf32>
          -> tensor<128x64xf32>

    scf.yield %acc_next, %m_next, %l_next
        : tensor<128x64xf32>, tensor<128xf32>, tensor<128xf32>
  }

  // o = acc / l, cast to the output dtype.
  %l_b = pallas.broadcast_in_dim %l_out dims [0]
      : tensor<128xf32> -> tensor<128x64xf32>
  %o = arith.divf %acc_out, %l_b : tensor<128x64xf32>
  %o_f16 = arith.truncf %o : tensor<128x64xf32> to tensor<128x64xf16>
  pallas.store %o_ref[], %o_f16 : !pallas.ref<128x64xf16>, tensor<128x64xf16>
}
