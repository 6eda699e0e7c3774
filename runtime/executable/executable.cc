// Small facts about the executable format; serialization is in serialize.cc.
#include "runtime/executable/executable.h"

#include <set>
#include <utility>

namespace hloc::runtime {

int64_t ArrayShape::byte_size() const {
  int64_t n = element_size_in_bytes;
  for (int64_t d : dimensions) n *= d;
  return n;
}

const char* ThunkKindName(ThunkKind kind) {
  switch (kind) {
    case ThunkKind::kKernel: return "kKernel";
    case ThunkKind::kGemm: return "kGemm";
    case ThunkKind::kConvolution: return "kConvolution";
    case ThunkKind::kCopy: return "kCopy";
    case ThunkKind::kMemset: return "kMemset";
    case ThunkKind::kWhile: return "kWhile";
    case ThunkKind::kConditional: return "kConditional";
    case ThunkKind::kSequential: return "kSequential";
    case ThunkKind::kCustomCall: return "kCustomCall";
    case ThunkKind::kCollective: return "kCollective";
    case ThunkKind::kCommandBuffer: return "kCommandBuffer";
    case ThunkKind::kFft: return "kFft";
  }
  return "kUnknown";
}

int64_t DistinctArgumentBytes(const Thunk& t) {
  std::set<std::pair<int64_t, int64_t>> seen;
  int64_t bytes = 0;
  for (const BufferSlice& s : t.arguments)
    if (s.size > 0 && seen.insert({s.allocation, s.offset}).second) bytes += s.size;
  return bytes;
}

}  // namespace hloc::runtime
