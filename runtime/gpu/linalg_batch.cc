// The batched-or-not choice and the pointer arrays of the GPU linalg thunks (linalg_batch.h).
#include "runtime/gpu/linalg_batch.h"

#include <climits>
#include <cstdlib>

namespace hloc::runtime::gpu {

const char* LinalgPathName(LinalgPath p) { return p == LinalgPath::kBatched ? "batched" : "per-matrix"; }

LinalgPathOverride LinalgPathOverrideFromEnv() {
  const char* env = std::getenv("HLOC_GPU_LINALG");
  if (env == nullptr) return LinalgPathOverride::kAuto;
  const std::string v(env);
  if (v == "batched") return LinalgPathOverride::kBatched;
  if (v == "per-matrix") return LinalgPathOverride::kPerMatrix;
  return LinalgPathOverride::kAuto;
}

LinalgPath ChooseLinalgPath(const std::string& op, int64_t batch, int64_t rows, int64_t cols,
                            LinalgPathOverride force) {
  // Nothing to batch, or sizes the int-typed batched APIs cannot take.
  if (batch < 1 || rows < 1 || cols < 1 || batch > INT_MAX || rows > INT_MAX || cols > INT_MAX)
    return LinalgPath::kPerMatrix;
  if (op == "getrf" && rows != cols) return LinalgPath::kPerMatrix;  // getrfBatched is square only
  if (op != "getrf" && op != "potrf" && op != "trsm") return LinalgPath::kPerMatrix;
  if (force != LinalgPathOverride::kAuto)
    return force == LinalgPathOverride::kBatched ? LinalgPath::kBatched : LinalgPath::kPerMatrix;
  if (batch == 1) return LinalgPath::kPerMatrix;
  if (op == "trsm") return LinalgPath::kBatched;
  return rows / batch <= 128 ? LinalgPath::kBatched : LinalgPath::kPerMatrix;
}

LinalgBatchPlan PlanLinalgBatch(const std::string& op, LinalgPath path, int64_t batch, int64_t a_matrix_bytes,
                                int64_t out_matrix_bytes, size_t out_index) {
  LinalgBatchPlan plan;
  plan.path = path;
  plan.count = batch;
  if (path != LinalgPath::kBatched) return plan;
  if (op == "trsm") plan.arrays.push_back({0, a_matrix_bytes, 0});
  plan.arrays.push_back({out_index, out_matrix_bytes, 0});
  for (size_t i = 0; i < plan.arrays.size(); ++i) plan.arrays[i].offset = static_cast<int64_t>(i) * batch * 8;
  plan.scratch_bytes = static_cast<int64_t>(plan.arrays.size()) * batch * 8;
  return plan;
}

std::vector<uint64_t> BatchPointers(uint64_t base, int64_t stride_bytes, int64_t count) {
  std::vector<uint64_t> out(count > 0 ? count : 0);
  for (int64_t i = 0; i < count; ++i) out[i] = base + static_cast<uint64_t>(i) * static_cast<uint64_t>(stride_bytes);
  return out;
}

// One thread per pointer; `count` is at most INT_MAX (ChooseLinalgPath), so a 32-bit index does.
const char* BatchPointersPtx() {
  return R"PTX(.version 8.0
.target sm_80
.address_size 64

.visible .entry hloc_make_batch_pointers(.param .u64 p_base, .param .u64 p_stride, .param .u64 p_out,
                                         .param .u32 p_count)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<9>;
  ld.param.u64 %rd1, [p_base];
  ld.param.u64 %rd2, [p_stride];
  ld.param.u64 %rd3, [p_out];
  ld.param.u32 %r1, [p_count];
  cvta.to.global.u64 %rd4, %rd3;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.u32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvt.u64.u32 %rd5, %r5;
  mad.lo.u64 %rd6, %rd5, %rd2, %rd1;
  shl.b64 %rd7, %rd5, 3;
  add.u64 %rd8, %rd4, %rd7;
  st.global.u64 [%rd8], %rd6;
DONE:
  ret;
}
)PTX";
}

}  // namespace hloc::runtime::gpu
