// RUN: pallasc-opt %s -split-input-file -verify-diagnostics

// Tests that a symbol's name is an identifier.

pallas.kernel @k(%o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.symbol_value' op symbol '2n' is not a symbol name, expected an identifier ([A-Za-z_][A-Za-z0-9_]*)}}
  %n = pallas.symbol_value "2n" : i32
}

// -----

// Tests that the result is an i32, i64 or index.

pallas.kernel @k(%o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.symbol_value' op result #0 must be 32-bit signless integer or 64-bit signless integer or index, but got 'i16'}}
  %n = pallas.symbol_value "n" : i16
}

// -----

// Tests that an index map (or any function but a kernel) reads no symbol.

func.func @map(%i: i32) -> (i32) {
  // expected-error @+1 {{'pallas.symbol_value' op reads symbol 'n' in @map, which is not a kernel; only a kernel body reads a symbol's value}}
  %n = pallas.symbol_value "n" : i32
  return %n : i32
}

// -----

// Tests that the kernel reads only symbols its call declares.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.symbol_value' op reads symbol 'm', which this call does not declare (its symbols: n)}}
  %m = pallas.symbol_value "m" : i32
}
func.func @main(%x: tensor<?xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  // expected-note @+1 {{called from here}}
  %o = pallas.call @k[%g](%x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      symbolic = {symbols = {n = {min = 1}}, grid = ["cdiv(n, 8)"],
                  inputs = [["n"]], outputs = [["n"]]}}
      : (tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Tests that a static call's kernel reads no symbol.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.symbol_value' op reads symbol 'n', but this call has no symbolic shapes}}
  %n = pallas.symbol_value "n" : i32
}
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-note @+1 {{called from here}}
  %o = pallas.call @k(%x) {
      grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (tensor<16xf32>) -> tensor<16xf32>
  return %o : tensor<16xf32>
}
