// The SPMD partitioner (passes/spmd/): generated modules, one per op x sharding x partition
// count, each checked three ways:
//   (a) the global module evaluated on one device (EvaluateModule) equals the partitioned one
//       run on its devices (PrepareSpmd -> SplitInputs -> EvaluatePartitioned -> JoinOutputs),
//       floats within a small relative tolerance, integers and preds exactly;
//   (b) every partitioned entry parameter has ShardShape(its sharding, its global shape), and
//       the layout's parameter sharding is the annotation, normalized;
//   (c) where the answer is clear, the collectives the partitioned module holds (opcode counts
//       over every computation): none for a row split times a replicated matrix, an all-reduce
//       for a split contraction or a reduce over a split dim, an all-to-all for [2,1]->[1,2],
//       a collective-permute for the same tiling on other devices and for a convolution's
//       halo, only a dynamic-slice for replicated->tiled.
// Shardings are written in every text form XLA and Shardy use: explicit device lists, iota
// lists (<=[4], <=[2,4]T(1,0)), last_tile_dim_replicate, {replicated} and the mesh form.
// Shapes are small and many dims are not divisible by their tile count (6 over 4, 5 over 2).
//
// Each case is its own DYNAMIC_SECTION named after it (`-c <name>` runs one). Cases that expose
// partitioner defects are kept out of [spmd_partitioner] and run under the hidden tag
// [.spmd_known_bug] (see kKnownBugs).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "eval/spmd_eval.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/sharding_util.h"
#include "ir/verifier.h"
#include "passes/spmd/device_io.h"
#include "passes/spmd/spmd_partitioner.h"

namespace hloc {
namespace {

// ---- cases -------------------------------------------------------------------------------------

struct Case {
  std::string name;
  std::string text;                        // the global module
  std::map<std::string, int64_t> exactly;  // opcode -> count in the partitioned module
  std::map<std::string, int64_t> at_least;
  bool no_collectives = false;
};

const std::vector<std::string> kCollectives = {
    "all-reduce",  "all-reduce-start", "all-gather", "all-gather-start", "all-to-all", "collective-permute",
    "collective-permute-start", "reduce-scatter", "collective-broadcast"};

// Applied computations every module carries (unused ones are harmless).
const char* kCommon = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}

addi {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] add(a, b)
}

mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] multiply(a, b)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}

min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] minimum(a, b)
}

lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}

lt_kv {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}

argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  eq = pred[] compare(v0, v1), direction=EQ
  li = pred[] compare(i0, i1), direction=LT
  tie = pred[] and(eq, li)
  take = pred[] or(gt, tie)
  v = f32[] select(take, v0, v1)
  i = s32[] select(take, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
)";

// "f32[8,6]"
std::string Ty(const std::string& t, const std::vector<int64_t>& dims) {
  return absl::StrCat(t, "[", absl::StrJoin(dims, ","), "]");
}

// A module for `n` partitions whose result sharding propagation may choose (set
// `output_free` false to keep the result replicated), with `extra` computations before the
// entry and `body` as the entry's instructions ($-placeholders replaced by `subs`).
std::string Mod(int64_t n, const std::string& body, const std::string& extra = "",
                const std::vector<std::pair<std::string, std::string>>& subs = {}, bool output_free = true) {
  std::string text = absl::StrCat("HloModule m, num_partitions=", n,
                                   output_free ? ", allow_spmd_sharding_propagation_to_output={true}" : "", "\n",
                                   kCommon, extra, "\nENTRY e {\n", body, "\n}\n");
  std::vector<std::pair<std::string, std::string>> s = subs;
  return absl::StrReplaceAll(text, s);
}

Case Make(std::string name, std::string text) {
  Case c;
  c.name = std::move(name);
  c.text = std::move(text);
  return c;
}

Case NoCollectives(Case c) {
  c.no_collectives = true;
  return c;
}

Case AtLeast(Case c, const std::string& op, int64_t count = 1) {
  c.at_least[op] = count;
  return c;
}

// Exactly one collective of kind `op` and no other collective.
Case OnlyCollective(Case c, const std::string& op, int64_t count = 1) {
  for (const std::string& k : kCollectives) c.exactly[k] = 0;
  c.exactly[op] = count;
  return c;
}

// A 2-D shape with a sharding written for it.
struct Config {
  int64_t n;
  std::vector<int64_t> dims;
  std::string sharding;
  std::string tag;  // short name for the case
};

// Rank-2 configurations over 2, 4 and 8 partitions, even and uneven, in every text form.
std::vector<Config> Configs2D() {
  return {
      {2, {8, 6}, "{devices=[2,1]0,1}", "n2_rows"},
      {2, {5, 6}, "{devices=[1,2]1,0}", "n2_cols_perm"},
      {2, {5, 7}, "{devices=[2,1]0,1}", "n2_rows_uneven"},
      {4, {6, 5}, "{devices=[4,1]<=[4]}", "n4_rows_6of4"},
      {4, {8, 6}, "{devices=[2,2]<=[4]}", "n4_2x2_iota"},
      {4, {8, 6}, "{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}", "n4_cols_partrep"},
      {4, {6, 6}, "{mesh['x'=2,'y'=2], [{'y'}, {'x'}]}", "n4_mesh_yx"},
      {8, {8, 6}, "{devices=[2,4]<=[8]}", "n8_2x4_uneven"},
      {8, {5, 8}, "{devices=[4,2]<=[2,4]T(1,0)}", "n8_4x2_T"},
      {8, {8, 4}, "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", "n8_rows_partrep"},
      {8, {8, 6}, "{mesh['x'=2,'y'=2,'z'=2], [{'z','x'}, {'y'}]}", "n8_mesh3"},
  };
}

// ---- elementwise ---------------------------------------------------------------------------------

struct EwOp {
  std::string name;
  std::string type;   // parameter element type
  std::string body;   // uses p0, p1 of $A; defines r; $P = pred shape, $I = s32 shape
  std::string rtype;  // result element type
};

std::vector<EwOp> EwOps() {
  return {
      {"negate", "f32", "  r = $A negate(p0)", "f32"},
      {"exp", "f32", "  r = $A exponential(p0)", "f32"},
      {"abs_tanh", "f32", "  a = $A abs(p0)\n  r = $A tanh(a)", "f32"},
      {"add", "f32", "  r = $A add(p0, p1)", "f32"},
      {"mul_sub", "f32", "  m = $A multiply(p0, p1)\n  r = $A subtract(m, p0)", "f32"},
      {"max", "f32", "  r = $A maximum(p0, p1)", "f32"},
      {"select", "f32", "  c = $P compare(p0, p1), direction=GT\n  r = $A select(c, p0, p1)", "f32"},
      {"compare", "f32", "  r = $P compare(p0, p1), direction=LE", "pred"},
      {"convert", "f32",
       "  m = $A multiply(p0, p1)\n  k = f32[] constant(16)\n  kb = $A broadcast(k), dimensions={}\n"
       "  s = $A multiply(m, kb)\n  r = $I convert(s)",
       "s32"},
      {"clamp_scalar_bounds", "f32",
       "  lo = f32[] constant(-0.5)\n  hi = f32[] constant(0.75)\n  r = $A clamp(lo, p0, hi)", "f32"},
      {"int_mul_add", "s32", "  m = $I multiply(p0, p1)\n  r = $I add(m, p0)", "s32"},
  };
}

