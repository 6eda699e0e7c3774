// npy/npz reading and writing: the corpus's files, numpy's header variants, deflated and zip64
// archives, bit-pattern reinterpretation, and malformed bytes (which must give errors, never crashes).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <zlib.h>

#include "io/npy.h"
#include "io/zip.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;

const std::string kCorpus = std::string(HLOC_TESTS_DIR) + "/corpus";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TempPath(const std::string& name) {
  return (fs::temp_directory_path() / ("hloc_npy_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

// A .npy file made by hand, as numpy lays it out (v1.0, header padded to 64 bytes).
std::string MakeNpy(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  return out + header + data;
}

template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return s;
}

// Made by Python's zipfile exactly as numpy.savez_compressed writes (ZIP_DEFLATED, force_zip64):
// arg0 = float32 [[0, .5, 1], [1.5, 2, 2.5]], arg1 = bool [True, False, True, True].
const std::string kDeflatedNpz(
    "\x50\x4b\x03\x04\x2d\x00\x00\x00\x08\x00\x00\x00\x21\x00\x0b\xc0\xb0\x76\xff"
    "\xff\xff\xff\xff\xff\xff\xff\x08\x00\x14\x00\x61\x72\x67\x30\x2e\x6e\x70\x79"
    "\x01\x00\x10\x00\x98\x00\x00\x00\x00\x00\x00\x00\x57\x00\x00\x00\x00\x00\x00"
    "\x00\x9b\xec\x17\xea\x1b\x10\xc9\xc8\x50\xc6\x50\xad\x9e\x92\x5a\x9c\x5c\xa4"
    "\x6e\xa5\xa0\x6e\x93\x66\xa2\xae\xa3\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f"
    "\x5f\x94\x92\x0a\x12\x77\x4b\xcc\x29\x4e\x05\x8a\x17\x67\x24\x16\xa4\x02\xf9"
    "\x1a\x46\x3a\x0a\xc6\x9a\x3a\x0a\xb5\x0a\x64\x03\x2e\x06\x08\xb0\x67\x60\x68"
    "\x00\xe2\x03\x40\xcc\xe0\xc0\xc0\xa0\xe0\x00\x00\x50\x4b\x03\x04\x2d\x00\x00"
    "\x00\x08\x00\x00\x00\x21\x00\x82\xf4\x54\x3a\xff\xff\xff\xff\xff\xff\xff\xff"
    "\x08\x00\x14\x00\x61\x72\x67\x31\x2e\x6e\x70\x79\x01\x00\x10\x00\x84\x00\x00"
    "\x00\x00\x00\x00\x00\x48\x00\x00\x00\x00\x00\x00\x00\x9b\xec\x17\xea\x1b\x10"
    "\xc9\xc8\x50\xc6\x50\xad\x9e\x92\x5a\x9c\x5c\xa4\x6e\xa5\xa0\x5e\x93\x64\xa8"
    "\xae\xa3\xa0\x9e\x96\x5f\x54\x52\x94\x98\x17\x9f\x5f\x94\x92\x0a\x12\x77\x4b"
    "\xcc\x29\x4e\x05\x8a\x17\x67\x24\x16\xa4\x02\xf9\x1a\x26\x3a\x9a\x3a\x0a\xb5"
    "\x0a\x14\x00\x2e\x46\x06\x46\x46\x00\x50\x4b\x01\x02\x2d\x03\x2d\x00\x00\x00"
    "\x08\x00\x00\x00\x21\x00\x0b\xc0\xb0\x76\x57\x00\x00\x00\x98\x00\x00\x00\x08"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00\x00\x00\x61\x72"
    "\x67\x30\x2e\x6e\x70\x79\x50\x4b\x01\x02\x2d\x03\x2d\x00\x00\x00\x08\x00\x00"
    "\x00\x21\x00\x82\xf4\x54\x3a\x48\x00\x00\x00\x84\x00\x00\x00\x08\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x91\x00\x00\x00\x61\x72\x67\x31\x2e"
    "\x6e\x70\x79\x50\x4b\x05\x06\x00\x00\x00\x00\x02\x00\x02\x00\x6c\x00\x00\x00"
    "\x13\x01\x00\x00\x00\x00",
    405);

TEST_CASE("npz: every corpus npz file reads with argN/outN names", "[npy]") {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    std::string name = entry.path().filename().string();
    bool inputs = name.find(".inputs.npz") != std::string::npos;
    bool outputs = name.find(".outputs.npz") != std::string::npos;
    if (!inputs && !outputs) continue;
    ++files;
    INFO(name);
    auto arrays = ReadNpz(entry.path().string());
    REQUIRE(arrays.ok());
    REQUIRE(!arrays->empty());
    for (size_t i = 0; i < arrays->size(); ++i) {
      CHECK((*arrays)[i].name == (inputs ? "arg" : "out") + std::to_string(i));
      CHECK((*arrays)[i].literal.shape().IsArray());
    }
  }
  CHECK(files >= 40);
}

TEST_CASE("npz: the seed example's arrays have the right types, shapes and values", "[npy]") {
  auto in = ReadNpz(kCorpus + "/seed_example.small.inputs.npz");
  REQUIRE(in.ok());
  REQUIRE(in->size() == 2);
  CHECK((*in)[0].dtype == "|i1");
  CHECK((*in)[0].literal.shape().ToString(false) == "s8[64,32]");
  CHECK((*in)[1].dtype == "<u2");
  CHECK((*in)[1].literal.shape().ToString(false) == "u16[32,48]");
  // The bf16 parameter comes from uint16 bit patterns.
  auto bf16 = ReinterpretAs((*in)[1], Shape(PrimitiveType::BF16, {32, 48}));
  REQUIRE(bf16.ok());
  CHECK(bf16->element_type() == PrimitiveType::BF16);
  for (int64_t i = 0; i < bf16->element_count(); ++i) {
    REQUIRE(bf16->GetRawBits(i) == (*in)[1].literal.GetRawBits(i));
    REQUIRE(std::isfinite(bf16->GetDouble(i)));
  }
  // s8 -> s8 is an exact match.
  auto s8 = ReinterpretAs((*in)[0], Shape(PrimitiveType::S8, {64, 32}));
  REQUIRE(s8.ok());
  CHECK(*s8 == (*in)[0].literal);
}

TEST_CASE("npz: the corpus files survive a write and re-read unchanged", "[npy]") {
  for (const char* f : {"concat_slice_pad.small.inputs.npz", "dot_variants.small.outputs.npz",
                        "sort_topk.small.outputs.npz", "layernorm_bf16.small.inputs.npz"}) {
    INFO(f);
    auto arrays = ReadNpz(kCorpus + "/" + f);
    REQUIRE(arrays.ok());
    std::vector<std::pair<std::string, const Literal*>> list;
    for (const NpyArray& a : *arrays) list.emplace_back(a.name, &a.literal);
    std::string path = TempPath("rewrite.npz");
    REQUIRE(WriteNpz(path, list).ok());
    auto again = ReadNpz(path);
    REQUIRE(again.ok());
    REQUIRE(again->size() == arrays->size());
    for (size_t i = 0; i < arrays->size(); ++i) {
      CHECK((*again)[i].name == (*arrays)[i].name);
      CHECK((*again)[i].dtype == (*arrays)[i].dtype);
      CHECK((*again)[i].literal == (*arrays)[i].literal);
    }
    std::remove(path.c_str());
  }
}

TEST_CASE("npz: deflated members as numpy.savez_compressed writes them", "[npy]") {
  std::string path = TempPath("deflated.npz");
  std::ofstream(path, std::ios::binary) << kDeflatedNpz;
  auto arrays = ReadNpz(path);
  std::remove(path.c_str());
  REQUIRE(arrays.ok());
  REQUIRE(arrays->size() == 2);
  const Literal& a = (*arrays)[0].literal;
  CHECK(a.shape().ToString(false) == "f32[2,3]");
  for (int i = 0; i < 6; ++i) CHECK(a.GetDouble(i) == 0.5 * i);
  const Literal& b = (*arrays)[1].literal;
  CHECK(b.shape().ToString(false) == "pred[4]");
  CHECK(b.GetPred(0));
  CHECK(!b.GetPred(1));
  CHECK(b.GetPred(3));
}

TEST_CASE("npy: every dtype round-trips through SerializeNpy/ParseNpy", "[npy]") {
  for (PrimitiveType t : {PrimitiveType::PRED, PrimitiveType::S8, PrimitiveType::S16, PrimitiveType::S32,
                          PrimitiveType::S64, PrimitiveType::U8, PrimitiveType::U16, PrimitiveType::U32,
                          PrimitiveType::U64, PrimitiveType::F16, PrimitiveType::F32, PrimitiveType::F64,
                          PrimitiveType::C64, PrimitiveType::C128}) {
    INFO(std::string(PrimitiveTypeName(t)));
    Literal lit(Shape(t, {2, 3}));
    for (int i = 0; i < 6; ++i) {
      if (IsComplex(t)) lit.SetComplex(i, {i - 2.0, 0.25 * i});
      else lit.SetDouble(i, t == PrimitiveType::PRED ? i % 2 : i - (IsSignedIntegral(t) || IsFloatingPoint(t) ? 2 : 0));
    }
    auto bytes = SerializeNpy(lit);
    REQUIRE(bytes.ok());
    CHECK(bytes->size() % 64 == lit.size_bytes() % 64);  // header padded to 64 bytes
    auto back = ParseNpy(*bytes, "x.npy");
    REQUIRE(back.ok());
    CHECK(back->literal == lit);
  }
  // Scalars and empty arrays.
  Literal scalar = Literal::ScalarDouble(PrimitiveType::F32, 1.5);
  auto sb = SerializeNpy(scalar);
  REQUIRE(sb.ok());
  CHECK(sb->find("'shape': (), }") != std::string::npos);
  auto sback = ParseNpy(*sb, "s.npy");
  REQUIRE(sback.ok());
  CHECK(sback->literal == scalar);
  Literal empty(Shape(PrimitiveType::S32, {0, 4}));
  auto eb = SerializeNpy(empty);
  REQUIRE(eb.ok());
  auto eback = ParseNpy(*eb, "e.npy");
  REQUIRE(eback.ok());
  CHECK(eback->literal.shape().ToString(false) == "s32[0,4]");
  // One-dimensional shapes are written as Python 1-tuples.
  auto vb = SerializeNpy(Literal(Shape(PrimitiveType::U8, {3})));
  REQUIRE(vb.ok());
  CHECK(vb->find("'shape': (3,), }") != std::string::npos);
}

TEST_CASE("npy: narrow types are written as numpy's bit-pattern conventions", "[npy]") {
  Literal bf(Shape(PrimitiveType::BF16, {2}));
  bf.SetDouble(0, 1.0);
  bf.SetDouble(1, -2.5);
  auto bytes = SerializeNpy(bf);
  REQUIRE(bytes.ok());
  auto back = ParseNpy(*bytes, "bf.npy");
  REQUIRE(back.ok());
  CHECK(back->dtype == "<u2");
  CHECK(back->literal.GetRawBits(0) == 0x3F80);
  auto again = ReinterpretAs(*back, bf.shape());
  REQUIRE(again.ok());
  CHECK(*again == bf);

  Literal f8(Shape(PrimitiveType::F8E4M3FN, {3}));
  f8.SetDouble(0, 0.5);
  f8.SetDouble(1, -448);
  f8.SetDouble(2, 3);
  auto f8b = SerializeNpy(f8);
  REQUIRE(f8b.ok());
  auto f8back = ParseNpy(*f8b, "f8.npy");
  REQUIRE(f8back.ok());
  CHECK(f8back->dtype == "|u1");
  auto f8again = ReinterpretAs(*f8back, f8.shape());
  REQUIRE(f8again.ok());
  CHECK(*f8again == f8);
  CHECK(f8again->GetDouble(1) == -448);

  Literal s4(Shape(PrimitiveType::S4, {3}));
  s4.SetInt(0, -8);
  s4.SetInt(1, 7);
  s4.SetInt(2, -1);
  auto s4b = SerializeNpy(s4);
  REQUIRE(s4b.ok());
  auto s4back = ParseNpy(*s4b, "s4.npy");
  REQUIRE(s4back.ok());
  auto s4again = ReinterpretAs(*s4back, s4.shape());
  REQUIRE(s4again.ok());
  CHECK(*s4again == s4);
  CHECK(s4again->GetInt(0) == -8);
}

TEST_CASE("npy: header variants (v2/v3, big-endian, fortran order, double quotes)", "[npy]") {
  SECTION("version 2 and 3 headers") {
    for (int major : {2, 3}) {
      auto a = ParseNpy(MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", Bytes<int32_t>({7, -9}), major),
                        "v.npy");
      REQUIRE(a.ok());
      CHECK(a->literal.GetInt(1) == -9);
    }
  }
  SECTION("big-endian integers, floats and complex numbers") {
    std::string be_i4("\x00\x00\x01\x02\xff\xff\xff\xfe", 8);
    auto i4 = ParseNpy(MakeNpy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be_i4), "be.npy");
    REQUIRE(i4.ok());
    CHECK(i4->literal.GetInt(0) == 0x102);
    CHECK(i4->literal.GetInt(1) == -2);
    std::string be_f8("\x3f\xf8\x00\x00\x00\x00\x00\x00", 8);  // 1.5
    auto f8 = ParseNpy(MakeNpy("{'descr': '>f8', 'fortran_order': False, 'shape': (), }", be_f8), "be.npy");
    REQUIRE(f8.ok());
    CHECK(f8->literal.GetDouble(0) == 1.5);
    std::string be_c8("\x3f\x80\x00\x00\xc0\x00\x00\x00", 8);  // 1 - 2i
    auto c8 = ParseNpy(MakeNpy("{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }", be_c8), "be.npy");
    REQUIRE(c8.ok());
    CHECK(c8->literal.GetComplex(0) == std::complex<double>(1, -2));
  }
  SECTION("fortran order is transposed to row-major") {
    // Logical [[1,2,3],[4,5,6]] stored column-major: 1 4 2 5 3 6.
    auto a = ParseNpy(MakeNpy("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }",
                              Bytes<int16_t>({1, 4, 2, 5, 3, 6})),
                      "f.npy");
    REQUIRE(a.ok());
    for (int i = 0; i < 6; ++i) CHECK(a->literal.GetInt(i) == i + 1);
    // Three dimensions: element (i,j,k) at i + 2j + 4k in the file.
    std::vector<int16_t> col(8);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 2; ++k) col[i + 2 * j + 4 * k] = static_cast<int16_t>(100 * i + 10 * j + k);
    std::string data(reinterpret_cast<const char*>(col.data()), col.size() * 2);
    auto b = ParseNpy(MakeNpy("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 2, 2), }", data), "f3.npy");
    REQUIRE(b.ok());
    CHECK(b->literal.GetInt(b->literal.LinearIndex({1, 0, 1})) == 101);
    CHECK(b->literal.GetInt(b->literal.LinearIndex({0, 1, 1})) == 11);
  }
  SECTION("keys in any order, double quotes, Python 2 longs, no trailing comma") {
    auto a = ParseNpy(MakeNpy("{\"shape\": (1L, 2L), \"fortran_order\": False, \"descr\": \"|u1\"}", "\x05\x06"), "q.npy");
    REQUIRE(a.ok());
    CHECK(a->literal.shape().ToString(false) == "u8[1,2]");
  }
  SECTION("bool bytes other than 0/1 read as true") {
    auto a = ParseNpy(MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", std::string("\x00\x07", 2)),
                      "b.npy");
    REQUIRE(a.ok());
    CHECK(a->literal.GetRawBits(1) == 1);
  }
}

