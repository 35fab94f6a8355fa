//===- RunSemanticsTest.cpp - interpret-mode semantics of pallasc run ------===//
//
// Small kernels written here exercise what the examples do not: revisited
// output blocks, aliasing, dynamic grid bounds, `any` operands, vmapped
// grids, eliminated calls, uninitialized values, debug_print and every
// block op (reductions incl. argmax ties/NaN, cumsum, atomics, swap, dots
// with transposes, strided and out-of-bounds accesses).
//
//===----------------------------------------------------------------------===//

#include "src/Launch/RuntimeSymbols.h"
#include "test/Runtime/RunTestUtils.h"

#include <catch2/catch.hpp>

#include <climits>
#include <cmath>
#include <cstdio>

using namespace pallasc;
using namespace pallasc::runtime;
using namespace pallasc::test;

namespace {

std::vector<HostArray> runText(const Workspace &ws, const std::string &kernel,
                               const std::string &specText,
                               const std::vector<const HostArray *> &inputs,
                               size_t numOutputs = 1, RunOptions options = {},
                               int expectedExit = kExitSuccess) {
  return runKernel(ws, ws.write("kernel.mlir", kernel), specText, inputs,
                   std::move(options), expectedExit, numOutputs);
}

HostArray f32Array(std::vector<int64_t> shape, std::vector<float> values) {
  HostArray a(DType::F32, std::move(shape));
  REQUIRE(a.allocate());
  REQUIRE(values.size() == static_cast<size_t>(a.numElements()));
  std::copy(values.begin(), values.end(), reinterpret_cast<float *>(a.data()));
  return a;
}

/// The spec of examples/add over [32, 256] f32 in one block, with `extra`
/// (", KEY: VALUE" members) at its end.
std::string addSpec(const std::string &extra = "") {
  return R"X({"schema": "pallasc.gridspec/v1", "kernel": "add_kernel",
      "grid": [1, 1], "inputs": [{"shape": [32, 256], "dtype": "f32"},
                                 {"shape": [32, 256], "dtype": "f32"}],
      "outputs": [{"shape": [32, 256], "dtype": "f32"}],
      "in_specs": [{"block_shape": [32, 256], "index_map": "(i, j) -> (i, j)"},
                   {"block_shape": [32, 256], "index_map": "(i, j) -> (i, j)"}],
      "out_specs": [{"block_shape": [32, 256], "index_map": "(i, j) -> (i, j)"}])X" +
         extra + "}";
}

/// The first elements of `got` are `want`, a NaN there meaning a NaN.
template <typename T>
void checkElements(const T *got, std::initializer_list<double> want) {
  size_t i = 0;
  for (double w : want) {
    INFO("element " << i);
    if (std::isnan(w))
      CHECK(std::isnan(static_cast<double>(got[i])));
    else
      CHECK(got[i] == w);
    ++i;
  }
}

} // namespace

TEST_CASE("run: a revisited output block reads back what was written",
          "[run][semantics]") {
  // Grid (2, 2), output block j: step (0, j) writes 10*j, step (1, j) adds
  // 1. Block 0 is left for block 1 in between, and must come back.
  Workspace ws;
  auto out = runText(ws, R"X(
pallas.kernel @revisit(%o: !pallas.ref<1x8xf32>) {
  %i = pallas.program_id 0 : i32
  %j = pallas.program_id 1 : i32
  %c0 = arith.constant 0 : i32
  %first = arith.cmpi eq, %i, %c0 : i32
  scf.if %first {
    %jf = arith.sitofp %j : i32 to f32
    %ten = arith.constant 10.0 : f32
    %v = arith.mulf %jf, %ten : f32
    %b = pallas.broadcast_in_dim %v dims [] : f32 -> tensor<1x8xf32>
    pallas.store %o[], %b : !pallas.ref<1x8xf32>, tensor<1x8xf32>
  } else {
    %x = pallas.load %o[] : !pallas.ref<1x8xf32> -> tensor<1x8xf32>
    %one = arith.constant dense<1.0> : tensor<1x8xf32>
    %y = arith.addf %x, %one : tensor<1x8xf32>
    pallas.store %o[], %y : !pallas.ref<1x8xf32>, tensor<1x8xf32>
  }
}
)X",
                     R"X({"schema": "pallasc.gridspec/v1", "kernel": "revisit",
      "grid": [2, 2], "inputs": [], "in_specs": [],
      "outputs": [{"shape": [2, 8], "dtype": "f32"}],
      "out_specs": [{"block_shape": [1, 8], "index_map": "(i, j) -> (j, 0)"}]})X",
                     {});
  const float *o = asF32(out[0]);
  for (int j = 0; j < 2; ++j)
    for (int c = 0; c < 8; ++c)
      REQUIRE(o[j * 8 + c] == 10.0f * j + 1);
}

