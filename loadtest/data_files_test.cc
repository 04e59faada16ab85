#include "loadtest/data_files.h"

#include <unistd.h>

#include <cstring>
#include <fstream>

#include "gtest/gtest.h"

namespace onyx::load {
namespace {

class DataFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/onyx_load_data_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string dir_;
};

std::string Floats(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

// A version-1 .npy file, header padded to 64 bytes as numpy writes it.
std::string Npy(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

TEST_F(DataFilesTest, ReadsNpy) {
  TensorValue t = *ReadNpy(Write("x.npy", Npy("<f4", "(2, 2)", Floats({1, 2, 3, 4}))));
  EXPECT_EQ(t.datatype, "FP32");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.raw, Floats({1, 2, 3, 4}));
  TensorValue s = *ReadNpy(Write("s.npy", Npy("|S3", "(2,)", std::string("ab\0xyz", 6))));
  EXPECT_EQ(s.datatype, "BYTES");
  EXPECT_EQ(s.raw, std::string("\x02\0\0\0ab\x03\0\0\0xyz", 13));
  absl::StatusOr<TensorValue> bad = ReadNpy(Write("b.npy", Npy(">f4", "(1,)", Floats({1}))));
  EXPECT_NE(bad.status().message().find(">f4"), std::string::npos);
  bad = ReadNpy(Write("short.npy", Npy("<f4", "(3,)", Floats({1}))));
  EXPECT_NE(bad.status().message().find("short.npy"), std::string::npos);
}

TEST_F(DataFilesTest, ReadsTensorProtoRawAndTyped) {
  // dims=[2] (field 1), data_type=FLOAT (2), name="x" (8), raw_data (9).
  std::string raw = Floats({1.5, -2});
  std::string pb = std::string("\x08\x02\x10\x01\x42\x01x\x4a\x08", 9) + raw;
  TensorValue t = *ReadTensorProto(Write("x.pb", pb));
  EXPECT_EQ(t.name, "x");
  EXPECT_EQ(t.datatype, "FP32");
  EXPECT_EQ(t.shape, std::vector<int64_t>{2});
  EXPECT_EQ(t.raw, raw);
  // int64_data packed (field 7): dims=[3], data_type=INT64 (7), values 1, 2, 300.
  std::string ints("\x08\x03\x10\x07\x3a\x04\x01\x02\xac\x02", 10);
  TensorValue i = *ReadTensorProto(Write("i.pb", ints));
  EXPECT_EQ(i.datatype, "INT64");
  int64_t v[3];
  std::memcpy(v, i.raw.data(), 24);
  EXPECT_EQ(v[2], 300);
  // float_data (field 4, packed).
  std::string fl = std::string("\x08\x02\x10\x01\x22\x08", 6) + raw;
  EXPECT_EQ(ReadTensorProto(Write("f.pb", fl))->raw, raw);
  EXPECT_FALSE(ReadTensorProto(Write("bad.pb", std::string("\x08\x02\x10\x01\x4a\x08\x01", 7))).ok());
}

TEST_F(DataFilesTest, ReadsDirectoryByTensorName) {
  Write("input.npy", Npy("<f4", "(1, 2)", Floats({7, 8})));
  std::optional<TensorValue> t = *ReadTensorFromDir(dir_, "input");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->name, "input");
  EXPECT_FALSE(ReadTensorFromDir(dir_, "other")->has_value());
}

TEST_F(DataFilesTest, ReadsPerfAnalyzerJson) {
  const std::string path = Write("d.json", R"({"data": [
      {"input": [1, 2, 3, 4]},
      {"input": {"content": [[5, 6], [7, 8]], "shape": [2, 2]}},
      {"input": {"b64": "AACAPwAAAEAAAEBAAACAQA==", "shape": [1, 4]}}],
    "validation_data": [{"output": [1, 2, 3, 4]}, {"output": [5, 6, 7, 8]}, {}]})");
  std::vector<TensorSpec> in = {{"input", "FP32", {1, 4}}}, out = {{"output", "FP32", {1, 4}}};
  DataSet d = *ReadPerfAnalyzerJson(path, in, out);
  ASSERT_EQ(d.inputs.size(), 3u);
  EXPECT_EQ(d.inputs[0].at("input").raw, Floats({1, 2, 3, 4}));
  EXPECT_EQ(d.inputs[1].at("input").shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(d.inputs[1].at("input").raw, Floats({5, 6, 7, 8}));
  EXPECT_EQ(d.inputs[2].at("input").raw, Floats({1, 2, 3, 4}));
  ASSERT_EQ(d.expected.size(), 3u);
  EXPECT_EQ(d.expected[1].at("output").raw, Floats({5, 6, 7, 8}));
  EXPECT_TRUE(d.expected[2].empty());
  absl::StatusOr<DataSet> bad = ReadPerfAnalyzerJson(Write("e.json", R"({"data": [{"input": [1, 2]}]})"), in, out);
  EXPECT_NE(bad.status().message().find("needs 4 values, got 2"), std::string::npos) << bad.status();
  bad = ReadPerfAnalyzerJson(Write("f.json", R"({"data": [{"other": [1]}]})"), in, out);
  EXPECT_NE(bad.status().message().find("lacks input 'input'"), std::string::npos) << bad.status();
}

TEST(TensorTest, GeneratesAndComparesAndEncodes) {
  std::mt19937_64 rng(1);
  TensorValue x = *MakeTensor("x", "FP32", {3, 4}, Fill::kRandom, &rng);
  EXPECT_EQ(x.raw.size(), 48u);
  float f[12];
  std::memcpy(f, x.raw.data(), 48);
  for (float v : f) EXPECT_TRUE(v >= -1 && v < 1);
  EXPECT_EQ(CompareOutput(x, "FP32", {3, 4}, x.raw), "");
  std::string off = x.raw;
  f[5] += 0.01f;
  std::memcpy(off.data(), f, 48);
  EXPECT_NE(CompareOutput(x, "FP32", {3, 4}, off).find("element 5"), std::string::npos);
  EXPECT_NE(CompareOutput(x, "FP32", {4, 3}, x.raw).find("[3,4]"), std::string::npos);
  EXPECT_FALSE(MakeTensor("v", "FP32", {-1, 4}, Fill::kZeros, &rng).ok());
  TensorValue i = *MakeTensor("i", "INT16", {5}, Fill::kRandom, &rng);
  inference::InferTensorContents c = *TypedContents(i);
  ASSERT_EQ(c.int_contents_size(), 5);
  for (int k = 0; k < 5; ++k) {
    int16_t v;
    std::memcpy(&v, i.raw.data() + 2 * k, 2);
    EXPECT_EQ(c.int_contents(k), v);
  }
  EXPECT_FALSE(TypedContents(*MakeTensor("h", "FP16", {2}, Fill::kZeros, &rng)).ok());
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 1e-5f, 0.333f}) {
    EXPECT_NEAR(HalfToFloat(FloatToHalf(v)), v, std::abs(v) * 1e-3 + 1e-7) << v;
  }
}

}  // namespace
}  // namespace onyx::load