TEST_CASE("ReinterpretAs refuses what does not fit", "[npy]") {
  auto arr = ParseNpy(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", std::string(24, '\0')),
                      "x.npy");
  REQUIRE(arr.ok());
  arr->name = "arg0";
  auto count = ReinterpretAs(*arr, Shape(PrimitiveType::F32, {7}));
  REQUIRE(!count.ok());
  CHECK(std::string(count.status().message()).find("6 elements") != std::string::npos);
  auto dims = ReinterpretAs(*arr, Shape(PrimitiveType::F32, {3, 2}));
  REQUIRE(!dims.ok());
  CHECK(std::string(dims.status().message()).find("dimensions differ") != std::string::npos);
  auto type = ReinterpretAs(*arr, Shape(PrimitiveType::F64, {2, 3}));
  REQUIRE(!type.ok());
  CHECK(std::string(type.status().message()).find("arg0") != std::string::npos);
  CHECK(std::string(type.status().message()).find("f32 is not f64") != std::string::npos);
  // bf16 only from 16-bit patterns.
  auto bf = ReinterpretAs(*arr, Shape(PrimitiveType::BF16, {2, 3}));
  REQUIRE(!bf.ok());
  CHECK(std::string(bf.status().message()).find("uint16") != std::string::npos);
  CHECK(!ReinterpretAs(*arr, Shape::Tuple({Shape(PrimitiveType::F32, {2, 3})})).ok());
  CHECK(ReinterpretAs(*arr, Shape(PrimitiveType::F32, {2, 3})).ok());
  // s4 from int8 values out of range.
  auto wide = ParseNpy(MakeNpy("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", "\x01\x09"), "w.npy");
  REQUIRE(wide.ok());
  auto s4 = ReinterpretAs(*wide, Shape(PrimitiveType::S4, {2}));
  REQUIRE(!s4.ok());
  CHECK(std::string(s4.status().message()).find("does not fit in 4 bits") != std::string::npos);
}

