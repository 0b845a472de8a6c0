#include "runtime/io/npy_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace braid {
namespace {

// A .npy file as numpy.save (version 1.0) writes it: the header padded with spaces to a newline
// that ends at a multiple of 64 bytes.
std::string NumpyBytes(const std::string& dict, const void* data, size_t bytes) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

TEST(NpyFileTest, WritesWhatNumpyWrites) {
  Tensor t;
  t.Resize(DType::kFloat32, {2, 3});
  for (int i = 0; i < 6; ++i) t.mutable_data<float>()[i] = static_cast<float>(i);
  std::string bytes;
  ASSERT_TRUE(NpyBytes(t, &bytes).ok());
  const float values[6] = {0, 1, 2, 3, 4, 5};
  // numpy.save(f, numpy.arange(6, dtype=numpy.float32).reshape(2, 3)) writes these 152 bytes.
  const std::string expected = NumpyBytes(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", values, sizeof(values));
  ASSERT_EQ(expected.size(), 152u);
  EXPECT_EQ(bytes, expected);
}

TEST(NpyFileTest, ReadsEveryDtypeAndShapeSpelling) {
  const int64_t longs[2] = {-7, 1LL << 40};
  Tensor t;
  ASSERT_TRUE(ParseNpy(NumpyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                  longs, sizeof(longs)),
                       "<bytes>", &t)
                  .ok());
  EXPECT_EQ(t.ShapeString(), "int64[2]");
  EXPECT_EQ(t.data<int64_t>()[1], 1LL << 40);

  const double scalar = 3.5;
  ASSERT_TRUE(ParseNpy(NumpyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                                  &scalar, sizeof(scalar)),
                       "<bytes>", &t)
                  .ok());
  EXPECT_EQ(t.ShapeString(), "float64[]");
  EXPECT_EQ(t.data<double>()[0], 3.5);

  // Keys in another order, double quotes, no trailing comma: still a valid dict literal.
  const int32_t ints[3] = {1, -2, 3};
  ASSERT_TRUE(ParseNpy(NumpyBytes("{\"shape\": (3,1), \"fortran_order\": False, \"descr\": '<i4'}",
                                  ints, sizeof(ints)),
                       "<bytes>", &t)
                  .ok());
  EXPECT_EQ(t.ShapeString(), "int32[3,1]");
  EXPECT_EQ(t.data<int32_t>()[1], -2);

  ASSERT_TRUE(ParseNpy(NumpyBytes("{'descr': '|u1', 'fortran_order': False, 'shape': (0, 4), }",
                                  nullptr, 0),
                       "<bytes>", &t)
                  .ok());
  EXPECT_EQ(t.ShapeString(), "uint8[0,4]");
}

TEST(NpyFileTest, RoundTripsEveryDtypeThroughAFile) {
  const std::string path = ::testing::TempDir() + "/round_trip.npy";
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8,
                      DType::kBool}) {
    Tensor t;
    t.Resize(dtype, {3, 1, 2});
    auto* data = static_cast<unsigned char*>(t.raw_mutable_data(dtype));
    for (size_t i = 0; i < t.nbytes(); ++i) data[i] = static_cast<unsigned char>(i * 37 % 2);
    ASSERT_TRUE(WriteNpyFile(path, t).ok()) << DTypeName(dtype);
    Tensor back;
    ASSERT_TRUE(ReadNpyFile(path, &back).ok()) << DTypeName(dtype);
    EXPECT_EQ(back.ShapeString(), t.ShapeString());
    EXPECT_EQ(std::memcmp(back.raw_data(), t.raw_data(), t.nbytes()), 0) << DTypeName(dtype);
  }
}

void ExpectRefused(const std::string& bytes, const std::string& fragment) {
  Tensor t;
  const Status status = ParseNpy(bytes, "x.npy", &t);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("x.npy: "), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.message();
}

TEST(NpyFileTest, RefusesWhatItCannotReadNamingTheFile) {
  const float four[4] = {1, 2, 3, 4};
  ExpectRefused(
      NumpyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four, sizeof(four)),
      "Fortran order");
  ExpectRefused(
      NumpyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", four, sizeof(four)),
      "dtype '>f4' is not supported");
  ExpectRefused(
      NumpyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (8,), }", four, sizeof(four)),
      "dtype '<u2' is not supported");
  ExpectRefused(
      NumpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", four, sizeof(four)),
      "holds 16 bytes, but float32[5] needs 20");
  ExpectRefused(NumpyBytes("{'descr': '<f4', 'shape': (4,), }", four, sizeof(four)),
                "lacks one of");
  ExpectRefused(
      NumpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", four, sizeof(four)),
      "malformed 'shape'");
  ExpectRefused("PK\x03\x04 a zip file", "not a .npy file");
  ExpectRefused(std::string("\x93NUMPY\x01\0\x40\0{'descr'", 17), "truncated");
  const Status missing = [] {
    Tensor t;
    return ReadNpyFile(::testing::TempDir() + "/no_such.npy", &t);
  }();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("no_such.npy"), std::string::npos);
}

}  // namespace
}  // namespace braid