TEST_CASE("run: an aliased input is updated in place", "[run][semantics]") {
  Workspace ws;
  HostArray x = f32Array({16}, {0, 1, 2,  3,  4,  5,  6,  7,
                                8, 9, 10, 11, 12, 13, 14, 15});
  auto out = runText(ws, R"X(
pallas.kernel @twice(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %w = arith.addf %v, %v : tensor<8xf32>
  pallas.store %o[], %w : !pallas.ref<8xf32>, tensor<8xf32>
}
)X",
                     R"X({"schema": "pallasc.gridspec/v1", "kernel": "twice",
      "grid": [2], "inputs": [{"shape": [16], "dtype": "f32"}],
      "outputs": [{"shape": [16], "dtype": "f32"}],
      "in_specs": [{"block_shape": [8], "index_map": "(i) -> (i)"}],
      "out_specs": [{"block_shape": [8], "index_map": "(i) -> (i)"}],
      "input_output_aliases": {"0": 0}})X",
                     {&x});
  for (int i = 0; i < 16; ++i)
    REQUIRE(asF32(out[0])[i] == 2.0f * i);
}

TEST_CASE("run: dynamic grid bounds; unwritten outputs stay uninitialized",
          "[run][semantics]") {
  Workspace ws;
  RunOptions options;
  options.gridBounds = {3};
  auto out = runText(ws, R"X(
pallas.kernel @ids(%o: !pallas.ref<1xi32>) {
  %i = pallas.program_id 0 : i32
  %n = pallas.num_programs 0 : i32
  %h = arith.constant 100 : i32
  %a = arith.muli %i, %h : i32
  %v = arith.addi %a, %n : i32
  pallas.store %o[0], %v : !pallas.ref<1xi32>, i32
}
)X",
                     R"X({"schema": "pallasc.gridspec/v1", "kernel": "ids",
      "grid": ["dynamic"], "inputs": [], "in_specs": [],
      "outputs": [{"shape": [4], "dtype": "i32"}],
      "out_specs": [{"block_shape": [1], "index_map": "(i) -> (i)"}]})X",
                     {}, 1, options);
  const int32_t *o = asI32(out[0]);
  CHECK(o[0] == 3);
  CHECK(o[1] == 103);
  CHECK(o[2] == 203);
  CHECK(o[3] == INT32_MIN); // interpret mode's uninitialized value
}

TEST_CASE("run: an `any` operand is the whole array", "[run][semantics]") {
  Workspace ws;
  HostArray x = randomArray(DType::F32, {4, 8}, 21);
  auto out = runText(ws, R"X(
pallas.kernel @rows(%x: !pallas.ref<4x8xf32, any>, %o: !pallas.ref<8xf32>) {
  %i = pallas.program_id 0 : i32
  %c3 = arith.constant 3 : i32
  %r = arith.subi %c3, %i : i32
  %v = pallas.load %x[%r, 0 : 8] : !pallas.ref<4x8xf32, any> -> tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
)X",
                     R"X({"schema": "pallasc.gridspec/v1", "kernel": "rows",
      "grid": [4], "inputs": [{"shape": [4, 8], "dtype": "f32"}],
      "outputs": [{"shape": [4, 8], "dtype": "f32"}],
      "in_specs": [{"memory_space": "any"}],
      "out_specs": [{"block_shape": [null, 8], "index_map": "(i) -> (i, 0)"}]})X",
                     {&x});
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c)
      REQUIRE(asF32(out[0])[r * 8 + c] == asF32(x)[(3 - r) * 8 + c]);
}

TEST_CASE("run: element blocks with padding read uninitialized values",
          "[run][semantics]") {
  // A window of 4 starting at element offset 2*i - 1 of the array padded by
  // one on each side: windows reaching into the padding see NaN.
  Workspace ws;
  HostArray x = f32Array({6}, {1, 2, 3, 4, 5, 6});
  auto out = runText(ws, R"X(
pallas.kernel @window(%x: !pallas.ref<4xf32>, %o: !pallas.ref<1xf32>) {
  %v = pallas.load %x[] : !pallas.ref<4xf32> -> tensor<4xf32>
  %s = pallas.reduce sum %v dims [0] : tensor<4xf32> -> tensor<f32>
  %r = pallas.reshape %s : tensor<f32> -> tensor<1xf32>
  pallas.store %o[], %r : !pallas.ref<1xf32>, tensor<1xf32>
}
)X",
                     R"X({"schema": "pallasc.gridspec/v1", "kernel": "window",
      "grid": [3], "inputs": [{"shape": [6], "dtype": "f32"}],
      "outputs": [{"shape": [3], "dtype": "f32"}],
      "in_specs": [{"block_shape": [{"element": 4, "padding": [1, 1]}],
                    "index_map": "(i) -> (i * 2)"}],
      "out_specs": [{"block_shape": [1], "index_map": "(i) -> (i)"}]})X",
                     {&x});
  const float *o = asF32(out[0]);
  // Padded array: [NaN, 1, 2, 3, 4, 5, 6, NaN]; windows at 0, 2, 4.
  CHECK(std::isnan(o[0]));
  CHECK(o[1] == 2 + 3 + 4 + 5);
  CHECK(std::isnan(o[2]));
}

