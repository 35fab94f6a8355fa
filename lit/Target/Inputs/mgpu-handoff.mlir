// A Mosaic GPU kernel with two warpgroups handing a tile over through
// shared memory: warpgroup 0 loads a 64x64 f16 tile with TMA and arrives
// on %ready; warpgroup 1 waits on %ready, then stores the tile with TMA
// (lit/Target/cuda-mgpu-check.test). Its RACE line, deleted, drops the
// wait: warpgroup 1 may store the tile before it was loaded, which one
// schedule hides and another shows.
pallas_mgpu.kernel @handoff(%x: memref<64x64xf16>, %o: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 2, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %loaded = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %ready = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %wg = pallas_mgpu.axis_index "wg" : i32
  %c0_i32 = arith.constant 0 : i32
  %first = arith.cmpi eq, %wg, %c0_i32 : i32
  scf.if %first {
    pallas_mgpu.copy_gmem_to_smem %x, %s, %loaded[%c0] : memref<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
    pallas_mgpu.barrier_wait %loaded[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
    pallas_mgpu.barrier_arrive %ready[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
  } else {
    pallas_mgpu.barrier_wait %ready[%c0] : !pallas_mgpu.barrier<1, arrivals = 1> // RACE
    pallas_mgpu.copy_smem_to_gmem %s, %o : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16>
    pallas_mgpu.wait_smem_to_gmem 0 {read_only}
  }
}