void ExpectError(const std::string& bytes, const std::string& needle) {
  auto a = ParseNpy(bytes, "bad.npy");
  INFO(needle);
  REQUIRE(!a.ok());
  std::string msg(a.status().message());
  INFO(msg);
  CHECK(msg.rfind("bad.npy: ", 0) == 0);
  CHECK(msg.find(needle) != std::string::npos);
}

TEST_CASE("npy: malformed files give clear errors", "[npy]") {
  ExpectError("", "bad magic");
  ExpectError("PK\x03\x04garbage", "bad magic");
  ExpectError(std::string("\x93NUMPY\x09\x00\x10\x00", 10) + std::string(16, ' '), "version 9.0");
  ExpectError(std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17), "truncated .npy header");
  ExpectError(MakeNpy("{'descr': '<f4', 'fortran_order': False}", ""), "lacks one of");
  ExpectError(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", std::string(8, 0)),
              "unexpected key 'x'");
  ExpectError(MakeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }", ""), "structured");
  ExpectError(MakeNpy("{'descr': '<f3', 'fortran_order': False, 'shape': (), }", "abc"), "unsupported dtype '<f3'");
  ExpectError(MakeNpy("{'descr': '<f4', 'fortran_order': maybe, 'shape': (), }", "abcd"), "True or False");
  ExpectError(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", "abcd"), "non-negative integer");
  ExpectError(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", std::string(20, 0)),
              "needs more data bytes than the 20");
  ExpectError(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", std::string(12, 0)),
              "needs fewer data bytes");
  // Huge shapes are refused before anything is allocated.
  ExpectError(MakeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", "x"),
              "too large");
  ExpectError(MakeNpy("{'descr': '<c16', 'fortran_order': False, 'shape': (1152921504606846975,), }", "x"),
              "needs more data bytes");
  ExpectError(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", "x"),
              "dimension too large");
  ExpectError(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::string(200, '(') + "), }", "x"),
              "non-negative integer");
  std::string deep = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 70; ++i) deep += "1,";
  ExpectError(MakeNpy(deep + "), }", "xxxx"), "more than 64 dimensions");
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

