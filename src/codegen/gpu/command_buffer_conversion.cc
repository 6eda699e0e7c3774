// CommandBufferConversionPass (see command_buffer_conversion.h).
#include "codegen/gpu/command_buffer_conversion.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace hloc::codegen::gpu {
namespace {

using runtime::Thunk;
using runtime::ThunkKind;
using runtime::ThunkSequence;

constexpr int kMaxDepth = 64;

// The command buffer's own argument list: every slice its body touches once, written if any
// body thunk writes it (the runtime uses it for dependencies and dumps).
void CollectArguments(const ThunkSequence& body, Thunk& cb) {
  for (const Thunk& t : body) {
    for (size_t i = 0; i < t.arguments.size(); ++i) {
      const runtime::BufferSlice& s = t.arguments[i];
      const bool w = i < t.written.size() && t.written[i];
      auto it = std::find_if(cb.arguments.begin(), cb.arguments.end(), [&](const runtime::BufferSlice& o) {
        return o.allocation == s.allocation && o.offset == s.offset && o.size == s.size;
      });
      if (it == cb.arguments.end()) {
        cb.arguments.push_back(s);
        cb.written.push_back(w);
      } else if (w) {
        cb.written[it - cb.arguments.begin()] = true;
      }
    }
  }
}

// The end of the longest prefix of seq[i, j) a graph may hold: every async collective started
// in it also ends in it, and none ends there that started before (NCCL work captured on the
// collective stream must join the capture again).
size_t BalancedEnd(const ThunkSequence& seq, size_t i, size_t j) {
  std::set<int64_t> open;
  size_t good = i;
  for (size_t k = i; k < j; ++k) {
    const Thunk& t = seq[k];
    if (t.kind == ThunkKind::kCollective && t.collective.async_id >= 0) {
      if (t.collective.op == "collective-done") {
        if (open.erase(t.collective.async_id) == 0) break;  // started outside the run
      } else {
        open.insert(t.collective.async_id);
      }
    }
    if (open.empty()) good = k + 1;
  }
  return good;
}

absl::StatusOr<int64_t> Convert(ThunkSequence& seq, const CommandBufferConversionOptions& o, int depth,
                                int64_t& counter) {
  if (depth > kMaxDepth) return absl::InvalidArgumentError("thunk sequences nested too deeply");
  int64_t made = 0;
  for (Thunk& t : seq) {
    for (ThunkSequence* nested : {&t.condition, &t.body}) {
      if (t.kind == ThunkKind::kCommandBuffer) continue;
      absl::StatusOr<int64_t> n = Convert(*nested, o, depth + 1, counter);
      if (!n.ok()) return n.status();
      made += *n;
    }
    for (ThunkSequence& branch : t.branches) {
      absl::StatusOr<int64_t> n = Convert(branch, o, depth + 1, counter);
      if (!n.ok()) return n.status();
      made += *n;
    }
  }
  ThunkSequence out;
  out.reserve(seq.size());
  size_t i = 0;
  while (i < seq.size()) {
    size_t j = i;
    while (j < seq.size() && o.kinds.count(seq[j].kind)) ++j;
    if (o.kinds.count(ThunkKind::kCollective)) j = BalancedEnd(seq, i, j);
    const int64_t run = static_cast<int64_t>(j - i);
    if (run > 0 && run >= std::max<int64_t>(1, o.min_graph_size)) {
      Thunk cb;
      cb.kind = ThunkKind::kCommandBuffer;
      cb.name = absl::StrCat("command_buffer.", counter++);
      cb.lanes = std::clamp<int64_t>(o.lanes, 1, 16);
      for (size_t k = i; k < j; ++k) cb.body.push_back(std::move(seq[k]));
      CollectArguments(cb.body, cb);
      out.push_back(std::move(cb));
      ++made;
      i = j;
      continue;
    }
    for (size_t k = i; k < std::max(j, i + 1); ++k) out.push_back(std::move(seq[k]));
    i = std::max(j, i + 1);
  }
  seq = std::move(out);
  return made;
}

}  // namespace

absl::StatusOr<std::set<runtime::ThunkKind>> ParseCommandBufferKinds(const std::string& list) {
  std::set<ThunkKind> kinds;
  for (absl::string_view piece : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    std::string p = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(piece));
    if (p == "FUSION" || p == "KERNEL") {
      kinds.insert(ThunkKind::kKernel);
    } else if (p == "CUBLAS" || p == "CUBLASLT" || p == "GEMM") {
      kinds.insert(ThunkKind::kGemm);
    } else if (p == "CUDNN" || p == "CONVOLUTION") {
      kinds.insert(ThunkKind::kConvolution);
    } else if (p == "COPY") {
      kinds.insert(ThunkKind::kCopy);
    } else if (p == "MEMSET") {
      kinds.insert(ThunkKind::kMemset);
    } else if (p == "COLLECTIVES" || p == "COLLECTIVE") {
      kinds.insert(ThunkKind::kCollective);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown command buffer kind '", p,
          "' (expected FUSION, CUBLAS, CUBLASLT, CUDNN, KERNEL, GEMM, CONVOLUTION, COPY, MEMSET or "
          "COLLECTIVES)"));
    }
  }
  return kinds;
}

absl::StatusOr<int64_t> RunCommandBufferConversion(runtime::ThunkSequence& thunks,
                                                   const CommandBufferConversionOptions& options) {
  if (!options.enabled || options.kinds.empty()) return 0;
  int64_t counter = 0;
  return Convert(thunks, options, 0, counter);
}

}  // namespace hloc::codegen::gpu
