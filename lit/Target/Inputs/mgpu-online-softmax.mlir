// attention_mgpu's register computations in one Mosaic GPU kernel on 64x64
// f16 tiles (lit/Target/cuda-mgpu-online-softmax.test): the online softmax
// over two (identical) key/value steps, carrying the output, the running
// max and the running sum through scf.for in registers: splat constants
// given the wgmma layout or its rows by layout_cast, row max and sum
// (pallas.reduce along the columns), broadcast_in_dim back, exp2, the
// wgmma forms of cuda-mgpu-wgmma-regs.test, the output out through a TMA
// store. o = f16(p) @ v / sum(p), p = exp2(s - max(s)), s = q @ k.T.
// With the CAUSAL lines (the test's sed renames s to sr and sc to s), s is
// masked as attention_mgpu's causal mask does: iotas in the wgmma layout,
// a scalar broadcast, a compare and pallas.select with -inf.
pallas_mgpu.kernel @softmax(%q: memref<64x64xf16>, %k: memref<64x64xf16>, %v: memref<64x64xf16>, %o: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %qs = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %ks = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %vs = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %os = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.copy_gmem_to_smem %q, %qs, %bar[%c0] : memref<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.copy_gmem_to_smem %k, %ks, %bar[%c1] : memref<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.copy_gmem_to_smem %v, %vs, %bar[%c2] : memref<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c1] : !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c2] : !pallas_mgpu.barrier<3, arrivals = 1>
  %ninf = arith.constant dense<0xFF800000> : tensor<64xf32>
  %m0 = pallas_mgpu.layout_cast %ninf : tensor<64xf32> to #pallas_mgpu.layout<"wgmma", reduced = [1]>
  %zr = arith.constant dense<0.0> : tensor<64xf32>
  %l0 = pallas_mgpu.layout_cast %zr : tensor<64xf32> to #pallas_mgpu.layout<"wgmma", reduced = [1]>
  %z2 = arith.constant dense<0.0> : tensor<64x64xf32>
  %o0 = pallas_mgpu.layout_cast %z2 : tensor<64x64xf32> to #pallas_mgpu.layout<"wgmma">
  %res:3 = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %o0, %m = %m0, %l = %l0) -> (tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>) {
    %kt = memref.transpose %ks (d0, d1) -> (d1, d0) : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>> to memref<64x64xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
    %sacc = pallas_mgpu.alloc_acc : memref<64x64xf32, #pallas_mgpu.acc>
    pallas_mgpu.wgmma %sacc, %qs, %kt : memref<64x64xf32, #pallas_mgpu.acc>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
    pallas_mgpu.wgmma_wait 0
    %s = pallas_mgpu.acc_read %sacc : memref<64x64xf32, #pallas_mgpu.acc> -> tensor<64x64xf32>
    // CAUSAL: %ri = pallas.iota 0 : tensor<64x64xi32>
    // CAUSAL: %rl = pallas_mgpu.layout_cast %ri : tensor<64x64xi32> to #pallas_mgpu.layout<"wgmma">
    // CAUSAL: %ci = pallas.iota 1 : tensor<64x64xi32>
    // CAUSAL: %cl = pallas_mgpu.layout_cast %ci : tensor<64x64xi32> to #pallas_mgpu.layout<"wgmma">
    // CAUSAL: %zero = arith.constant 0 : i32
    // CAUSAL: %zb = pallas.broadcast_in_dim %zero dims [] : i32 -> tensor<64x64xi32>
    // CAUSAL: %cols = arith.addi %cl, %zb : tensor<64x64xi32>
    // CAUSAL: %keep = arith.cmpi sge, %rl, %cols : tensor<64x64xi32>
    // CAUSAL: %ninf1 = arith.constant 0xFF800000 : f32
    // CAUSAL: %nb = pallas.broadcast_in_dim %ninf1 dims [] : f32 -> tensor<64x64xf32>
    // CAUSAL: %sc = pallas.select %keep, %sr, %nb : tensor<64x64xi1>, tensor<64x64xf32>
    %mx = pallas.reduce max %s dims [1] : tensor<64x64xf32> -> tensor<64xf32>
    %mn = arith.maximumf %m, %mx : tensor<64xf32>
    %d = arith.subf %m, %mn : tensor<64xf32>
    %alpha = math.exp2 %d : tensor<64xf32>
    %mnb = pallas.broadcast_in_dim %mn dims [0] : tensor<64xf32> -> tensor<64x64xf32>
    %sd = arith.subf %s, %mnb : tensor<64x64xf32>
    %p = math.exp2 %sd : tensor<64x64xf32>
    %alphab = pallas.broadcast_in_dim %alpha dims [0] : tensor<64xf32> -> tensor<64x64xf32>
    %scaled = arith.mulf %acc, %alphab : tensor<64x64xf32>
    %la = arith.mulf %l, %alpha : tensor<64xf32>
    %ps = pallas.reduce sum %p dims [1] : tensor<64x64xf32> -> tensor<64xf32>
    %l2 = arith.addf %la, %ps : tensor<64xf32>
    %ph = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xf16>
    %oacc = pallas_mgpu.alloc_acc init(%scaled : tensor<64x64xf32>) : memref<64x64xf32, #pallas_mgpu.acc>
    pallas_mgpu.wgmma %oacc, %ph, %vs : memref<64x64xf32, #pallas_mgpu.acc>, tensor<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
    pallas_mgpu.wgmma_wait 0
    %o2 = pallas_mgpu.acc_read %oacc : memref<64x64xf32, #pallas_mgpu.acc> -> tensor<64x64xf32>
    scf.yield %o2, %mn, %l2 : tensor<64x64xf32>, tensor<64xf32>, tensor<64xf32>
  }
  %lb = pallas.broadcast_in_dim %res#2 dims [0] : tensor<64xf32> -> tensor<64x64xf32>
  %out = arith.divf %res#0, %lb : tensor<64x64xf32>
  %oh = arith.truncf %out : tensor<64x64xf32> to tensor<64x64xf16>
  pallas_mgpu.store %oh, %os : tensor<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.commit_smem
  pallas_mgpu.copy_smem_to_gmem %os, %o : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16>
  pallas_mgpu.wait_smem_to_gmem 0 {read_only}
}