absl::Status NpzStatus(const std::string& bytes) {
  std::string path = WriteTemp("bad.npz", bytes);
  auto r = ReadNpz(path);
  std::remove(path.c_str());
  return r.status();
}

void ExpectNpzError(const std::string& bytes, const std::string& needle) {
  absl::Status s = NpzStatus(bytes);
  INFO(needle);
  REQUIRE(!s.ok());
  std::string msg(s.message());
  INFO(msg);
  CHECK(msg.find("hloc_npy_test_") != std::string::npos);  // names the file
  CHECK(msg.find(needle) != std::string::npos);
}

std::string SmallNpz() {
  Literal a(Shape(PrimitiveType::F32, {3}));
  for (int i = 0; i < 3; ++i) a.SetDouble(i, i + 0.5);
  Literal b = Literal::ScalarInt(PrimitiveType::S32, 42);
  std::string path = TempPath("small.npz");
  REQUIRE(WriteNpz(path, {{"arg0", &a}, {"arg1", &b}}).ok());
  std::string bytes = ReadAll(path);
  std::remove(path.c_str());
  return bytes;
}

TEST_CASE("npz: malformed archives give clear errors naming the file", "[npy]") {
  std::string good = SmallNpz();
  REQUIRE(NpzStatus(good).ok());
  ExpectNpzError("", "not a zip archive");
  ExpectNpzError("\x93NUMPY not a zip at all, but long enough to look", "no end-of-central-directory");
  {
    auto r = ReadNpz(TempPath("does_not_exist.npz"));
    REQUIRE(!r.ok());
    CHECK(std::string(r.status().message()).find("cannot open") != std::string::npos);
  }
  {
    // A directory or a device is refused without trying to read (or size) it as a file.
    auto dir = ReadNpz(fs::temp_directory_path().string());
    REQUIRE(!dir.ok());
    CHECK(std::string(dir.status().message()).find("is a directory") != std::string::npos);
    auto null = ReadNpy("/dev/null");
    REQUIRE(!null.ok());
    CHECK(std::string(null.status().message()).find("bad magic") != std::string::npos);
  }
  // Central directory offset pointing past the end.
  std::string bad = good;
  size_t eocd = bad.size() - 22;
  bad[eocd + 16] = '\x7f';
  bad[eocd + 19] = '\x7f';
  ExpectNpzError(bad, "lies outside the archive");
  // Entry count larger than the directory can hold.
  bad = good;
  bad[eocd + 10] = '\x50';
  bad[eocd + 8] = '\x50';
  ExpectNpzError(bad, "claims 80 entries");
  // Local header offset of the first entry pointing into the middle of nowhere.
  bad = good;
  size_t cd = static_cast<uint8_t>(good[eocd + 16]) | static_cast<uint8_t>(good[eocd + 17]) << 8;
  bad[cd + 42] = '\x05';
  ExpectNpzError(bad, "bad local header offset");
  // A flipped data byte fails the CRC check.
  bad = good;
  bad[30 + 8 + 70] ^= 0x40;
  ExpectNpzError(bad, "CRC-32 mismatch");
  // An unsupported compression method.
  bad = good;
  bad[cd + 10] = 14;
  ExpectNpzError(bad, "compression method 14");
  // A member that is not .npy.
  auto zip = WriteZip({{"readme.txt", "hello"}});
  REQUIRE(zip.ok());
  ExpectNpzError(*zip, "not a .npy array");
  // A member whose .npy is bad.
  zip = WriteZip({{"arg0.npy", "\x93NUMPY\x01\x00garbage"}});
  REQUIRE(zip.ok());
  ExpectNpzError(*zip, "member 'arg0.npy'");
  // Duplicate names.
  zip = WriteZip({{"a.npy", "x"}, {"a.npy", "y"}});
  REQUIRE(zip.ok());
  ExpectNpzError(*zip, "appears twice");
}

