// RUN: pallasc-opt %s -split-input-file -verify-diagnostics

// Tests that a dynamic dimension needs the `symbolic` attribute.

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
}
func.func @main(%x: tensor<?x128xf32>, %n: index) -> tensor<?x128xf32> {
  // expected-error @+1 {{'pallas.call' op input 0 must be a statically shaped tensor, got 'tensor<?x128xf32>' (dynamic dimensions need the `symbolic` attribute)}}
  %o = pallas.call @k(%x) sizes(%n) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>]}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

// -----

// Tests that every dynamic result dimension needs one size operand.

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
}
func.func @main(%x: tensor<?x128xf32>, %n: index) -> tensor<?x128xf32> {
  // expected-error @+1 {{'pallas.call' op results have 1 dynamic dimensions but 0 dynamic sizes are given}}
  %o = pallas.call @k(%x) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1}}, grid = [""],
                  inputs = [["n", "128"]], outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

// -----

// Tests that `symbolic` declares at least one symbol.

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
}
func.func @main(%x: tensor<?x128xf32>, %n: index) -> tensor<?x128xf32> {
  // expected-error @+1 {{'pallas.call' op symbolic.symbols must be a non-empty dictionary}}
  %o = pallas.call @k(%x) sizes(%n) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {}, grid = [""],
                  inputs = [["n", "128"]], outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

// -----

// Tests that a symbol's constraints are integers named min, max, multiple_of.

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
}
func.func @main(%x: tensor<?x128xf32>, %n: index) -> tensor<?x128xf32> {
  // expected-error @+1 {{'pallas.call' op symbolic.symbols.n.step: expected an integer min, max or multiple_of}}
  %o = pallas.call @k(%x) sizes(%n) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {step = 2}}, grid = [""],
                  inputs = [["n", "128"]], outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

// -----

// Tests that `symbolic.grid` has one entry per grid axis.

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
}
func.func @main(%x: tensor<?x128xf32>, %n: index) -> tensor<?x128xf32> {
  // expected-error @+1 {{'pallas.call' op symbolic.grid must hold one string per grid axis (1)}}
  %o = pallas.call @k(%x) sizes(%n) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {}}, grid = [],
                  inputs = [["n", "128"]], outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

// -----

// Tests that each operand's shape expression has one entry per dimension.

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
}
func.func @main(%x: tensor<?x128xf32>, %n: index) -> tensor<?x128xf32> {
  // expected-error @+1 {{'pallas.call' op symbolic.outputs[0] must hold one string per dimension (2)}}
  %o = pallas.call @k(%x) sizes(%n) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {}}, grid = [""],
                  inputs = [["n", "128"]], outputs = [["n"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