TEST_CASE("run: vmap runs the kernel once per batch element",
          "[run][semantics]") {
  Workspace ws;
  HostArray x = randomArray(DType::F32, {3, 32, 256}, 31);
  HostArray y = randomArray(DType::F32, {3, 32, 256}, 32);
  RunOptions options;
  spec::Transform vmap;
  vmap.kind = spec::Transform::Kind::Vmap;
  vmap.inAxes = {0, 0};
  vmap.axisSize = 3;
  vmap.path = "--vmap";
  options.driver.extraTransforms.push_back(vmap);
  auto out =
      runKernel(ws, std::string(PALLASC_EXAMPLES_DIR) + "/add/kernel.mlir",
                addSpec(), {&x, &y}, options);
  REQUIRE(out[0].shape == std::vector<int64_t>{3, 32, 256});
  for (int64_t i = 0; i < x.numElements(); ++i)
    REQUIRE(asF32(out[0])[i] == asF32(x)[i] + asF32(y)[i]);
}

TEST_CASE("run: an eliminated call has nothing to run", "[run][semantics]") {
  Workspace ws;
  HostArray x = randomArray(DType::F32, {32, 256}, 41);
  std::string kernel = std::string(PALLASC_EXAMPLES_DIR) + "/add/kernel.mlir";
  std::string specText =
      addSpec(R"X(, "transforms": [{"dce": {"used_outputs": [false]}}])X");
  // Without --output: success, nothing written.
  runKernel(ws, kernel, specText, {&x, &x}, {}, kExitSuccess, 0);
  // With --output: a clear error.
  runKernel(ws, kernel, specText, {&x, &x}, {}, kExitUserError, 1);
}

TEST_CASE("run: debug_print formats scalars and tensors", "[run][semantics]") {
  Workspace ws;
  std::string printed = ws.path("printed.txt");
  HostArray x = f32Array({2, 2}, {1, 0.5f, -2, 3});
  std::FILE *f = std::fopen(printed.c_str(), "w+");
  REQUIRE(f);
  setDebugPrintStream(f);
  runText(ws, R"X(
pallas.kernel @show(%x: !pallas.ref<2x2xf32>, %o: !pallas.ref<1xi32>) {
  %i = pallas.program_id 0 : i32
  %v = pallas.load %x[] : !pallas.ref<2x2xf32> -> tensor<2x2xf32>
  %t = arith.constant true
  pallas.debug_print "step {}: x = {} ({})" %i, %v, %t : i32, tensor<2x2xf32>, i1
  pallas.debug_print "plain" %i : i32
  pallas.store %o[0], %i : !pallas.ref<1xi32>, i32
}
)X",
          R"X({"schema": "pallasc.gridspec/v1", "kernel": "show",
      "grid": [2], "inputs": [{"shape": [2, 2], "dtype": "f32"}],
      "outputs": [{"shape": [2], "dtype": "i32"}],
      "in_specs": [{"block_shape": [2, 2], "index_map": "(i) -> (0, 0)"}],
      "out_specs": [{"block_shape": [1], "index_map": "(i) -> (i)"}]})X",
          {&x});
  setDebugPrintStream(nullptr);
  std::fflush(f);
  std::rewind(f);
  std::string text(4096, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  CHECK(text == "step 0: x = [[1.0, 0.5], [-2.0, 3.0]] (True)\n"
                "plain 0\n"
                "step 1: x = [[1.0, 0.5], [-2.0, 3.0]] (True)\n"
                "plain 1\n");
}