TEST_CASE("npz: bad deflate streams and impossible sizes", "[npy]") {
  const std::string& good = kDeflatedNpz;
  REQUIRE(NpzStatus(good).ok());
  // The first member's deflate data starts after its 30-byte local header, name and zip64 extra.
  size_t data = 30 + 8 + 20;
  std::string bad = good;
  bad[data] = '\xff';  // block type 3 is invalid
  ExpectNpzError(bad, "bad deflate stream");
  // Declared uncompressed size larger than deflate could produce from the compressed bytes.
  size_t eocd = good.size() - 22;
  size_t cd = static_cast<uint8_t>(good[eocd + 16]) | static_cast<uint8_t>(good[eocd + 17]) << 8;
  bad = good;
  // numpy's central directory keeps 32-bit sizes (zip64 extras only in the local headers):
  // compressed size at +20, uncompressed at +24.
  bad[cd + 27] = '\x7f';  // usize about 2^31
  ExpectNpzError(bad, "impossible");
  // A declared size a little larger than the real one: the .npy header (128 bytes, then 6 f32)
  // disagrees before the data is inflated; read as a plain zip member, the stream ends early.
  bad = good;
  bad[cd + 24] = static_cast<char>(static_cast<uint8_t>(good[cd + 24]) + 1);
  ExpectNpzError(bad, "needs fewer data bytes than the 25 the zip directory declares for the member");
  auto entries = ListZip(bad, "z");
  REQUIRE(entries.ok());
  auto member = ReadZipMember(bad, (*entries)[0], "z");
  REQUIRE_FALSE(member.ok());
  CHECK(std::string(member.status().message()).find("deflate stream gives 152 bytes but the directory declares 153") !=
        std::string::npos);
  // A declared size smaller than the real one.
  bad = good;
  bad[cd + 24] = static_cast<char>(static_cast<uint8_t>(good[cd + 24]) - 1);
  ExpectNpzError(bad, "needs more data bytes than the 23 the zip directory declares for the member");
  entries = ListZip(bad, "z");
  REQUIRE(entries.ok());
  member = ReadZipMember(bad, (*entries)[0], "z");
  REQUIRE_FALSE(member.ok());
  CHECK(std::string(member.status().message()).find("holds more than the 151 bytes") != std::string::npos);
  // Compressed size cut short: truncated stream.
  bad = good;
  bad[cd + 20] = 10;
  ExpectNpzError(bad, "truncated");
}

