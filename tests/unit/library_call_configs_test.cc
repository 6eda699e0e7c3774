// The backend_config JSON reader of the library calls (src/ir/custom_calls/library_call_configs.cc),
// which parses with nlohmann::json: malformed text is a located error, deep nesting is refused
// before parsing, and int64 fields are read whether written as numbers or as strings.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "ir/custom_calls/library_calls.h"

namespace hloc {
namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST_CASE("backend_config JSON: values parse through nlohmann", "[library][json]") {
  auto v = ParseJson(R"({"a": [1, 2.5, -3e2], "b": {"c": "x\"y"}, "t": true, "n": null})");
  REQUIRE(v.ok());
  CHECK((*v)["a"].size() == 3);
  CHECK((*v)["a"][2].get<double>() == -300);
  CHECK((*v)["b"]["c"].get<std::string>() == "x\"y");
  CHECK((*v)["t"].get<bool>());
  CHECK((*v)["n"].is_null());
}

TEST_CASE("backend_config JSON: malformed text is a located error", "[library][json]") {
  auto v = ParseJson(R"({"a": })");
  REQUIRE(!v.ok());
  CHECK_THAT(Message(v.status()), Catch::StartsWith("invalid JSON: line 1, column 7: "));
  CHECK_THAT(Message(v.status()), Catch::EndsWith(" at offset 6"));
  v = ParseJson("{\n  \"a\": 1\n  \"b\": 2}");
  REQUIRE(!v.ok());
  CHECK_THAT(Message(v.status()), Catch::Contains("line 3, column 5"));
  CHECK(!ParseJson("[1, 2").ok());
  CHECK(!ParseJson("{} x").ok());
  CHECK(!ParseJson("").ok());

  auto g = ParseGemmBackendConfig("{\"gemm_backend_config\":{\"beta\":1,}}");
  REQUIRE(!g.ok());
  CHECK_THAT(Message(g.status()), Catch::StartsWith("backend_config: invalid JSON: "));
  CHECK_THAT(Message(g.status()), Catch::Contains(" at offset "));
}

TEST_CASE("backend_config JSON: deep nesting is refused, not a stack overflow", "[library][json]") {
  // 65 levels below the top still parse; one more is an error naming the bracket's offset.
  CHECK(ParseJson(std::string(65, '[') + std::string(65, ']')).ok());
  auto v = ParseJson(std::string(66, '[') + std::string(66, ']'));
  REQUIRE(!v.ok());
  CHECK(Message(v.status()) == "invalid JSON: nesting too deep at offset 65");
  // Far deeper than any stack would take, and unterminated: still a plain error.
  v = ParseJson(std::string(1000000, '['));
  REQUIRE(!v.ok());
  CHECK_THAT(Message(v.status()), Catch::Contains("nesting too deep"));
  // Brackets inside strings are not nesting.
  CHECK(ParseJson("{\"k\":\"" + std::string(1000, '[') + "\"}").ok());
  auto g = ParseGemmBackendConfig("{\"gemm_backend_config\":{\"x\":" + std::string(200, '{'));
  REQUIRE(!g.ok());
  CHECK_THAT(Message(g.status()), Catch::StartsWith("backend_config: invalid JSON: nesting too deep at offset "));
}

TEST_CASE("backend_config JSON: int64 fields as strings or numbers", "[library][json]") {
  auto c = ParseGemmBackendConfig(
      R"({"gemm_backend_config":{"lhs_stride":"9007199254740993","rhs_stride":16,"beta":"0.5","alpha_real":"1",)"
      R"("selected_algorithm":"-3","autotune_workspace_size":33554432,"scale_mode":"2",)"
      R"("dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":[0]}}})");
  REQUIRE(c.ok());
  CHECK(c->lhs_stride == 9007199254740993);  // 2^53 + 1: exact, not through a double
  CHECK(c->rhs_stride == 16);
  CHECK(c->beta == 0.5);
  CHECK(c->alpha_real == 1);
  CHECK(c->selected_algorithm == -3);
  CHECK(c->autotune_workspace_size == 33554432);
  CHECK(c->scale_mode == 2);
  CHECK(c->dot_dimension_numbers.lhs_contracting_dimensions == std::vector<int64_t>{1});
  CHECK(c->dot_dimension_numbers.rhs_contracting_dimensions == std::vector<int64_t>{0});

  auto nan = ParseCudnnConvBackendConfig(R"({"cudnn_conv_backend_config":{"conv_result_scale":"NaN"}})");
  REQUIRE(nan.ok());
  CHECK(std::isnan(nan->conv_result_scale));

  auto bad = ParseGemmBackendConfig(R"({"gemm_backend_config":{"lhs_stride":"lots"}})");
  REQUIRE(!bad.ok());
  CHECK(Message(bad.status()) == "backend_config: lhs_stride is not a number");
  bad = ParseGemmBackendConfig(R"({"gemm_backend_config":{"rhs_stride":18446744073709551615}})");
  REQUIRE(!bad.ok());
  CHECK(Message(bad.status()) == "backend_config: rhs_stride out of range");
  bad = ParseGemmBackendConfig(R"({"gemm_backend_config":{"dot_dimension_numbers":{"lhs_batch_dimensions":3}}})");
  REQUIRE(!bad.ok());
  CHECK(Message(bad.status()) == "backend_config: lhs_batch_dimensions is not a list");
  bad = ParseGemmBackendConfig("[1]");
  REQUIRE(!bad.ok());
  CHECK(Message(bad.status()) == "backend_config is not a JSON object");
}

}  // namespace
}  // namespace hloc
