// The reference evaluator's "__hloc$radix_sort" (sort_calls.h): std::stable_sort of each row's
// positions by the masked key, then keys and values gathered by that permutation.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "eval/eval_ops_util.h"
#include "eval/library_calls.h"
#include "eval/sort_calls.h"

namespace hloc {
namespace {

absl::Status Bad(const HloInstruction& inst, const std::string& why) { return evalops::Malformed(inst, why); }

}  // namespace

absl::StatusOr<Literal> EvalRadixSortCall(const HloInstruction& inst, absl::Span<const Literal* const> ops) {
  absl::StatusOr<RadixSortConfig> config = ParseRadixSortCall(inst);
  if (!config.ok()) return config.status();
  if (ops.size() != 2) return Bad(inst, "takes two operands");
  const Literal& keys = *ops[0];
  const Literal& values = *ops[1];
  Literal sorted_keys(inst.shape().tuple_shapes(0));
  Literal sorted_values(inst.shape().tuple_shapes(1));
  Literal scratch(inst.shape().tuple_shapes(2));  // zero-filled
  const Shape& shape = keys.shape();
  const int64_t d = config->dimension;
  const int64_t n = shape.dimensions(d);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= shape.dimensions(i);
  for (int64_t i = d + 1; i < shape.rank(); ++i) inner *= shape.dimensions(i);
  const uint64_t mask = config->key_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << config->key_bits) - 1;
  const int vb = ByteWidth(values.element_type());
  std::vector<int64_t> perm(n);
  std::vector<uint64_t> row(n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const int64_t base = o * n * inner + in;
      for (int64_t i = 0; i < n; ++i) row[i] = keys.GetUint(base + i * inner) & mask;
      std::iota(perm.begin(), perm.end(), int64_t{0});
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return row[a] < row[b]; });
      for (int64_t i = 0; i < n; ++i) {
        const int64_t from = base + perm[i] * inner, to = base + i * inner;
        sorted_keys.SetUint(to, keys.GetUint(from));
        std::memcpy(sorted_values.untyped_data() + to * vb, values.untyped_data() + from * vb, vb);
      }
    }
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(sorted_keys));
  parts.push_back(std::move(sorted_values));
  parts.push_back(std::move(scratch));
  Literal out = Literal::MakeTuple(std::move(parts));
  out.mutable_shape() = inst.shape();
  return out;
}

}  // namespace hloc