// A one-member archive whose member "arg0.npy" is deflated from `npy` (a sync-flushed, unfinished
// stream) followed by 0xff bytes (an invalid deflate block, were it ever inflated) up to
// `compressed_size`, its uncompressed size declared as `declared`.
std::string DeflatedMemberArchive(const std::string& npy, uint32_t declared, size_t compressed_size) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string data(npy.size() + 1024, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(npy.data()));
  zs.avail_in = static_cast<uInt>(npy.size());
  zs.next_out = reinterpret_cast<Bytef*>(data.data());
  zs.avail_out = static_cast<uInt>(data.size());
  REQUIRE(deflate(&zs, Z_SYNC_FLUSH) == Z_OK);
  data.resize(data.size() - zs.avail_out);
  deflateEnd(&zs);
  REQUIRE(data.size() <= compressed_size);
  data.resize(compressed_size, '\xff');
  std::string z;
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) z.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  const std::string name = "arg0.npy";
  put(0x04034b50, 4); put(20, 2); put(0, 2); put(8, 2); put(0, 4); put(0, 4);  // local header
  put(data.size(), 4); put(declared, 4); put(name.size(), 2); put(0, 2);
  z += name + data;
  const size_t cd = z.size();
  put(0x02014b50, 4); put(20, 2); put(20, 2); put(0, 2); put(8, 2); put(0, 4); put(0, 4);  // central entry
  put(data.size(), 4); put(declared, 4); put(name.size(), 2); put(0, 2); put(0, 2); put(0, 2); put(0, 2);
  put(0, 4); put(0, 4);
  z += name;
  const size_t cd_size = z.size() - cd;
  put(0x06054b50, 4); put(0, 2); put(0, 2); put(1, 2); put(1, 2); put(cd_size, 4); put(cd, 4); put(0, 2);
  return z;
}