std::vector<Case> ElementwiseCases() {
  std::vector<Case> out;
  for (const EwOp& op : EwOps()) {
    for (const Config& cfg : Configs2D()) {
      std::string a = Ty(op.type, cfg.dims);
      std::string body = absl::StrCat("  p0 = $A parameter(0), sharding=$S\n  p1 = $A parameter(1), sharding=$S\n",
                                      op.body, "\n  ROOT out = ", Ty(op.rtype, cfg.dims), " copy(r)");
      out.push_back(NoCollectives(Make(absl::StrCat("elementwise/", op.name, "/", cfg.tag),
                                       Mod(cfg.n, body, "",
                                           {{"$A", a}, {"$P", Ty("pred", cfg.dims)}, {"$I", Ty("s32", cfg.dims)},
                                            {"$S", cfg.sharding}}))));
    }
  }
  // One operand tiled, the other replicated: the replicated one is cut locally.
  for (const char* opname : {"add", "select", "int_mul_add"}) {
    for (const Config& cfg : Configs2D()) {
      if (cfg.tag != "n2_rows" && cfg.tag != "n4_2x2_iota" && cfg.tag != "n8_4x2_T" && cfg.tag != "n4_mesh_yx")
        continue;
      for (const EwOp& o : EwOps()) {
        if (o.name != opname) continue;
        std::string body =
            absl::StrCat("  p0 = $A parameter(0), sharding=$S\n  p1 = $A parameter(1), sharding={replicated}\n", o.body,
                         "\n  ROOT out = ", Ty(o.rtype, cfg.dims), " copy(r)");
        Case c = Make(absl::StrCat("elementwise_mixed/", o.name, "/", cfg.tag),
                      Mod(cfg.n, body, "",
                          {{"$A", Ty(o.type, cfg.dims)},
                           {"$P", Ty("pred", cfg.dims)},
                           {"$I", Ty("s32", cfg.dims)},
                           {"$S", cfg.sharding}}));
        out.push_back(AtLeast(NoCollectives(c), "dynamic-slice"));
      }
    }
  }
  // Operands split differently: correctness only (the partitioner picks which to move).
  out.push_back(Make("elementwise_mismatch/add/n2_rows_vs_cols", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  p1 = f32[8,6] parameter(1), sharding={devices=[1,2]0,1}
  ROOT r = f32[8,6] add(p0, p1))")));
  out.push_back(Make("elementwise_mismatch/mul/n4_2x2_vs_rows_uneven", Mod(4, R"(
  p0 = f32[6,5] parameter(0), sharding={devices=[2,2]<=[4]}
  p1 = f32[6,5] parameter(1), sharding={devices=[4,1]3,1,2,0}
  ROOT r = f32[6,5] multiply(p0, p1))")));
  return out;
}

// ---- broadcast, transpose, reshape ----------------------------------------------------------------

std::vector<Case> BroadcastCases() {
  std::vector<Case> out;
  // A row vector broadcast along rows, added to a split matrix: the vector needs only a local cut.
  struct B {
    std::string tag;
    int64_t n;
    int64_t rows, cols;
    std::string vec_sharding, mat_sharding;
    bool clear;  // no collective needed
  };
  std::vector<B> bs = {
      {"n2_rows_vec_rep", 2, 8, 6, "{replicated}", "{devices=[2,1]0,1}", true},
      {"n2_cols_vec_split", 2, 8, 6, "{devices=[2]0,1}", "{devices=[1,2]0,1}", true},
      {"n4_2x2_vec_partrep", 4, 8, 6, "{devices=[2,2]0,2,1,3 last_tile_dim_replicate}", "{devices=[2,2]<=[4]}", true},
      {"n4_2x2_vec_rep", 4, 6, 5, "{replicated}", "{devices=[2,2]<=[4]}", true},
      {"n8_4x2_uneven_vec_rep", 8, 6, 5, "{replicated}", "{devices=[4,2]<=[8]}", true},
      {"n4_vec_split_other_devices", 4, 8, 8, "{devices=[4]3,2,1,0}", "{devices=[1,4]<=[4]}", false},
      {"n8_mesh", 8, 8, 8, "{mesh['x'=2,'y'=4], [{'y'}]}", "{mesh['x'=2,'y'=4], [{'x'}, {'y'}]}", true},
  };
  for (const B& b : bs) {
    std::string body = absl::StrCat("  v = f32[", b.cols, "] parameter(0), sharding=", b.vec_sharding,
                                    "\n  m = f32[", b.rows, ",", b.cols, "] parameter(1), sharding=", b.mat_sharding,
                                    "\n  bv = f32[", b.rows, ",", b.cols, "] broadcast(v), dimensions={1}",
                                    "\n  ROOT r = f32[", b.rows, ",", b.cols, "] add(bv, m)");
    Case c = Make(absl::StrCat("broadcast/row_vector/", b.tag), Mod(b.n, body));
    out.push_back(b.clear ? NoCollectives(c) : c);
  }
  out.push_back(NoCollectives(Make("broadcast/scalar/n4_rows", Mod(4, R"(
  s = f32[] parameter(0)
  m = f32[6,3] parameter(1), sharding={devices=[4,1]<=[4]}
  bs = f32[6,3] broadcast(s), dimensions={}
  ROOT r = f32[6,3] multiply(bs, m))"))));
  // The broadcast's own result sharding decides (a constraint on it), its operand unsplit.
  out.push_back(NoCollectives(Make("broadcast/constrained_3d/n8", Mod(8, R"(
  v = f32[4,6] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  b = f32[4,3,6] broadcast(v), dimensions={0,2}
  ROOT r = f32[4,3,6] custom-call(b), custom_call_target="Sharding", sharding={devices=[2,4,1]<=[8]})"))));
  return out;
}

std::vector<Case> TransposeCases() {
  std::vector<Case> out;
  for (const Config& cfg : Configs2D()) {
    if (cfg.tag == "n2_cols_perm" || cfg.tag == "n4_rows_6of4" || cfg.tag == "n4_mesh_yx" || cfg.tag == "n8_4x2_T" ||
        cfg.tag == "n4_cols_partrep") {
      std::string body = absl::StrCat("  p0 = ", Ty("f32", cfg.dims), " parameter(0), sharding=", cfg.sharding,
                                      "\n  ROOT t = ", Ty("f32", {cfg.dims[1], cfg.dims[0]}),
                                      " transpose(p0), dimensions={1,0}");
      out.push_back(NoCollectives(Make(absl::StrCat("transpose/2d/", cfg.tag), Mod(cfg.n, body))));
    }
  }
  out.push_back(NoCollectives(Make("transpose/3d/n4", Mod(4, R"(
  p0 = f32[2,4,6] parameter(0), sharding={devices=[2,2,1]<=[4]}
  ROOT t = f32[6,2,4] transpose(p0), dimensions={2,0,1})"))));
  // Transposed and then constrained back to the operand's split: the split moves to the
  // other dim, one all-to-all.
  out.push_back(OnlyCollective(Make("transpose/resplit/n2", Mod(2, R"(
  p0 = f32[8,8] parameter(0), sharding={devices=[2,1]0,1}
  t = f32[8,8] transpose(p0), dimensions={1,0}
  ROOT r = f32[8,8] custom-call(t), custom_call_target="Sharding", sharding={devices=[2,1]0,1})")),
                               "all-to-all"));
  return out;
}

std::vector<Case> ReshapeCases() {
  std::vector<Case> out;
  struct R {
    std::string tag;
    int64_t n;
    std::vector<int64_t> in, outd;
    std::string sharding;
    bool clear;
  };
  std::vector<R> rs = {
      {"merge/n2", 2, {8, 6}, {48}, "{devices=[2,1]0,1}", true},
      {"merge/n4", 4, {8, 6}, {48}, "{devices=[4,1]<=[4]}", true},
      {"merge/n8", 8, {8, 3}, {24}, "{devices=[8,1]<=[8]}", true},
      {"split/n4", 4, {48}, {8, 6}, "{devices=[4]<=[4]}", true},
      {"split_minor/n2", 2, {4, 6}, {4, 2, 3}, "{devices=[1,2]0,1}", true},
      {"merge3/n2", 2, {2, 3, 4}, {6, 4}, "{devices=[2,1,1]0,1}", true},
      {"merge_uneven/n4", 4, {6, 4}, {24}, "{devices=[4,1]<=[4]}", false},
      {"regroup/n4", 4, {4, 6}, {2, 12}, "{devices=[4,1]<=[4]}", false},
      {"split_partrep/n8", 8, {12, 2}, {3, 4, 2}, "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", false},
  };
  for (const R& r : rs) {
    std::string body = absl::StrCat("  p0 = ", Ty("f32", r.in), " parameter(0), sharding=", r.sharding,
                                    "\n  ROOT r = ", Ty("f32", r.outd), " reshape(p0)");
    Case c = Make(absl::StrCat("reshape/", r.tag), Mod(r.n, body));
    out.push_back(r.clear ? NoCollectives(c) : c);
  }
  return out;
}

// ---- slice, pad, concatenate, reverse, dynamic-slice, dynamic-update-slice -------------------------

std::vector<Case> DataMovementCases() {
  std::vector<Case> out;
  // slice
  out.push_back(NoCollectives(Make("slice/unsplit_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  ROOT s = f32[8,4] slice(p0), slice={[0:8], [1:5]})"))));
  out.push_back(NoCollectives(Make("slice/unsplit_dim_uneven/n4", Mod(4, R"(
  p0 = f32[6,7] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT s = f32[6,3] slice(p0), slice={[0:6], [2:7:2]})"))));
  out.push_back(Make("slice/split_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  ROOT s = f32[6,6] slice(p0), slice={[1:7], [0:6]})")));
  out.push_back(Make("slice/strided_split_dim/n4", Mod(4, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT s = f32[3,6] slice(p0), slice={[1:8:3], [0:6]})")));
  out.push_back(Make("slice/both_dims/n4_2x2", Mod(4, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,2]<=[4]}
  ROOT s = f32[4,3] slice(p0), slice={[2:6], [1:4]})")));
  out.push_back(Make("slice/uneven/n8", Mod(8, R"(
  p0 = f32[6,10] parameter(0), sharding={devices=[2,4]<=[8]}
  ROOT s = f32[5,7] slice(p0), slice={[1:6], [2:9]})")));
  // pad
  out.push_back(NoCollectives(Make("pad/unsplit_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  c = f32[] constant(0.5)
  ROOT p = f32[8,9] pad(p0, c), padding=0_0x1_2)"))));
  out.push_back(NoCollectives(Make("pad/interior_unsplit_dim/n4", Mod(4, R"(
  p0 = f32[6,4] parameter(0), sharding={devices=[4,1]<=[4]}
  c = f32[] constant(-1)
  ROOT p = f32[6,7] pad(p0, c), padding=0_0_0x0_0_1)"))));
  out.push_back(Make("pad/split_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  c = f32[] constant(0.5)
  ROOT p = f32[11,6] pad(p0, c), padding=1_2x0_0)")));
  out.push_back(Make("pad/negative_split_dim/n4", Mod(4, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  c = f32[] constant(2)
  ROOT p = f32[7,8] pad(p0, c), padding=-2_1x1_1)")));
  out.push_back(Make("pad/both_dims/n4_2x2_uneven", Mod(4, R"(
  p0 = f32[5,5] parameter(0), sharding={devices=[2,2]<=[4]}
  c = f32[] constant(3)
  ROOT p = f32[7,9] pad(p0, c), padding=1_1x0_0_1)")));
  // concatenate
  out.push_back(NoCollectives(Make("concatenate/unsplit_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  p1 = f32[8,4] parameter(1), sharding={devices=[2,1]0,1}
  ROOT c = f32[8,10] concatenate(p0, p1), dimensions={1})"))));
  out.push_back(NoCollectives(Make("concatenate/unsplit_dim/n4_partrep", Mod(4, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  p1 = f32[8,3] parameter(1), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  p2 = f32[8,1] parameter(2), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  ROOT c = f32[8,10] concatenate(p0, p1, p2), dimensions={1})"))));
  out.push_back(Make("concatenate/split_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  p1 = f32[4,6] parameter(1), sharding={devices=[2,1]0,1}
  ROOT c = f32[12,6] concatenate(p0, p1), dimensions={0})")));
  out.push_back(Make("concatenate/split_dim_uneven/n4", Mod(4, R"(
  p0 = f32[5,6] parameter(0), sharding={devices=[4,1]<=[4]}
  p1 = f32[3,6] parameter(1), sharding={replicated}
  ROOT c = f32[8,6] concatenate(p0, p1), dimensions={0})")));
  // reverse
  out.push_back(NoCollectives(Make("reverse/unsplit_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  ROOT r = f32[8,6] reverse(p0), dimensions={1})"))));
  out.push_back(Make("reverse/split_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  ROOT r = f32[8,6] reverse(p0), dimensions={0})")));
  out.push_back(Make("reverse/both_dims_uneven/n4", Mod(4, R"(
  p0 = f32[6,5] parameter(0), sharding={devices=[2,2]<=[4]}
  ROOT r = f32[6,5] reverse(p0), dimensions={0,1})")));
  out.push_back(Make("reverse/split_dim_uneven/n4", Mod(4, R"(
  p0 = f32[6,3] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT r = f32[6,3] reverse(p0), dimensions={0})")));
  // dynamic-slice: indices from parameters (random, so often clamped) or constants
  out.push_back(NoCollectives(Make("dynamic_slice/unsplit_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT ds = f32[8,3] dynamic-slice(p0, i, j), dynamic_slice_sizes={8,3})"))));
  out.push_back(NoCollectives(Make("dynamic_slice/unsplit_dim_const/n4", Mod(4, R"(
  p0 = f32[6,6] parameter(0), sharding={devices=[4,1]<=[4]}
  i = s32[] constant(0)
  j = s32[] constant(2)
  ROOT ds = f32[6,2] dynamic-slice(p0, i, j), dynamic_slice_sizes={6,2})"))));
  out.push_back(Make("dynamic_slice/split_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT ds = f32[3,6] dynamic-slice(p0, i, j), dynamic_slice_sizes={3,6})")));
  out.push_back(Make("dynamic_slice/both_dims/n4_2x2", Mod(4, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,2]<=[4]}
  i = s32[] constant(3)
  j = s32[] constant(1)
  ROOT ds = f32[4,4] dynamic-slice(p0, i, j), dynamic_slice_sizes={4,4})")));
  // dynamic-update-slice
  out.push_back(NoCollectives(Make("dynamic_update_slice/unsplit_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  u = f32[8,2] parameter(1), sharding={devices=[2,1]0,1}
  i = s32[] constant(0)
  j = s32[] parameter(2)
  ROOT d = f32[8,6] dynamic-update-slice(p0, u, i, j))"))));
  out.push_back(Make("dynamic_update_slice/split_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  u = f32[3,6] parameter(1)
  i = s32[] parameter(2)
  j = s32[] constant(0)
  ROOT d = f32[8,6] dynamic-update-slice(p0, u, i, j))")));
  out.push_back(Make("dynamic_update_slice/split_dim_const/n4_uneven", Mod(4, R"(
  p0 = f32[6,5] parameter(0), sharding={devices=[4,1]<=[4]}
  u = f32[2,5] parameter(1), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  i = s32[] constant(3)
  j = s32[] constant(0)
  ROOT d = f32[6,5] dynamic-update-slice(p0, u, i, j))")));
  out.push_back(Make("dynamic_update_slice/update_split/n8", Mod(8, R"(
  p0 = f32[8,8] parameter(0)
  u = f32[8,4] parameter(1), sharding={devices=[8,1]<=[8]}
  i = s32[] constant(0)
  j = s32[] constant(3)
  ROOT d = f32[8,8] dynamic-update-slice(p0, u, i, j))")));
  return out;
}

// ---- dot -----------------------------------------------------------------------------------------

std::vector<Case> DotCases() {
  std::vector<Case> out;
  struct D {
    std::string tag;
    int64_t n;
    int64_t m, k, nn;
    std::string ls, rs;
    int kind;  // 0: correctness only, 1: no collective, 2: exactly one all-reduce and nothing else,
               // 3: at least one all-reduce
  };
  std::vector<D> ds = {
      {"rows_x_rep/n2", 2, 8, 8, 6, "{devices=[2,1]0,1}", "{replicated}", 1},
      {"rows_x_rep/n4", 4, 8, 8, 6, "{devices=[4,1]<=[4]}", "{replicated}", 1},
      {"rows_x_rep/n8", 8, 8, 4, 6, "{devices=[8,1]<=[8]}", "{replicated}", 1},
      {"rows_x_rep_uneven/n4", 4, 6, 8, 5, "{devices=[4,1]<=[4]}", "{replicated}", 1},
      {"rep_x_cols/n2", 2, 8, 8, 6, "{replicated}", "{devices=[1,2]0,1}", 1},
      {"rep_x_cols_uneven/n4", 4, 4, 6, 6, "{replicated}", "{devices=[1,4]<=[4]}", 1},
      {"rows_x_cols/n4_partrep", 4, 8, 6, 8, "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
       "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}", 1},
      {"split_contraction/n2", 2, 8, 8, 6, "{devices=[1,2]0,1}", "{devices=[2,1]0,1}", 2},
      {"split_contraction/n4", 4, 4, 8, 6, "{devices=[1,4]<=[4]}", "{devices=[4,1]<=[4]}", 2},
      {"split_contraction/n8", 8, 4, 8, 4, "{devices=[1,8]<=[8]}", "{devices=[8,1]<=[8]}", 2},
      {"split_contraction_perm/n4", 4, 4, 8, 6, "{devices=[1,4]3,1,0,2}", "{devices=[4,1]3,1,0,2}", 2},
      {"rows_and_contraction/n4", 4, 8, 8, 6, "{devices=[2,2]<=[4]}",
       "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}", 3},
      {"mesh_contraction/n4", 4, 8, 8, 4, "{mesh['x'=2,'y'=2], [{'x'}, {'y'}]}", "{mesh['x'=2,'y'=2], [{'y'}, {}]}",
       3},
      {"contraction_2x4/n8", 8, 4, 8, 6, "{devices=[2,4]<=[8]}", "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
       3},
      {"rows_x_rows/n2", 2, 8, 8, 6, "{devices=[2,1]0,1}", "{devices=[2,1]0,1}", 0},
      {"cols_x_cols/n4_uneven", 4, 6, 6, 5, "{devices=[1,4]<=[4]}", "{devices=[1,4]<=[4]}", 0},
      {"contraction_uneven/n4", 4, 4, 6, 4, "{devices=[1,4]<=[4]}", "{devices=[4,1]<=[4]}", 0},
      {"contraction_other_devices/n2", 2, 4, 8, 4, "{devices=[1,2]0,1}", "{devices=[2,1]1,0}", 0},
  };
  for (const D& d : ds) {
    std::string body = absl::StrCat("  a = f32[", d.m, ",", d.k, "] parameter(0), sharding=", d.ls, "\n  b = f32[",
                                    d.k, ",", d.nn, "] parameter(1), sharding=", d.rs, "\n  ROOT d = f32[", d.m, ",",
                                    d.nn, "] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
    Case c = Make(absl::StrCat("dot/matmul/", d.tag), Mod(d.n, body));
    if (d.kind == 1) c = NoCollectives(c);
    if (d.kind == 2) c = OnlyCollective(c, "all-reduce");
    if (d.kind == 3) c = AtLeast(c, "all-reduce");
    out.push_back(c);
  }
  // Batched: [B,M,K] x [B,K,N].
  struct BD {
    std::string tag;
    int64_t n;
    int64_t k;  // contraction size
    std::string ls, rs;
    int kind;
  };
  std::vector<BD> bds = {
      {"batch/n2", 2, 6, "{devices=[2,1,1]0,1}", "{devices=[2,1,1]0,1}", 1},
      {"batch/n4", 4, 6, "{devices=[4,1,1]<=[4]}", "{devices=[4,1,1]<=[4]}", 1},
      {"batch_lhs_only/n2", 2, 6, "{devices=[2,1,1]0,1}", "{replicated}", 1},
      {"batch_and_rows/n4", 4, 6, "{devices=[2,2,1]<=[4]}", "{devices=[2,1,1,2]<=[4] last_tile_dim_replicate}", 1},
      {"batch_contraction/n2", 2, 6, "{devices=[1,1,2]0,1}", "{devices=[1,2,1]0,1}", 2},
      {"batch_and_contraction/n8", 8, 8, "{devices=[2,1,4]<=[8]}", "{devices=[2,4,1]<=[8]}", 2},
      {"batch_and_contraction_uneven/n8", 8, 6, "{devices=[2,1,4]<=[8]}", "{devices=[2,4,1]<=[8]}", 0},
      {"batch_mesh/n4", 4, 6, "{mesh['x'=2,'y'=2], [{'x','y'}, {}, {}]}", "{mesh['x'=2,'y'=2], [{'x','y'}, {}, {}]}",
       1},
      {"batch_vs_rows/n2", 2, 6, "{devices=[2,1,1]0,1}", "{devices=[1,1,2]0,1}", 0},
  };
  for (const BD& d : bds) {
    std::string body = absl::StrCat("  a = f32[4,4,", d.k, "] parameter(0), sharding=", d.ls, "\n  b = f32[4,", d.k,
                                    ",5] parameter(1), sharding=", d.rs,
                                    "\n  ROOT d = f32[4,4,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                                    "rhs_batch_dims={0}, rhs_contracting_dims={1}");
    Case c = Make(absl::StrCat("dot/batched/", d.tag), Mod(d.n, body));
    if (d.kind == 1) c = NoCollectives(c);
    if (d.kind == 2) c = OnlyCollective(c, "all-reduce");
    out.push_back(c);
  }
  // A result constraint unlike what the operands give.
  out.push_back(Make("dot/constrained_result/n2", Mod(2, R"(
  a = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  b = f32[6,4] parameter(1)
  d = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[8,4] custom-call(d), custom_call_target="Sharding", sharding={devices=[1,2]0,1})")));
  // Vector-matrix with an integer type (exact).
  out.push_back(OnlyCollective(Make("dot/int_vecmat_contraction/n4", Mod(4, R"(
  a = s32[8] parameter(0), sharding={devices=[4]<=[4]}
  b = s32[8,3] parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT d = s32[3] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})")),
                               "all-reduce"));
  return out;
}

// ---- reduce --------------------------------------------------------------------------------------

std::vector<Case> ReduceCases() {
  std::vector<Case> out;
  struct Rd {
    std::string tag;
    int64_t n;
    std::vector<int64_t> dims;
    std::string sharding;
    std::string reducer, init, reduced;  // reducer name, init constant, reduced dims
    int kind;  // 0 correctness, 1 no collective, 2 only one all-reduce
  };
  std::vector<Rd> rds = {
      {"sum_unsplit/n2", 2, {8, 6}, "{devices=[2,1]0,1}", "add", "0", "1", 1},
      {"sum_split/n2", 2, {8, 6}, "{devices=[2,1]0,1}", "add", "0", "0", 2},
      {"sum_split/n8", 8, {8, 6}, "{devices=[8,1]<=[8]}", "add", "0", "0", 2},
      {"max_split/n4", 4, {8, 6}, "{devices=[4,1]<=[4]}", "max", "-inf", "0", 2},
      {"min_split/n2", 2, {4, 6}, "{devices=[1,2]1,0}", "min", "inf", "1", 2},
      {"prod_split/n2", 2, {4, 6}, "{devices=[1,2]0,1}", "mul", "1", "1", 2},
      {"sum_all/n4_2x2", 4, {8, 6}, "{devices=[2,2]<=[4]}", "add", "0", "0,1", 2},
      {"sum_split_partrep/n4", 4, {8, 6}, "{devices=[1,2,2]<=[4] last_tile_dim_replicate}", "add", "0", "1", 2},
      {"sum_split_mesh/n4", 4, {8, 6}, "{mesh['x'=2,'y'=2], [{'y'}, {'x'}]}", "add", "0", "0", 2},
      {"max_unsplit_uneven/n4", 4, {6, 5}, "{devices=[4,1]<=[4]}", "max", "-inf", "1", 1},
      {"sum_split_uneven/n4", 4, {6, 5}, "{devices=[4,1]<=[4]}", "add", "0", "0", 0},
      {"max_split_uneven/n4", 4, {6, 5}, "{devices=[4,1]<=[4]}", "max", "-inf", "0", 0},
      {"max_split_uneven_2d/n8", 8, {6, 5}, "{devices=[4,2]<=[8]}", "max", "-inf", "0,1", 0},
      {"sum_nonidentity_init/n2", 2, {8, 6}, "{devices=[2,1]0,1}", "add", "1.5", "0", 0},
      {"max_finite_init/n2", 2, {8, 6}, "{devices=[2,1]0,1}", "max", "0.25", "0", 0},
  };
  for (const Rd& r : rds) {
    std::vector<int64_t> kept;
    std::vector<std::string> red = absl::StrSplit(r.reduced, ',');
    for (int64_t d = 0; d < (int64_t)r.dims.size(); ++d)
      if (std::find(red.begin(), red.end(), std::to_string(d)) == red.end()) kept.push_back(r.dims[d]);
    std::string body = absl::StrCat("  p0 = ", Ty("f32", r.dims), " parameter(0), sharding=", r.sharding,
                                    "\n  z = f32[] constant(", r.init, ")\n  ROOT r = ", Ty("f32", kept),
                                    " reduce(p0, z), dimensions={", r.reduced, "}, to_apply=", r.reducer);
    Case c = Make(absl::StrCat("reduce/", r.tag), Mod(r.n, body));
    if (r.kind == 1) c = NoCollectives(c);
    if (r.kind == 2) c = OnlyCollective(c, "all-reduce");
    out.push_back(c);
  }
  out.push_back(OnlyCollective(Make("reduce/int_sum_split/n8", Mod(8, R"(
  p0 = s32[8,3] parameter(0), sharding={devices=[8,1]<=[8]}
  z = s32[] constant(0)
  ROOT r = s32[3] reduce(p0, z), dimensions={0}, to_apply=addi)")),
                               "all-reduce"));
  out.push_back(OnlyCollective(Make("reduce/3d_two_dims/n4", Mod(4, R"(
  p0 = f32[4,4,6] parameter(0), sharding={devices=[2,2,1]<=[4]}
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p0, z), dimensions={0,2}, to_apply=add)")),
                               "all-reduce"));
  // Variadic (argmax): partial results do not combine with an all-reduce.
  const char* argmax = R"(
  p0 = f32[$R,$C] parameter(0), sharding=$S
  io = s32[$R,$C] iota(), iota_dimension=$D
  z = f32[] constant(-inf)
  zi = s32[] constant(0)
  ROOT r = (f32[$K], s32[$K]) reduce(p0, io, z, zi), dimensions={$D}, to_apply=argmax)";
  out.push_back(NoCollectives(Make("reduce/argmax_unsplit/n2",
                                   Mod(2, argmax, "",
                                       {{"$R", "8"}, {"$C", "6"}, {"$K", "8"}, {"$D", "1"},
                                        {"$S", "{devices=[2,1]0,1}"}}))));
  out.push_back(Make("reduce/argmax_split/n2", Mod(2, argmax, "",
                                                    {{"$R", "8"}, {"$C", "6"}, {"$K", "6"}, {"$D", "0"},
                                                     {"$S", "{devices=[2,1]0,1}"}})));
  out.push_back(Make("reduce/argmax_split_uneven/n4", Mod(4, argmax, "",
                                                           {{"$R", "6"}, {"$C", "5"}, {"$K", "6"}, {"$D", "1"},
                                                            {"$S", "{devices=[2,2]<=[4]}"}})));
  // softmax over rows: split rows need nothing, split columns all-reduce.
  const char* softmax = R"(
  p0 = f32[8,6] parameter(0), sharding=$S
  e = f32[8,6] exponential(p0)
  z = f32[] constant(0)
  s = f32[8] reduce(e, z), dimensions={1}, to_apply=add
  sb = f32[8,6] broadcast(s), dimensions={0}
  ROOT r = f32[8,6] divide(e, sb))";
  out.push_back(NoCollectives(Make("reduce/softmax_rows/n4", Mod(4, softmax, "", {{"$S", "{devices=[4,1]<=[4]}"}}))));
  out.push_back(AtLeast(Make("reduce/softmax_cols/n2", Mod(2, softmax, "", {{"$S", "{devices=[1,2]0,1}"}})),
                        "all-reduce"));
  return out;
}

// ---- sort ----------------------------------------------------------------------------------------

std::vector<Case> SortCases() {
  std::vector<Case> out;
  out.push_back(NoCollectives(Make("sort/unsplit_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  ROOT s = f32[8,6] sort(p0), dimensions={1}, to_apply=lt)"))));
  out.push_back(NoCollectives(Make("sort/unsplit_dim_uneven/n4", Mod(4, R"(
  p0 = f32[6,5] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT s = f32[6,5] sort(p0), dimensions={1}, to_apply=lt)"))));
  out.push_back(Make("sort/split_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  ROOT s = f32[8,6] sort(p0), dimensions={0}, to_apply=lt)")));
  out.push_back(NoCollectives(Make("sort/key_value_unsplit/n4", Mod(4, R"(
  k = f32[6,5] parameter(0), sharding={devices=[4,1]<=[4]}
  v = s32[6,5] parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT s = (f32[6,5], s32[6,5]) sort(k, v), dimensions={1}, to_apply=lt_kv)"))));
  out.push_back(Make("sort/key_value_split/n8", Mod(8, R"(
  k = f32[8,4] parameter(0), sharding={devices=[2,4]<=[8]}
  v = s32[8,4] parameter(1), sharding={devices=[2,4]<=[8]}
  ROOT s = (f32[8,4], s32[8,4]) sort(k, v), dimensions={1}, to_apply=lt_kv)")));
  out.push_back(Make("sort/1d/n4", Mod(4, R"(
  p0 = f32[10] parameter(0), sharding={devices=[4]<=[4]}
  ROOT s = f32[10] sort(p0), dimensions={0}, to_apply=lt)")));
  return out;
}

// ---- convolution ---------------------------------------------------------------------------------

std::vector<Case> ConvolutionCases() {
  std::vector<Case> out;
  struct Cv {
    std::string tag;
    int64_t n;
    std::vector<int64_t> x, w, o;
    std::string xs, ws, window;
    int kind;  // 0 correctness, 1 no collective, 2 permutes only (halo), at least `permutes`
    int permutes = 0;
  };
  const std::string same = "{size=3x3 pad=1_1x1_1}";
  std::vector<Cv> cvs = {
      {"batch/n2", 2, {2, 8, 8, 3}, {3, 3, 3, 4}, {2, 8, 8, 4}, "{devices=[2,1,1,1]0,1}", "{replicated}", same, 1},
      {"batch/n4_uneven", 4, {6, 4, 4, 2}, {3, 3, 2, 3}, {6, 4, 4, 3}, "{devices=[4,1,1,1]<=[4]}", "{replicated}",
       same, 1},
      {"out_feature/n2", 2, {2, 6, 6, 3}, {3, 3, 3, 4}, {2, 6, 6, 4}, "{replicated}", "{devices=[1,1,1,2]0,1}", same,
       1},
      {"out_feature/n4_uneven", 4, {2, 6, 6, 3}, {3, 3, 3, 6}, {2, 6, 6, 6}, "{replicated}",
       "{devices=[1,1,1,4]<=[4]}", same, 1},
      {"batch_and_feature/n4", 4, {2, 6, 6, 3}, {3, 3, 3, 4}, {2, 6, 6, 4},
       "{devices=[2,1,1,1,2]<=[4] last_tile_dim_replicate}",
       "{devices=[1,1,1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}", same, 1},
      {"spatial/n2", 2, {2, 8, 8, 3}, {3, 3, 3, 4}, {2, 8, 8, 4}, "{devices=[1,2,1,1]0,1}", "{replicated}", same, 2, 2},
      {"spatial/n4", 4, {2, 8, 8, 3}, {3, 3, 3, 4}, {2, 8, 8, 4}, "{devices=[1,4,1,1]<=[4]}", "{replicated}", same, 2,
       2},
      {"spatial_2d/n4", 4, {2, 8, 8, 3}, {3, 3, 3, 4}, {2, 8, 8, 4}, "{devices=[1,2,2,1]<=[4]}", "{replicated}", same,
       2, 4},
      {"spatial_5x5/n2", 2, {1, 8, 6, 2}, {5, 5, 2, 3}, {1, 8, 6, 3}, "{devices=[1,2,1,1]1,0}", "{replicated}",
       "{size=5x5 pad=2_2x2_2}", 2, 2},
      {"batch_and_spatial/n8", 8, {2, 8, 8, 3}, {3, 3, 3, 4}, {2, 8, 8, 4}, "{devices=[2,2,2,1]<=[8]}",
       "{replicated}", same, 2, 4},
      {"spatial_mesh/n4", 4, {2, 8, 8, 3}, {3, 3, 3, 4}, {2, 8, 8, 4}, "{mesh['x'=2,'y'=2], [{}, {'y'}, {}, {}]}",
       "{replicated}", same, 2, 2},
      {"spatial_partrep/n4", 4, {2, 8, 8, 3}, {3, 3, 3, 4}, {2, 8, 8, 4},
       "{devices=[1,2,1,1,2]0,1,2,3 last_tile_dim_replicate}", "{replicated}", same, 2, 2},
      {"spatial_stride2/n2", 2, {2, 8, 8, 3}, {3, 3, 3, 4}, {2, 4, 4, 4}, "{devices=[1,2,1,1]0,1}", "{replicated}",
       "{size=3x3 stride=2x2 pad=1_1x1_1}", 0},
      {"spatial_valid/n4", 4, {2, 8, 8, 3}, {3, 3, 3, 4}, {2, 6, 6, 4}, "{devices=[1,4,1,1]<=[4]}", "{replicated}",
       "{size=3x3}", 0},
      {"spatial_uneven/n4", 4, {1, 6, 6, 2}, {3, 3, 2, 2}, {1, 6, 6, 2}, "{devices=[1,4,1,1]<=[4]}", "{replicated}",
       same, 0},
      {"spatial_dilated/n2", 2, {1, 8, 8, 2}, {3, 3, 2, 2}, {1, 8, 8, 2}, "{devices=[1,2,1,1]0,1}", "{replicated}",
       "{size=3x3 pad=2_2x2_2 rhs_dilate=2x2}", 0},
      {"input_feature/n2", 2, {2, 6, 6, 4}, {3, 3, 4, 2}, {2, 6, 6, 2}, "{devices=[1,1,1,2]0,1}",
       "{devices=[1,1,2,1]0,1}", same, 0},
  };
  // The result constrained to the split the operands give.
  std::vector<Cv> constrained = {
      {"out_feature_constrained/n2", 2, {2, 6, 6, 3}, {3, 3, 3, 4}, {2, 6, 6, 4}, "{replicated}",
       "{devices=[1,1,1,2]0,1}", same, 1},
      {"out_feature_constrained/n4_uneven", 4, {2, 6, 6, 3}, {3, 3, 3, 6}, {2, 6, 6, 6}, "{replicated}",
       "{devices=[1,1,1,4]<=[4]}", same, 1},
      {"batch_and_feature_constrained/n4", 4, {2, 6, 6, 3}, {3, 3, 3, 4}, {2, 6, 6, 4},
       "{devices=[2,1,1,1,2]<=[4] last_tile_dim_replicate}",
       "{devices=[1,1,1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}", same, 1},
  };
  const std::vector<std::string> constrained_out = {"{devices=[1,1,1,2]0,1}", "{devices=[1,1,1,4]<=[4]}",
                                                    "{devices=[2,1,1,2]<=[4]}"};
  for (size_t i = 0; i < constrained.size(); ++i) {
    const Cv& c = constrained[i];
    std::string body = absl::StrCat("  x = ", Ty("f32", c.x), " parameter(0), sharding=", c.xs, "\n  w = ",
                                    Ty("f32", c.w), " parameter(1), sharding=", c.ws, "\n  k = ", Ty("f32", c.o),
                                    " convolution(x, w), window=", c.window, ", dim_labels=b01f_01io->b01f",
                                    "\n  ROOT c = ", Ty("f32", c.o), " custom-call(k), custom_call_target=\"Sharding\", "
                                    "sharding=", constrained_out[i]);
    out.push_back(NoCollectives(Make(absl::StrCat("convolution/", c.tag), Mod(c.n, body))));
  }
  for (const Cv& c : cvs) {
    std::string body = absl::StrCat("  x = ", Ty("f32", c.x), " parameter(0), sharding=", c.xs, "\n  w = ",
                                    Ty("f32", c.w), " parameter(1), sharding=", c.ws, "\n  ROOT c = ", Ty("f32", c.o),
                                    " convolution(x, w), window=", c.window, ", dim_labels=b01f_01io->b01f");
    Case k = Make(absl::StrCat("convolution/", c.tag), Mod(c.n, body));
    if (c.kind == 1) k = NoCollectives(k);
    if (c.kind == 2) {
      for (const std::string& op : kCollectives)
        if (op != "collective-permute") k.exactly[op] = 0;
      k = AtLeast(k, "collective-permute", c.permutes);
    }
    out.push_back(k);
  }
  // A window wider than a shard (7 over shards of 2): no neighbour halo, the input is gathered.
  out.push_back(Make("convolution/window_wider_than_shard/n4", Mod(4, R"(
  x = f32[1,8,4,2] parameter(0), sharding={devices=[1,4,1,1]<=[4]}
  w = f32[7,1,2,2] parameter(1)
  ROOT c = f32[1,8,4,2] convolution(x, w), window={size=7x1 pad=3_3x0_0}, dim_labels=b01f_01io->b01f)")));
  // Causal (left-only) padding: one halo, from the previous device.
  {
    Case k = Make("convolution/causal_1d/n4", Mod(4, R"(
  x = f32[2,16,3] parameter(0), sharding={devices=[1,4,1]<=[4]}
  w = f32[3,3,2] parameter(1)
  ROOT c = f32[2,16,2] convolution(x, w), window={size=3 pad=2_0}, dim_labels=b0f_0io->b0f)"));
    for (const std::string& op : kCollectives) k.exactly[op] = 0;
    k.exactly["collective-permute"] = 1;
    out.push_back(k);
  }
  // 1-D, feature dim first: a halo of two on each side.
  Case k = Make("convolution/1d_spatial/n4", Mod(4, R"(
  x = f32[2,3,16] parameter(0), sharding={devices=[1,1,4]<=[4]}
  w = f32[2,3,5] parameter(1)
  ROOT c = f32[2,2,16] convolution(x, w), window={size=5 pad=2_2}, dim_labels=bf0_oi0->bf0)"));
  for (const std::string& op : kCollectives)
    if (op != "collective-permute") k.exactly[op] = 0;
  out.push_back(AtLeast(k, "collective-permute", 2));
  return out;
}

// ---- control flow --------------------------------------------------------------------------------

std::vector<Case> ControlFlowCases() {
  std::vector<Case> out;
  const char* loop_comps = R"(
cond {
  s = (s32[], $A) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(3)
  ROOT c = pred[] compare(i, k), direction=LT
}

body {
  s = (s32[], $A) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = $A get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  t = $A tanh(x)
  h = f32[] constant(0.5)
  hb = $A broadcast(h), dimensions={}
  x2 = $A add(t, hb)
  ROOT r = (s32[], $A) tuple(i2, x2)
}
)";
  const char* loop_entry = R"(
  p0 = $A parameter(0), sharding=$S
  z = s32[] constant(0)
  t = (s32[], $A) tuple(z, p0)
  w = (s32[], $A) while(t), condition=cond, body=body
  ROOT r = $A get-tuple-element(w), index=1)";
  for (const Config& cfg : Configs2D()) {
    if (cfg.tag != "n2_rows" && cfg.tag != "n4_rows_6of4" && cfg.tag != "n4_2x2_iota" && cfg.tag != "n8_4x2_T" &&
        cfg.tag != "n4_mesh_yx")
      continue;
    out.push_back(NoCollectives(Make(absl::StrCat("while/elementwise_state/", cfg.tag),
                                     Mod(cfg.n, loop_entry, loop_comps,
                                         {{"$A", Ty("f32", cfg.dims)}, {"$S", cfg.sharding}}))));
  }
  // A loop whose body multiplies the row-split state by a replicated weight: no collective.
  const char* dot_loop = R"(
cond {
  s = (s32[], f32[8,6], f32[6,6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(2)
  ROOT c = pred[] compare(i, k), direction=LT
}

body {
  s = (s32[], f32[8,6], f32[6,6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8,6] get-tuple-element(s), index=1
  w = f32[6,6] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  d = f32[8,6] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[8,6] tanh(d)
  ROOT r = (s32[], f32[8,6], f32[6,6]) tuple(i2, t, w)
}
)";
  out.push_back(NoCollectives(Make("while/dot_state/n4", Mod(4, R"(
  x = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  w = f32[6,6] parameter(1), sharding={replicated}
  z = s32[] constant(0)
  t = (s32[], f32[8,6], f32[6,6]) tuple(z, x, w)
  l = (s32[], f32[8,6], f32[6,6]) while(t), condition=cond, body=body
  ROOT r = f32[8,6] get-tuple-element(l), index=1)",
                                                             dot_loop))));
  // A loop whose body reduces over the split dim: an all-reduce inside the loop.
  const char* red_loop = R"(
cond {
  s = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(2)
  ROOT c = pred[] compare(i, k), direction=LT
}

body {
  s = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8,4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  z = f32[] constant(0)
  m = f32[4] reduce(x, z), dimensions={0}, to_apply=add
  q = f32[] constant(0.125)
  qb = f32[4] broadcast(q), dimensions={}
  mm = f32[4] multiply(m, qb)
  mb = f32[8,4] broadcast(mm), dimensions={1}
  x2 = f32[8,4] subtract(x, mb)
  ROOT r = (s32[], f32[8,4]) tuple(i2, x2)
}
)";
  out.push_back(AtLeast(Make("while/reduce_in_body/n2", Mod(2, R"(
  x = f32[8,4] parameter(0), sharding={devices=[2,1]0,1}
  z = s32[] constant(0)
  t = (s32[], f32[8,4]) tuple(z, x)
  l = (s32[], f32[8,4]) while(t), condition=cond, body=body
  ROOT r = f32[8,4] get-tuple-element(l), index=1)",
                                                          red_loop)),
                        "all-reduce"));
  // conditional on a predicate
  const char* branches = R"(
tb {
  a = $A parameter(0)
  ROOT r = $A exponential(a)
}

fb {
  a = $A parameter(0)
  n = $A negate(a)
  ROOT r = $A multiply(n, a)
}

b2 {
  a = $A parameter(0)
  ROOT r = $A abs(a)
}
)";
  for (const char* pv : {"true", "false"}) {
    out.push_back(NoCollectives(Make(absl::StrCat("conditional/pred_", pv, "/n2_rows"), Mod(2, R"(
  p = pred[] constant($V)
  x = $A parameter(0), sharding=$S
  ROOT c = $A conditional(p, x, x), true_computation=tb, false_computation=fb)",
                                                                                         branches,
                                                                                         {{"$A", "f32[8,6]"},
                                                                                          {"$S", "{devices=[2,1]0,1}"},
                                                                                          {"$V", pv}}))));
  }
  out.push_back(NoCollectives(Make("conditional/pred_param/n4_2x2_uneven", Mod(4, R"(
  p = pred[] parameter(1)
  x = $A parameter(0), sharding=$S
  ROOT c = $A conditional(p, x, x), true_computation=tb, false_computation=fb)",
                                                                               branches,
                                                                               {{"$A", "f32[6,5]"},
                                                                                {"$S", "{devices=[2,2]<=[4]}"}}))));
  for (const char* idx : {"1", "2", "7"}) {
    out.push_back(NoCollectives(Make(absl::StrCat("conditional/index_", idx, "/n8"), Mod(8, R"(
  i = s32[] constant($V)
  x = $A parameter(0), sharding=$S
  ROOT c = $A conditional(i, x, x, x), branch_computations={tb, fb, b2})",
                                                                                          branches,
                                                                                          {{"$A", "f32[8,6]"},
                                                                                           {"$S", "{devices=[4,2]<=[8]}"},
                                                                                           {"$V", idx}}))));
  }
  // A loop whose condition reads the split state (a reduce inside the condition).
  const char* data_loop = R"(
cond {
  s = (s32[], f32[8,6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8,6] get-tuple-element(s), index=1
  a = f32[8,6] abs(x)
  z = f32[] constant(0)
  t = f32[] reduce(a, z), dimensions={0,1}, to_apply=add
  lim = f32[] constant(400)
  small = pred[] compare(t, lim), direction=LT
  k = s32[] constant(10)
  few = pred[] compare(i, k), direction=LT
  ROOT c = pred[] and(small, few)
}

body {
  s = (s32[], f32[8,6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8,6] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  two = f32[] constant(2)
  tb = f32[8,6] broadcast(two), dimensions={}
  x2 = f32[8,6] multiply(x, tb)
  ROOT r = (s32[], f32[8,6]) tuple(i2, x2)
}
)";
  for (const Config& cfg : Configs2D()) {
    if (cfg.dims != std::vector<int64_t>{8, 6}) continue;
    out.push_back(Make(absl::StrCat("while/data_dependent_condition/", cfg.tag), Mod(cfg.n, R"(
  x = f32[8,6] parameter(0), sharding=$S
  z = s32[] constant(0)
  t = (s32[], f32[8,6]) tuple(z, x)
  ROOT l = (s32[], f32[8,6]) while(t), condition=cond, body=body)",
                                                                                     data_loop, {{"$S", cfg.sharding}})));
  }
  // A conditional whose predicate is computed from split data.
  out.push_back(Make("conditional/data_dependent_predicate/n4", Mod(4, R"(
  x = f32[8,6] parameter(0), sharding={devices=[2,2]<=[4]}
  z = f32[] constant(0)
  t = f32[] reduce(x, z), dimensions={0,1}, to_apply=add
  p = pred[] compare(t, z), direction=GT
  ROOT c = f32[8,6] conditional(p, x, x), true_computation=tb, false_computation=fb)",
                                                                         branches, {{"$A", "f32[8,6]"}})));
  // A loop whose state is transposed each trip: the split moves inside the body.
  const char* tr_loop = R"(
cond {
  s = (s32[], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(3)
  ROOT c = pred[] compare(i, k), direction=LT
}

body {
  s = (s32[], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8,8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  t = f32[8,8] transpose(x), dimensions={1,0}
  io = s32[8,8] iota(), iota_dimension=0
  f = f32[8,8] convert(io)
  x2 = f32[8,8] add(t, f)
  ROOT r = (s32[], f32[8,8]) tuple(i2, x2)
}
)";
  out.push_back(Make("while/transpose_state/n2", Mod(2, R"(
  x = f32[8,8] parameter(0), sharding={devices=[2,1]0,1}
  z = s32[] constant(0)
  t = (s32[], f32[8,8]) tuple(z, x)
  l = (s32[], f32[8,8]) while(t), condition=cond, body=body
  ROOT r = f32[8,8] get-tuple-element(l), index=1)",
                                                     tr_loop)));
  out.push_back(Make("while/transpose_state/n4_2x2", Mod(4, R"(
  x = f32[8,8] parameter(0), sharding={devices=[2,2]<=[4]}
  z = s32[] constant(0)
  t = (s32[], f32[8,8]) tuple(z, x)
  l = (s32[], f32[8,8]) while(t), condition=cond, body=body
  ROOT r = (s32[], f32[8,8]) copy(l))",
                                                          tr_loop)));
  // Branches whose results split differently.
  const char* split_branches = R"(
tb {
  a = f32[8,8] parameter(0)
  ROOT r = f32[8,8] transpose(a), dimensions={1,0}
}

fb {
  a = f32[8,8] parameter(0)
  ROOT r = f32[8,8] custom-call(a), custom_call_target="Sharding", sharding={devices=[1,2]0,1}
}
)";
  for (const char* pv : {"true", "false"}) {
    out.push_back(Make(absl::StrCat("conditional/branch_shardings_differ_", pv, "/n2"), Mod(2, R"(
  p = pred[] constant($V)
  x = f32[8,8] parameter(0), sharding={devices=[2,1]0,1}
  ROOT c = f32[8,8] conditional(p, x, x), true_computation=tb, false_computation=fb)",
                                                                                            split_branches,
                                                                                            {{"$V", pv}})));
  }
  // operands with different shardings into the branches
  out.push_back(Make("conditional/mixed_operands/n2", Mod(2, R"(
  p = pred[] parameter(2)
  x = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  y = f32[8,6] parameter(1), sharding={devices=[1,2]0,1}
  ROOT c = f32[8,6] conditional(p, x, y), true_computation=tb, false_computation=fb)",
                                                          branches, {{"$A", "f32[8,6]"}})));
  return out;
}

// ---- iota, constant, gather, scatter -------------------------------------------------------------

std::vector<Case> MiscCases() {
  std::vector<Case> out;
  const char* iota = R"(
  p0 = f32[$R,$C] parameter(0), sharding=$S
  io = s32[$R,$C] iota(), iota_dimension=$D
  f = f32[$R,$C] convert(io)
  ROOT r = f32[$R,$C] add(p0, f))";
  out.push_back(AtLeast(NoCollectives(Make("iota/split_dim/n2", Mod(2, iota, "",
                                                                     {{"$R", "8"}, {"$C", "6"}, {"$D", "0"},
                                                                      {"$S", "{devices=[2,1]0,1}"}}))),
                        "dynamic-slice"));
  out.push_back(NoCollectives(Make("iota/split_dim_uneven/n4", Mod(4, iota, "",
                                                                    {{"$R", "6"}, {"$C", "5"}, {"$D", "0"},
                                                                     {"$S", "{devices=[4,1]<=[4]}"}}))));
  out.push_back(NoCollectives(Make("iota/other_dim/n8", Mod(8, iota, "",
                                                             {{"$R", "8"}, {"$C", "6"}, {"$D", "1"},
                                                              {"$S", "{devices=[2,4]<=[8]}"}}))));
  out.push_back(NoCollectives(Make("constant/array/n4", Mod(4, R"(
  p0 = f32[4,3] parameter(0), sharding={devices=[2,2]<=[4]}
  c = f32[4,3] constant({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}})
  ROOT r = f32[4,3] multiply(p0, c))"))));
  out.push_back(NoCollectives(Make("constant/int_array/n2_uneven", Mod(2, R"(
  p0 = s32[3,2] parameter(0), sharding={devices=[2,1]1,0}
  c = s32[3,2] constant({{1, -2}, {3, -4}, {5, -6}})
  ROOT r = s32[3,2] subtract(p0, c))"))));
  // gather / scatter: run on whole operands (correctness only)
  out.push_back(Make("gather/rows/n2", Mod(2, R"(
  t = f32[8,4] parameter(0), sharding={devices=[2,1]0,1}
  i = s32[5] parameter(1)
  ROOT g = f32[5,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4})")));
  out.push_back(Make("gather/cols_split/n4", Mod(4, R"(
  t = f32[6,8] parameter(0), sharding={devices=[1,4]<=[4]}
  i = s32[3,1] parameter(1), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  ROOT g = f32[3,8] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8})")));
  out.push_back(Make("scatter/add_rows/n2", Mod(2, R"(
  o = f32[8,4] parameter(0), sharding={devices=[2,1]0,1}
  i = s32[3] parameter(1)
  u = f32[3,4] parameter(2)
  ROOT s = f32[8,4] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add)")));
  out.push_back(Make("scatter/add_2x2/n4", Mod(4, R"(
  o = f32[6,6] parameter(0), sharding={devices=[2,2]<=[4]}
  i = s32[4] parameter(1)
  u = f32[4,6] parameter(2), sharding={devices=[2,2]<=[4]}
  ROOT s = f32[6,6] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add)")));
  // a small MLP: row split through two dots and a nonlinearity
  out.push_back(NoCollectives(Make("mlp/rows/n8", Mod(8, R"(
  x = f32[8,6] parameter(0), sharding={devices=[8,1]<=[8]}
  w1 = f32[6,5] parameter(1)
  w2 = f32[5,3] parameter(2)
  h = f32[8,5] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  a = f32[8,5] tanh(h)
  ROOT y = f32[8,3] dot(a, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0})"))));
  // Megatron: column-split w1, row-split w2: one all-reduce.
  out.push_back(OnlyCollective(Make("mlp/megatron/n4", Mod(4, R"(
  x = f32[4,6] parameter(0)
  w1 = f32[6,8] parameter(1), sharding={devices=[1,4]<=[4]}
  w2 = f32[8,3] parameter(2), sharding={devices=[4,1]<=[4]}
  h = f32[4,8] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  a = f32[4,8] tanh(h)
  ROOT y = f32[4,3] dot(a, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0})")),
                               "all-reduce"));
  // Shards holding nothing but padding (5 over 8, 3 over 4).
  out.push_back(NoCollectives(Make("tiny/exp_5_over_8/n8", Mod(8, R"(
  p0 = f32[5] parameter(0), sharding={devices=[8]<=[8]}
  ROOT r = f32[5] exponential(p0))"))));
  out.push_back(Make("tiny/sum_3_over_4/n4", Mod(4, R"(
  p0 = f32[3,2] parameter(0), sharding={devices=[4,1]<=[4]}
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(p0, z), dimensions={0}, to_apply=add)")));
  out.push_back(Make("tiny/reshard_3_over_4_to_cols/n4", Mod(4, R"(
  p0 = f32[3,4] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT r = f32[3,4] custom-call(p0), custom_call_target="Sharding", sharding={devices=[1,4]<=[4]})")));
  out.push_back(Make("tiny/dot_5_over_8/n8", Mod(8, R"(
  a = f32[5,4] parameter(0), sharding={devices=[8,1]<=[8]}
  b = f32[4,3] parameter(1)
  d = f32[5,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = f32[5,3] custom-call(d), custom_call_target="Sharding", sharding={replicated})")));
  out.push_back(Make("tiny/slice_2x3_over_4x2/n8", Mod(8, R"(
  p0 = f32[2,3] parameter(0), sharding={devices=[4,2]<=[8]}
  ROOT r = f32[2,2] slice(p0), slice={[0:2], [1:3]})")));
  // Size-1 dims around a split one.
  out.push_back(NoCollectives(Make("reshape/drop_unit_dim/n4", Mod(4, R"(
  p0 = f32[8,1,6] parameter(0), sharding={devices=[4,1,1]<=[4]}
  ROOT r = f32[8,6] reshape(p0))"))));
  out.push_back(NoCollectives(Make("reshape/add_unit_dims/n2", Mod(2, R"(
  p0 = f32[4,6] parameter(0), sharding={devices=[1,2]0,1}
  ROOT r = f32[1,4,1,6] reshape(p0))"))));
  // Two contracting dims, one split on both operands.
  out.push_back(OnlyCollective(Make("dot/two_contracting_dims/n2", Mod(2, R"(
  a = f32[4,2,6] parameter(0), sharding={devices=[1,2,1]0,1}
  b = f32[2,6,3] parameter(1), sharding={devices=[2,1,1]0,1}
  ROOT d = f32[4,3] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1})")),
                               "all-reduce"));
  // Depthwise (feature_group_count) with a spatial split.
  out.push_back(Make("convolution/depthwise_spatial/n2", Mod(2, R"(
  x = f32[1,8,8,4] parameter(0), sharding={devices=[1,2,1,1]0,1}
  w = f32[3,3,1,4] parameter(1)
  ROOT c = f32[1,8,8,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4)")));
  out.push_back(Make("convolution/depthwise_batch/n4", Mod(4, R"(
  x = f32[4,6,6,2] parameter(0), sharding={devices=[4,1,1,1]<=[4]}
  w = f32[3,3,1,2] parameter(1)
  ROOT c = f32[4,6,6,2] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2)")));
  // A reduce whose result is constrained to a split.
  out.push_back(NoCollectives(Make("reduce/constrained_result/n4", Mod(4, R"(
  p0 = f32[8,6] parameter(0)
  z = f32[] constant(0)
  s = f32[8] reduce(p0, z), dimensions={1}, to_apply=add
  ROOT r = f32[8] custom-call(s), custom_call_target="Sharding", sharding={devices=[4]<=[4]})"))));
  // reduce-window (no partitioning rule: whole operands).
  out.push_back(Make("reduce_window/split_dim/n2", Mod(2, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  z = f32[] constant(-inf)
  ROOT r = f32[4,6] reduce-window(p0, z), window={size=2x3 stride=2x1 pad=0_0x1_1}, to_apply=max)")));
  // A dynamic-update-slice whose index along the split (full) dim comes from a parameter.
  out.push_back(NoCollectives(Make("dynamic_update_slice/param_index_split_dim/n4", Mod(4, R"(
  p0 = f32[6,6] parameter(0), sharding={devices=[4,1]<=[4]}
  u = f32[6,3] parameter(1), sharding={devices=[4,1]<=[4]}
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT d = f32[6,6] dynamic-update-slice(p0, u, i, j))"))));
  // Concatenated operands split differently on the other dim.
  out.push_back(Make("concatenate/mixed_operands/n4", Mod(4, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  p1 = f32[8,2] parameter(1), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  ROOT c = f32[8,8] concatenate(p0, p1), dimensions={1})")));
  // A tuple result whose elements split differently.
  out.push_back(NoCollectives(Make("tuple/mixed_outputs/n4", Mod(4, R"(
  a = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  b = f32[6,8] parameter(1), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  c = s32[5] parameter(2)
  ea = f32[8,6] exponential(a)
  nb = f32[6,8] negate(b)
  ROOT t = (f32[8,6], f32[6,8], s32[5]) tuple(ea, nb, c))"))));
  // Result kept replicated (propagation to the output not allowed): gathered at the end.
  out.push_back(AtLeast(Make("output/replicated_result/n4",
                             Mod(4, R"(
  p0 = f32[8,6] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT r = f32[8,6] exponential(p0))",
                                 "", {}, /*output_free=*/false)),
                        "all-gather"));
  return out;
}

// ---- reshard through Sharding custom calls -------------------------------------------------------

std::vector<Case> ReshardCases() {
  std::vector<Case> out;
  struct Rs {
    std::string tag;
    int64_t n;
    std::vector<int64_t> dims;
    std::string from, to;
    std::string only;  // the one collective expected; "none": none; "": correctness only
  };
  std::vector<Rs> rs = {
      {"rows_to_cols/n2", 2, {8, 8}, "{devices=[2,1]0,1}", "{devices=[1,2]0,1}", "all-to-all"},
      {"rows_to_cols/n4", 4, {8, 8}, "{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}", "all-to-all"},
      {"rows_to_cols/n8", 8, {8, 8}, "{devices=[8,1]<=[8]}", "{devices=[1,8]<=[8]}", "all-to-all"},
      {"cols_to_rows/n4", 4, {4, 8}, "{devices=[1,4]<=[4]}", "{devices=[4,1]<=[4]}", "all-to-all"},
      {"3d_move_split/n4", 4, {4, 4, 4}, "{devices=[2,2,1]<=[4]}", "{devices=[2,1,2]<=[4]}", "all-to-all"},
      {"permute/n2", 2, {8, 6}, "{devices=[2,1]0,1}", "{devices=[2,1]1,0}", "collective-permute"},
      {"permute/n4", 4, {8, 6}, "{devices=[4,1]<=[4]}", "{devices=[4,1]3,2,1,0}", "collective-permute"},
      {"permute_2x2/n4", 4, {8, 6}, "{devices=[2,2]<=[4]}", "{devices=[2,2]<=[2,2]T(1,0)}", "collective-permute"},
      {"permute_uneven/n4", 4, {6, 5}, "{devices=[4,1]<=[4]}", "{devices=[4,1]1,2,3,0}", "collective-permute"},
      {"permute/n8", 8, {8, 8}, "{devices=[2,4]<=[8]}", "{devices=[2,4]<=[4,2]T(1,0)}", "collective-permute"},
      {"permute_partial/n4", 4, {8, 6}, "{devices=[4,1]<=[4]}", "{devices=[4,1]0,2,1,3}", "collective-permute"},
      {"permute_partrep/n4", 4, {8, 6}, "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
       "{devices=[2,1,2]2,3,0,1 last_tile_dim_replicate}", "collective-permute"},
      {"rep_to_rows/n2", 2, {8, 6}, "{replicated}", "{devices=[2,1]0,1}", "none"},
      {"rep_to_2x2/n4", 4, {8, 6}, "{replicated}", "{devices=[2,2]<=[4]}", "none"},
      {"rep_to_partrep/n8", 8, {8, 6}, "{replicated}", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", "none"},
      {"rep_to_mesh/n4", 4, {6, 5}, "{replicated}", "{mesh['x'=2,'y'=2], [{'y'}, {'x'}]}", "none"},
      {"partrep_to_2x2/n4", 4, {8, 6}, "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", "{devices=[2,2]<=[4]}",
       "none"},
      {"rows_to_rep/n2", 2, {8, 6}, "{devices=[2,1]0,1}", "{replicated}", "all-gather"},
      {"2x2_to_rep/n4", 4, {8, 6}, "{devices=[2,2]<=[4]}", "{replicated}", ""},
      {"2x2_to_partrep/n4", 4, {8, 6}, "{devices=[2,2]<=[4]}", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
       "all-gather"},
      {"mesh_move_axis/n4", 4, {8, 8}, "{mesh['x'=2,'y'=2], [{'x'}, {}]}", "{mesh['x'=2,'y'=2], [{}, {'x'}]}", ""},
      {"rows_to_cols_uneven/n2", 2, {5, 6}, "{devices=[2,1]0,1}", "{devices=[1,2]0,1}", ""},
      {"rows_to_cols_uneven/n4", 4, {6, 6}, "{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}", ""},
      {"4x2_to_2x4/n8", 8, {8, 8}, "{devices=[4,2]<=[8]}", "{devices=[2,4]<=[8]}", ""},
      {"rows_to_2x2/n4", 4, {8, 8}, "{devices=[4,1]<=[4]}", "{devices=[2,2]<=[4]}", ""},
      {"int_rows_to_cols/n4", 4, {4, 4}, "{devices=[4,1]<=[4]}", "{devices=[1,4]<=[4]}", "all-to-all"},
  };
  for (const Rs& r : rs) {
    std::string t = r.tag.rfind("int_", 0) == 0 ? "s32" : "f32";
    std::string body = absl::StrCat("  p0 = ", Ty(t, r.dims), " parameter(0), sharding=", r.from, "\n  ROOT r = ",
                                    Ty(t, r.dims), " custom-call(p0), custom_call_target=\"Sharding\", sharding=", r.to);
    Case c = Make(absl::StrCat("reshard/", r.tag), Mod(r.n, body));
    if (r.only == "none") c = AtLeast(NoCollectives(c), "dynamic-slice");
    else if (!r.only.empty()) c = OnlyCollective(c, r.only);
    out.push_back(c);
  }
  // A constraint in the middle of a chain moves the split once.
  out.push_back(OnlyCollective(Make("reshard/chain_constraint/n2", Mod(2, R"(
  p0 = f32[8,8] parameter(0), sharding={devices=[2,1]0,1}
  e = f32[8,8] exponential(p0)
  c = f32[8,8] custom-call(e), custom_call_target="Sharding", sharding={devices=[1,2]0,1}
  ROOT n = f32[8,8] negate(c))")),
                               "all-to-all"));
  return out;
}

std::vector<Case> AllCases() {
  std::vector<Case> all;
  for (auto gen : {ElementwiseCases, BroadcastCases, TransposeCases, ReshapeCases, DataMovementCases, DotCases,
                   ReduceCases, SortCases, ConvolutionCases, ControlFlowCases, MiscCases, ReshardCases})
    for (Case& c : gen()) all.push_back(std::move(c));
  return all;
}

// Cases that fail because of partitioner defects; they run under the hidden tag
// [.spmd_known_bug] (`hloc_unit_tests "[spmd_known_bug]"`) and leave this list once fixed.
// Partitioner defects the generated cases found, fixed since (permutes now keep the devices that
// hold their tile, halo exchanges pair neighbours within a replica, sorts keep unsorted splits,
// convolutions take the kernel's output-feature split); a new defect goes here with a comment
// until fixed, so the main tag stays green.
const std::set<std::string> kKnownBugs = {};

// ---- the checks ----------------------------------------------------------------------------------

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Floats are multiples of 1/64 in [-2, 2) (sums and products of a few stay exact), integers in
// [-8, 8], preds either.
Literal RandomLiteral(const Shape& shape, uint64_t& state) {
  Literal l(shape);
  PrimitiveType t = shape.element_type();
  for (int64_t i = 0; i < l.element_count(); ++i) {
    uint64_t r = SplitMix(state);
    if (t == PrimitiveType::PRED) l.SetInt(i, static_cast<int64_t>(r & 1));
    else if (IsIntegral(t)) l.SetInt(i, static_cast<int64_t>(r % 17) - 8);
    else l.SetDouble(i, (static_cast<double>(r % 256) - 128.0) / 64.0);
  }
  return l;
}

int64_t CountOpcode(const HloModule& module, const std::string& op) {
  int64_t n = 0;
  for (const auto& c : module.computations())
    if (c)
      for (const auto& inst : c->instructions())
        if (inst && HloOpcodeString(inst->opcode()) == op) ++n;
  return n;
}

// Element-by-element: floats within a relative tolerance (plus a tiny absolute one), others exact.
void CheckSameValues(const Literal& got, const Literal& want) {
  std::vector<const Literal*> g = FlattenLeaves(got), w = FlattenLeaves(want);
  REQUIRE(g.size() == w.size());
  for (size_t leaf = 0; leaf < g.size(); ++leaf) {
    INFO("output leaf " << leaf);
    REQUIRE(g[leaf]->shape().element_type() == w[leaf]->shape().element_type());
    REQUIRE(g[leaf]->shape().dimensions() == w[leaf]->shape().dimensions());
    bool fp = IsFloatingPoint(w[leaf]->shape().element_type());
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < w[leaf]->element_count(); ++i) {
      bool ok;
      if (fp) {
        double a = g[leaf]->GetDouble(i), b = w[leaf]->GetDouble(i);
        ok = (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= 1e-5 * std::fabs(b) + 1e-6;
      } else {
        ok = g[leaf]->GetRawBits(i) == w[leaf]->GetRawBits(i);
      }
      if (!ok) {
        if (first < 0) first = i;
        ++bad;
      }
    }
    INFO("first differing element (linear index) " << first << ": got "
                                                    << (first >= 0 ? g[leaf]->GetDouble(first) : 0.0) << ", want "
                                                    << (first >= 0 ? w[leaf]->GetDouble(first) : 0.0));
    CHECK(bad == 0);
  }
}

void RunCase(const Case& c) {
  INFO("global module:\n" << c.text);
  auto global = ParseHloModule(c.text);
  INFO(global.status().ToString());
  REQUIRE(global.ok());
  uint64_t state = Fnv1a(c.name);
  std::vector<Literal> inputs;
  std::vector<Shape> global_shapes;
  std::vector<std::optional<HloSharding>> annotated;
  for (const HloInstruction* p : (*global)->entry_computation()->parameters()) {
    inputs.push_back(RandomLiteral(p->shape(), state));
    global_shapes.push_back(p->shape());
    annotated.push_back(p->attrs().sharding);
  }
  EvaluatorOptions eo;
  eo.max_loop_iterations = 1000;
  auto want = EvaluateModule(**global, inputs, eo);
  INFO("one-device evaluation: " << want.status().ToString());
  REQUIRE(want.ok());

  auto module = ParseHloModule(c.text);
  REQUIRE(module.ok());
  std::ostringstream warnings;
  std::streambuf* old = std::cerr.rdbuf(warnings.rdbuf());
  auto layout = spmd::PrepareSpmd(**module, true);
  std::cerr.rdbuf(old);
  INFO("partitioning: " << layout.status().ToString());
  REQUIRE(layout.ok());
  INFO("partitioner warnings:\n" << warnings.str());
  INFO("partitioned module:\n" << PrintModule(**module));
  CHECK(spmd::IsPartitioned(**module));
  absl::Status verified = VerifyModule(**module);
  INFO("verifier: " << verified.ToString());
  CHECK(verified.ok());

  // (b) per-device parameter shapes
  const HloComputation* entry = (*module)->entry_computation();
  REQUIRE(entry->parameters().size() == global_shapes.size());
  REQUIRE(layout->params.size() == global_shapes.size());
  for (const HloInstruction* p : entry->parameters()) {
    int64_t i = p->attrs().parameter_number;
    INFO("parameter " << i);
    HloSharding s = layout->params[i];
    if (annotated[i]) {
      auto norm = NormalizeSharding(*annotated[i], global_shapes[i]);
      REQUIRE(norm.ok());
      CHECK(ShardingToString(s) == ShardingToString(*norm));
      s = *norm;
    }
    CHECK(p->shape().dimensions() == ShardShape(s, global_shapes[i]).dimensions());
    CHECK(layout->global_params[i].dimensions() == global_shapes[i].dimensions());
  }

  // (a) semantic equivalence
  auto args = spmd::SplitInputs(*layout, inputs);
  INFO("split: " << args.status().ToString());
  REQUIRE(args.ok());
  REQUIRE((int64_t)args->size() == layout->num_devices());
  auto per_device = EvaluatePartitioned(**module, *args, eo);
  INFO("partitioned evaluation: " << per_device.status().ToString());
  REQUIRE(per_device.ok());
  auto got = spmd::JoinOutputs(*layout, *per_device);
  INFO("join: " << got.status().ToString());
  REQUIRE(got.ok());
  CheckSameValues(*got, *want);

  // (c) collectives
  int64_t collectives = 0;
  std::string counts;
  for (const std::string& op : kCollectives) {
    int64_t k = CountOpcode(**module, op);
    collectives += k;
    if (k) absl::StrAppend(&counts, op, "=", k, " ");
  }
  INFO("collectives: " << counts);
  if (c.no_collectives) CHECK(collectives == 0);
  for (const auto& [op, k] : c.exactly) {
    INFO("opcode " << op);
    CHECK(CountOpcode(**module, op) == k);
  }
  for (const auto& [op, k] : c.at_least) {
    INFO("opcode " << op);
    CHECK(CountOpcode(**module, op) >= k);
  }
}

TEST_CASE("spmd partitioner: generated op x sharding x partition-count cases", "[spmd_partitioner]") {
  for (const Case& c : AllCases()) {
    if (kKnownBugs.contains(c.name)) continue;
    DYNAMIC_SECTION(c.name) { RunCase(c); }
  }
}

TEST_CASE("spmd partitioner: the generator makes enough cases", "[spmd_partitioner]") {
  std::vector<Case> cases = AllCases();
  std::set<std::string> names;
  for (const Case& c : cases) CHECK(names.insert(c.name).second);  // unique, so -c selects one
  CHECK(cases.size() - kKnownBugs.size() >= 150);
  for (const std::string& name : kKnownBugs) {
    bool found = false;
    for (const Case& c : cases) found |= c.name == name;
    CHECK(found);
  }
}

// Partitioner defects the generated cases found (kKnownBugs); not part of [spmd_partitioner].
TEST_CASE("spmd partitioner: known bugs", "[.spmd_known_bug]") {
  for (const Case& c : AllCases())
    if (kKnownBugs.contains(c.name)) DYNAMIC_SECTION(c.name) { RunCase(c); }
}

}  // namespace
}  // namespace hloc