TEST_CASE("run: reductions, argmax ties and NaN, cumsum, shape ops",
          "[run][semantics][ops]") {
  Workspace ws;
  float nan = NAN;
  HostArray x = f32Array({2, 4}, {3, 7, 7, -1, 2, nan, 5, nan});
  auto out = runText(ws, R"X(
pallas.kernel @ops(%x: !pallas.ref<2x4xf32>, %amax: !pallas.ref<2xi32>,
                   %amin: !pallas.ref<2xi32>, %sum: !pallas.ref<4xf32>,
                   %cs: !pallas.ref<2x4xf32>, %rcs: !pallas.ref<2x4xi32>,
                   %tr: !pallas.ref<4x2xf32>) {
  %v = pallas.load %x[] : !pallas.ref<2x4xf32> -> tensor<2x4xf32>
  %a = pallas.reduce argmax %v dims [1] : tensor<2x4xf32> -> tensor<2xi32>
  pallas.store %amax[], %a : !pallas.ref<2xi32>, tensor<2xi32>
  %b = pallas.reduce argmin %v dims [1] : tensor<2x4xf32> -> tensor<2xi32>
  pallas.store %amin[], %b : !pallas.ref<2xi32>, tensor<2xi32>
  %r0 = pallas.load %x[0, 0 : 4] : !pallas.ref<2x4xf32> -> tensor<4xf32>
  %bc = pallas.broadcast_in_dim %r0 dims [1] : tensor<4xf32> -> tensor<3x4xf32>
  %s = pallas.reduce sum %bc dims [0] : tensor<3x4xf32> -> tensor<4xf32>
  pallas.store %sum[], %s : !pallas.ref<4xf32>, tensor<4xf32>
  %c = pallas.cumsum %v dim 1 : tensor<2x4xf32>
  pallas.store %cs[], %c : !pallas.ref<2x4xf32>, tensor<2x4xf32>
  %io = pallas.iota 1 : tensor<2x4xi32>
  %rc = pallas.cumsum %io dim 1 reverse : tensor<2x4xi32>
  pallas.store %rcs[], %rc : !pallas.ref<2x4xi32>, tensor<2x4xi32>
  %flat = pallas.reshape %v : tensor<2x4xf32> -> tensor<8xf32>
  %sq = pallas.reshape %flat : tensor<8xf32> -> tensor<4x2xf32>
  %t = pallas.transpose %v [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %m = pallas.iota 0 : tensor<4x2xi32>
  %two = arith.constant dense<2> : tensor<4x2xi32>
  %lo = arith.cmpi slt, %m, %two : tensor<4x2xi32>
  %sel = pallas.select %lo, %t, %sq : tensor<4x2xi1>, tensor<4x2xf32>
  pallas.store %tr[], %sel : !pallas.ref<4x2xf32>, tensor<4x2xf32>
}
)X",
                     R"X({"schema": "pallasc.gridspec/v1", "kernel": "ops",
      "grid": [], "inputs": [{"shape": [2, 4], "dtype": "f32"}],
      "outputs": [{"shape": [2], "dtype": "i32"}, {"shape": [2], "dtype": "i32"},
                  {"shape": [4], "dtype": "f32"}, {"shape": [2, 4], "dtype": "f32"},
                  {"shape": [2, 4], "dtype": "i32"}, {"shape": [4, 2], "dtype": "f32"}],
      "in_specs": [{}], "out_specs": [{}, {}, {}, {}, {}, {}]})X",
                     {&x}, 6);
  // argmax: first of the tied 7s; NaN wins (the first NaN).
  CHECK(asI32(out[0])[0] == 1);
  CHECK(asI32(out[0])[1] == 1);
  // argmin: -1; NaN wins there too, as in XLA.
  CHECK(asI32(out[1])[0] == 3);
  CHECK(asI32(out[1])[1] == 1);
  const float *s = asF32(out[2]);
  CHECK(s[0] == 9);
  CHECK(s[1] == 21);
  CHECK(s[3] == -3);
  checkElements(asF32(out[3]), {3, 10, 17, 16, 2, NAN});
  checkElements(asI32(out[4]), {6, 6, 5, 3}); // reverse cumsum of 0 1 2 3
  // Rows 0-1: the transpose; rows 2-3: the row-major reshape.
  checkElements(asF32(out[5]), {3, 2, 7, NAN, 2, NAN, 5, NAN});
}