TEST_CASE("npz: a member's declared size is checked against its .npy header before inflating", "[npy]") {
  // The fuzzer's zip bomb: 3 MB declaring 3 GiB, whose header says f32[4,5]. The member is
  // refused once its header is read; the 0xff bytes after it (an invalid deflate block) would
  // give "bad deflate stream" had the reader inflated further.
  const std::string npy = MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 5), }", std::string(80, 0));
  const uint32_t declared = 3u << 30;
  const size_t header = npy.size() - 80;
  ExpectNpzError(DeflatedMemberArchive(npy, declared, declared / 1000),
                 "shape (4, 5) of '<f4' needs fewer data bytes than the " + std::to_string(declared - header) +
                     " the zip directory declares for the member");
}

TEST_CASE("npz: zip64 end-of-directory records are followed", "[npy]") {
  std::string good = SmallNpz();
  size_t eocd = good.size() - 22;
  uint64_t cd_offset = static_cast<uint8_t>(good[eocd + 16]) | static_cast<uint8_t>(good[eocd + 17]) << 8;
  uint64_t cd_size = static_cast<uint8_t>(good[eocd + 12]) | static_cast<uint8_t>(good[eocd + 13]) << 8;
  std::string z = good.substr(0, eocd);
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) z.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  uint64_t rec = z.size();
  put(0x06064b50, 4); put(44, 8); put(45, 2); put(45, 2); put(0, 4); put(0, 4);
  put(2, 8); put(2, 8); put(cd_size, 8); put(cd_offset, 8);
  put(0x07064b50, 4); put(0, 4); put(rec, 8); put(1, 4);
  put(0x06054b50, 4); put(0, 2); put(0, 2); put(0xFFFF, 2); put(0xFFFF, 2);
  put(0xFFFFFFFF, 4); put(0xFFFFFFFF, 4); put(0, 2);
  std::string path = WriteTemp("zip64.npz", z);
  auto arrays = ReadNpz(path);
  std::remove(path.c_str());
  REQUIRE(arrays.ok());
  REQUIRE(arrays->size() == 2);
  CHECK((*arrays)[1].literal.GetInt(0) == 42);
  // The same with the locator pointing at garbage.
  std::string broken = z;
  broken[rec] = 'X';
  ExpectNpzError(broken, "zip64 end-of-central-directory record");
  // Saturated fields without any zip64 records.
  std::string no64 = good;
  for (int i = 0; i < 4; ++i) no64[eocd + 16 + i] = '\xff';
  ExpectNpzError(no64, "zip64");
}

TEST_CASE("npz: truncations and byte flips never crash", "[npy]") {
  for (const std::string& good : {SmallNpz(), kDeflatedNpz}) {
    int errors = 0;
    for (size_t n = 0; n < good.size(); ++n) errors += !NpzStatus(good.substr(0, n)).ok();
    CHECK(errors == static_cast<int>(good.size()));  // every strict prefix is rejected
    std::mt19937 rng(1234);
    for (int trial = 0; trial < 300; ++trial) {
      std::string bad = good;
      int flips = 1 + trial % 3;
      for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
      (void)NpzStatus(bad);  // any outcome but a crash or hang is fine
    }
  }
  // Every truncation of a .npy file is rejected too.
  Literal lit(Shape(PrimitiveType::S16, {5, 3}));
  auto bytes = SerializeNpy(lit);
  REQUIRE(bytes.ok());
  for (size_t n = 0; n < bytes->size(); ++n) CHECK(!ParseNpy(bytes->substr(0, n), "t.npy").ok());
}

}  // namespace
}  // namespace hloc
