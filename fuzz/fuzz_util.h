// Helpers shared by the libFuzzer targets in fuzz/ (issue 17; docs/fuzz.md).
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace hloc_fuzz {

// A finding that is not a crash by itself (a round-trip difference): print what differs and
// abort, so that libFuzzer (and the replay main) report the input.
[[noreturn]] inline void Fail(const std::string& what, std::string_view a = {}, std::string_view b = {}) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  // HLOC_FUZZ_DUMP=DIR: both texts whole, as DIR/first.txt and DIR/second.txt (the excerpt below
  // is 400 bytes; a parse error's line may be far from the first difference).
  if (const char* dir = std::getenv("HLOC_FUZZ_DUMP"); dir != nullptr && *dir != '\0') {
    const std::string_view texts[] = {a, b};
    const char* const names[] = {"/first.txt", "/second.txt"};
    for (int k = 0; k < 2; ++k) {
      if (std::FILE* f = std::fopen((std::string(dir) + names[k]).c_str(), "wb")) {
        std::fwrite(texts[k].data(), 1, texts[k].size(), f);
        std::fclose(f);
      }
    }
    std::fprintf(stderr, "(whole texts in %s/first.txt and second.txt)\n", dir);
  }
  if (!a.empty() || !b.empty()) {
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    size_t line = 1;
    for (size_t k = 0; k < i; ++k) line += a[k] == '\n';
    std::fprintf(stderr, "first difference at byte %zu (line %zu)\n", i, line);
    const size_t from = i > 200 ? i - 200 : 0;
    std::fprintf(stderr, "--- first:\n%.*s\n--- second:\n%.*s\n", static_cast<int>(std::min<size_t>(a.size() - from, 400)),
                 a.data() + from, static_cast<int>(std::min<size_t>(b.size() - std::min(from, b.size()), 400)),
                 b.data() + std::min(from, b.size()));
  }
  std::abort();
}

}  // namespace hloc_fuzz