TEST_CASE("run: atomics, swap, masked and out-of-bounds accesses",
          "[run][semantics][ops]") {
  Workspace ws;
  HostArray x = f32Array({8}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto out = runText(ws, R"X(
pallas.kernel @mem(%x: !pallas.ref<8xf32>, %h: !pallas.ref<4xi32>,
                   %old: !pallas.ref<4xi32>, %win: !pallas.ref<4xf32>,
                   %st: !pallas.ref<8xf32>, %dots: !pallas.ref<2x2xf32>) {
  // Counters: start at 1, then add/max/xchg/cas/or.
  %ones = arith.constant dense<1> : tensor<4xi32>
  pallas.store %h[], %ones : !pallas.ref<4xi32>, tensor<4xi32>
  %c5 = arith.constant 5 : i32
  %o0 = pallas.atomic_rmw add %h[0], %c5 : !pallas.ref<4xi32>, i32
  %o1 = pallas.atomic_rmw max %h[1], %c5 : !pallas.ref<4xi32>, i32
  %o2 = pallas.atomic_rmw xchg %h[2], %c5 : !pallas.ref<4xi32>, i32
  %c1 = arith.constant 1 : i32
  %o3 = pallas.atomic_cas %h[3], %c1, %c5 : !pallas.ref<4xi32>, i32
  %c2 = arith.constant 2 : i32
  %o4 = pallas.atomic_rmw or %h[3], %c2 : !pallas.ref<4xi32>, i32
  %olds = tensor.from_elements %o0, %o1, %o2, %o4 : tensor<4xi32>
  pallas.store %old[], %olds : !pallas.ref<4xi32>, tensor<4xi32>
  // A dynamic window that runs past the end reads NaN there.
  %s6 = arith.constant 6 : i32
  %w = pallas.load %x[%s6 : 4] : !pallas.ref<8xf32> -> tensor<4xf32>
  pallas.store %win[], %w : !pallas.ref<4xf32>, tensor<4xf32>
  // Strided load; swap; masked store; a store past the end is dropped.
  %even = pallas.load %x[0 : 4 : 2] : !pallas.ref<8xf32> -> tensor<4xf32>
  %z = arith.constant dense<-1.0> : tensor<8xf32>
  pallas.store %st[], %z : !pallas.ref<8xf32>, tensor<8xf32>
  %prev = pallas.swap %st[0 : 4], %even : !pallas.ref<8xf32>, tensor<4xf32>
  %io = pallas.iota 0 : tensor<4xi32>
  %two = arith.constant dense<2> : tensor<4xi32>
  %m = arith.cmpi slt, %io, %two : tensor<4xi32>
  %p10 = arith.constant dense<10.0> : tensor<4xf32>
  %pv = arith.addf %prev, %p10 : tensor<4xf32>
  pallas.store %st[4 : 4], %pv mask %m : !pallas.ref<8xf32>, tensor<4xf32>
  %s7 = arith.constant 7 : i32
  %big = arith.constant dense<99.0> : tensor<2xf32>
  pallas.store %st[%s7 : 2], %big : !pallas.ref<8xf32>, tensor<2xf32>
  // dot with transposes: [[0,1],[2,3]]^T x [[4,5],[6,7]]^T
  %a = pallas.load %x[0 : 4] : !pallas.ref<8xf32> -> tensor<4xf32>
  %b = pallas.load %x[4 : 4] : !pallas.ref<8xf32> -> tensor<4xf32>
  %a2 = pallas.reshape %a : tensor<4xf32> -> tensor<2x2xf32>
  %b2 = pallas.reshape %b : tensor<4xf32> -> tensor<2x2xf32>
  %d = pallas.dot %a2, %b2 {transpose_lhs, transpose_rhs} : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  pallas.store %dots[], %d : !pallas.ref<2x2xf32>, tensor<2x2xf32>
}
)X",
                     R"X({"schema": "pallasc.gridspec/v1", "kernel": "mem",
      "grid": [], "inputs": [{"shape": [8], "dtype": "f32"}],
      "outputs": [{"shape": [4], "dtype": "i32"}, {"shape": [4], "dtype": "i32"},
                  {"shape": [4], "dtype": "f32"}, {"shape": [8], "dtype": "f32"},
                  {"shape": [2, 2], "dtype": "f32"}],
      "in_specs": [{}], "out_specs": [{}, {}, {}, {}, {}]})X",
                     {&x}, 5);
  checkElements(asI32(out[0]), {6, 5, 5, 7}); // h[3]: cas 1 -> 5, then | 2
  checkElements(asI32(out[1]), {1, 1, 1, 5}); // the old values
  checkElements(asF32(out[2]), {6, 7, NAN, NAN});
  checkElements(asF32(out[3]), {0, 2, 4, 6, 9, 9, -1, 99});
  // A^T B^T with A = [[0,1],[2,3]], B = [[4,5],[6,7]].
  checkElements(asF32(out[4]),
                {0 * 4 + 2 * 5, 0 * 6 + 2 * 7, 1 * 4 + 3 * 5, 1 * 6 + 3 * 7});
}
