// A [1024, 1024] f32 block copied through registers: footprint.test.
pallas.kernel @copy(%x: !pallas.ref<1024x1024xf32>, %o: !pallas.ref<1024x1024xf32>) {
  %v = pallas.load %x[] : !pallas.ref<1024x1024xf32> -> tensor<1024x1024xf32>
  pallas.store %o[], %v : !pallas.ref<1024x1024xf32>, tensor<1024x1024xf32>
}
