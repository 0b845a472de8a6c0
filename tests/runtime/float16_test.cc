// float16 (include/braid/dtype.h): the conversions against a reference that picks the nearest half
// by search, every half round trip, and float16 through what stores and exchanges it: Cast,
// FloatToHalf/HalfToFloat and their gradients, ConstantFill and GivenTensorFill, .npy files,
// Caffe2 TensorProtos (checkpoints and DB records), value_info.json and the Predictor's and
// Session's inputs and outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "braid/dtype.h"
#include "braid/predictor.h"
#include "braid/session.h"
#include "braid/tensor_view.h"
#include "proto/braid.pb.h"
#include "runtime/core/autodiff.h"
#include "runtime/core/tensor.h"
#include "runtime/core/workspace.h"
#include "runtime/io/checkpoint.h"
#include "runtime/io/model_folder.h"
#include "runtime/io/npy_file.h"
#include "runtime/io/tensor_protos_record.h"
#include "testing/net_text.h"

namespace braid {
namespace {

float FloatOfBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// The nearest half to `value` (finite, not NaN), found by bisection over the positive halves,
// whose bits grow with their values: ties go to the even bits; from 65520 on, infinity.
uint16_t ReferenceHalf(float value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude >= 65520.0) return sign | 0x7c00;
  uint16_t low = 0, high = 0x7bff;  // the largest half <= magnitude is in [low, high]
  while (low < high) {
    const uint16_t middle = static_cast<uint16_t>((low + high + 1) / 2);
    if (HalfBitsToFloat(middle) <= magnitude) {
      low = middle;
    } else {
      high = static_cast<uint16_t>(middle - 1);
    }
  }
  if (low == 0x7bff) return sign | low;  // below 65520: rounds to 65504
  const double below = HalfBitsToFloat(low), above = HalfBitsToFloat(low + 1);
  const double to_below = magnitude - below, to_above = above - magnitude;
  if (to_below < to_above || (to_below == to_above && (low & 1) == 0)) return sign | low;
  return sign | static_cast<uint16_t>(low + 1);
}

TEST(Float16Test, ConversionsRoundToNearestEvenAsTheReferenceDoes) {
  const std::vector<std::pair<float, uint16_t>> known = {
      {0.f, 0x0000},
      {-0.f, 0x8000},
      {1.f, 0x3c00},
      {0.1f, 0x2e66},
      {-2.f, 0xc000},
      {65504.f, 0x7bff},
      {65519.99f, 0x7bff},
      {65520.f, 0x7c00},
      {1e9f, 0x7c00},
      {std::ldexp(1.f, -24), 0x0001},
      {std::ldexp(1.f, -25), 0x0000},
      {std::ldexp(1.5f, -25), 0x0001},
      {std::ldexp(1.f, -14), 0x0400},
      {std::numeric_limits<float>::infinity(), 0x7c00}};
  for (const auto& [value, bits] : known) {
    EXPECT_EQ(FloatToHalfBits(value), bits) << value;
  }
  EXPECT_TRUE(std::isnan(static_cast<float>(Float16(std::nanf("")))));

  std::mt19937 random(5);
  std::uniform_int_distribution<uint32_t> any_bits;
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const float value = FloatOfBits(any_bits(random));
    if (!std::isfinite(value)) continue;
    ASSERT_EQ(FloatToHalfBits(value), ReferenceHalf(value)) << value;
    ++checked;
  }
  // Every midpoint between neighbouring halves, and the floats just beside it.
  for (uint16_t h = 0; h < 0x7bff; ++h) {
    const float middle =
        static_cast<float>((double{HalfBitsToFloat(h)} + double{HalfBitsToFloat(h + 1)}) / 2);
    for (float v : {middle, std::nextafter(middle, 0.f), std::nextafter(middle, 1e9f)}) {
      ASSERT_EQ(FloatToHalfBits(v), ReferenceHalf(v)) << v << " beside half " << h;
      ASSERT_EQ(FloatToHalfBits(-v), ReferenceHalf(-v)) << -v;
    }
  }
  EXPECT_GT(checked, 190000);
}

// From a double, one rounding: never through a float first (whose own rounding could make a tie
// or reach 65520).
TEST(Float16Test, DoublesRoundOnceToTheNearestHalf) {
  const double tie_and_a_bit = 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  EXPECT_EQ(DoubleToHalfBits(tie_and_a_bit), 0x3c01);  // via float: the tie, to even 0x3c00
  EXPECT_EQ(DoubleToHalfBits(65519.999), 0x7bff);      // via float: 65520, infinity
  EXPECT_EQ(DoubleToHalfBits(1e300), 0x7c00);          // beyond float's range too
  EXPECT_EQ(DoubleToHalfBits(-1e-300), 0x8000);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(DoubleToHalfBits(std::nan("")))));
  std::mt19937_64 random(6);
  std::uniform_int_distribution<uint64_t> any_bits;
  for (int i = 0; i < 100000; ++i) {
    double value;
    const uint64_t bits = any_bits(random);
    std::memcpy(&value, &bits, sizeof(value));
    if (!std::isfinite(value) || std::fabs(value) > 1e6 || std::fabs(value) < 1e-9) continue;
    // Where the double is exactly a float, both conversions must agree.
    const float as_float = static_cast<float>(value);
    ASSERT_EQ(DoubleToHalfBits(static_cast<double>(as_float)), FloatToHalfBits(as_float)) << value;
  }
  // Midpoints between halves, and the doubles just beside them.
  for (uint16_t h = 0; h < 0x7bff; h += 7) {
    const double middle = (double{HalfBitsToFloat(h)} + double{HalfBitsToFloat(h + 1)}) / 2;
    EXPECT_EQ(DoubleToHalfBits(middle), (h & 1) ? h + 1 : h) << middle;
    EXPECT_EQ(DoubleToHalfBits(std::nextafter(middle, 0.0)), h) << middle;
    EXPECT_EQ(DoubleToHalfBits(std::nextafter(middle, 1e9)), h + 1) << middle;
  }
}

// Every half decodes to IEEE 754's formula (independent of the bit code under test) and survives
// the trip through float.
TEST(Float16Test, EveryHalfDecodesByTheFormulaAndSurvivesTheTripThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float f = HalfBitsToFloat(static_cast<uint16_t>(bits));
    const int exponent = static_cast<int>((bits >> 10) & 0x1f), mantissa = bits & 0x3ff;
    const double magnitude = exponent == 0x1f ? INFINITY
                             : exponent == 0  ? std::ldexp(mantissa, -24)
                                              : std::ldexp(1024 + mantissa, exponent - 25);
    const bool nan = (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0;
    if (!nan) {
      ASSERT_EQ(f, (bits & 0x8000) ? -magnitude : magnitude) << bits;
    }
    if (nan) {
      ASSERT_TRUE(std::isnan(f)) << bits;
      ASSERT_TRUE(std::isnan(static_cast<float>(Float16(f)))) << bits;
    } else {
      ASSERT_EQ(FloatToHalfBits(f), bits) << bits;
    }
  }
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2u);
  EXPECT_STREQ(DTypeName(DType::kFloat16), "float16");
}

Tensor Halves(const std::vector<float>& values) {
  Tensor t(DType::kFloat16, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<Float16>()[i] = Float16(values[i]);
  return t;
}

std::vector<float> FloatsOf(const Tensor& t) {
  std::vector<float> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.data<Float16>()[i]);
  return out;
}

TEST(Float16Test, OpsConvertFillAndDifferentiate) {
  Workspace ws;
  ws.CreateBlob("x")->CopyFrom([] {
    Tensor t(DType::kFloat32, {4});
    const float v[] = {0.1f, -3.f, 70000.f, 1.f};
    std::memcpy(t.mutable_data<float>(), v, sizeof(v));
    return t;
  }());
  const Status s = ws.RunNetOnce(testing::NetFromText(R"(
    name: "halves"
    op { type: "FloatToHalf" input: "x" output: "h" }
    op { type: "HalfToFloat" input: "h" output: "back" }
    op { type: "Cast" input: "x" output: "cast" arg { name: "to" s: "float16" } }
    op { type: "ConstantFill" output: "c" arg { name: "shape" ints: 2 } arg { name: "dtype" i: 12 }
         arg { name: "value" f: 0.3 } }
    op { type: "GivenTensorFill" output: "g" arg { name: "shape" ints: 2 } arg { name: "dtype" i: 12 }
         arg { name: "values" floats: 0.5 floats: 1e-8 } }
    op { type: "Reshape" input: "h" output: "h2" output: "old" arg { name: "shape" ints: 2 ints: 2 } }
    op { type: "Transpose" input: "h2" output: "ht" })"));
  ASSERT_TRUE(s.ok()) << s.ToString();
  const Tensor& h = *ws.GetBlob("h");
  ASSERT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(FloatsOf(h), (std::vector<float>{HalfBitsToFloat(0x2e66), -3.f, INFINITY, 1.f}));
  const float* back = ws.GetBlob("back")->data<float>();
  EXPECT_EQ(std::vector<float>(back, back + 4), FloatsOf(h));
  EXPECT_EQ(std::memcmp(ws.GetBlob("cast")->raw_data(), h.raw_data(), 8), 0);
  EXPECT_EQ(FloatsOf(*ws.GetBlob("c")), (std::vector<float>{Float16(0.3f), Float16(0.3f)}));
  EXPECT_EQ(FloatsOf(*ws.GetBlob("g")), (std::vector<float>{0.5f, 0.f}));  // 1e-8: below 2^-25
  const Tensor& ht = *ws.GetBlob("ht");  // [[h0, h1], [h2, h3]] transposed
  ASSERT_EQ(ht.dtype(), DType::kFloat16);
  EXPECT_EQ(FloatsOf(ht),
            (std::vector<float>{FloatsOf(h)[0], FloatsOf(h)[2], FloatsOf(h)[1], FloatsOf(h)[3]}));
  // A float64 to float16 Cast rounds once.
  Tensor d(DType::kFloat64, {1});
  d.mutable_data<double>()[0] = 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  ws.CreateBlob("d")->CopyFrom(d);
  ASSERT_TRUE(ws.RunNetOnce(testing::NetFromText(
                                R"(name: "d" op { type: "Cast" input: "d" output: "dh"
                                   arg { name: "to" i: 12 } })"))
                  .ok());
  EXPECT_EQ(ws.GetBlob("dh")->data<Float16>()[0].bits(), 0x3c01);
}

TEST(Float16Test, ConversionsRefuseTheOtherDtypeAndInfinityToIntegers) {
  Workspace ws;
  Tensor x(DType::kFloat32, {2});
  x.mutable_data<float>()[0] = 1.f;
  x.mutable_data<float>()[1] = 7e4f;
  ws.CreateBlob("x")->CopyFrom(x);
  Status s = ws.RunNetOnce(
      testing::NetFromText(R"(name: "wrong" op { type: "HalfToFloat" input: "x" output: "y" })"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("must be float16"), std::string::npos) << s.ToString();
  s = ws.RunNetOnce(testing::NetFromText(R"(name: "inf"
    op { type: "FloatToHalf" input: "x" output: "h" }
    op { type: "Cast" input: "h" output: "i" arg { name: "to" i: 2 } })"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("holds inf at element 1, which int32 cannot represent"),
            std::string::npos)
      << s.ToString();
}

TEST(Float16Test, EachConversionsGradientIsTheOther) {
  NetDef net = testing::NetFromText(R"(name: "g"
    op { type: "FloatToHalf" input: "x" output: "h" }
    op { type: "HalfToFloat" input: "h" output: "y" })");
  const GradientMap grads = AddGradientOperators(&net, {"y"});
  std::vector<std::string> types;
  for (int i = 2; i < net.op_size(); ++i) types.push_back(net.op(i).type());
  // dy's fill, then dh = FloatToHalf(dy) and dx = HalfToFloat(dh).
  EXPECT_EQ(types, (std::vector<std::string>{"ConstantFill", "FloatToHalf", "HalfToFloat"}));
  EXPECT_EQ(grads.count("x"), 1u);
}

TEST(Float16Test, NpyFilesAndTensorProtosKeepTheBits) {
  const Tensor h = Halves({0.1f, -65504.f, 6e-8f, 0.f});
  const std::string path = ::testing::TempDir() + "/float16_test.npy";
  ASSERT_TRUE(WriteNpyFile(path, h).ok());
  std::ifstream file(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), {});
  EXPECT_NE(bytes.find("'descr': '<f2'"), std::string::npos);
  Tensor read;
  ASSERT_TRUE(ReadNpyFile(path, &read).ok());
  ASSERT_EQ(read.dtype(), DType::kFloat16);
  EXPECT_EQ(std::memcmp(read.raw_data(), h.raw_data(), 8), 0);

  // Caffe2 keeps float16 as each element's bits in int32_data.
  const TensorProto proto = ToTensorProto("h", h);
  EXPECT_EQ(proto.data_type(), TensorProto::FLOAT16);
  ASSERT_EQ(proto.int32_data_size(), 4);
  EXPECT_EQ(proto.int32_data(0), 0x2e66);
  Tensor back;
  FromTensorProto(proto, &back);
  EXPECT_EQ(std::memcmp(back.raw_data(), h.raw_data(), 8), 0);
  const RecordTensor record = RecordTensorOf(proto, "record");
  EXPECT_EQ(record.ToString(), "float16[4]");
  std::vector<uint8_t> slot(8);
  CopyRecordValues(proto, record, slot.data(), "record");
  EXPECT_EQ(std::memcmp(slot.data(), h.raw_data(), 8), 0);
  TensorProto bad = proto;
  bad.set_int32_data(1, 70000);
  EXPECT_THROW(FromTensorProto(bad, &back), Error);
}

// y = Relu(x) in float16 at both ends: HalfToFloat, Relu, FloatToHalf.
NetDef HalfReluNet() {
  return testing::NetFromText(R"(name: "half_relu" external_input: "x" external_output: "y"
    op { type: "HalfToFloat" input: "x" output: "xf" }
    op { type: "Relu" input: "xf" output: "yf" }
    op { type: "FloatToHalf" input: "yf" output: "y" })");
}

TEST(Float16Test, PredictorAndSessionTakeAndGiveFloat16) {
  std::unique_ptr<Predictor> predictor;
  ASSERT_TRUE(Predictor::FromNetDefs(NetDef(), HalfReluNet(), {}, &predictor).ok());
  const std::vector<Float16> x = {Float16(-1.5f), Float16(0.25f), Float16(3.f)};
  std::vector<OutputTensor> outputs;
  Status s = predictor->Run({InputView::Of(x.data(), {3})}, &outputs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(outputs[0].dtype, DType::kFloat16);
  const Float16* y = outputs[0].data<Float16>();
  ASSERT_NE(y, nullptr);
  EXPECT_EQ((std::vector<float>{y[0], y[1], y[2]}), (std::vector<float>{0.f, 0.25f, 3.f}));
  const std::vector<uint8_t> y_bytes = outputs[0].bytes;
  const std::vector<float> floats = {1.f, 2.f, 3.f};
  s = predictor->Run({InputView::Of(floats.data(), {3})}, &outputs);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("float16"), std::string::npos) << s.ToString();

  // A model folder whose value_info.json says float16 (Caffe2's code 12).
  const std::string dir = ::testing::TempDir() + "/float16_model";
  std::filesystem::remove_all(dir);
  ModelFolder folder;
  folder.predict_net = HalfReluNet();
  folder.inputs = {{"x", DType::kFloat16, {1, 3}}};
  ASSERT_TRUE(WriteModelFolder(dir, folder).ok());
  std::ifstream info(dir + "/value_info.json");
  const std::string text((std::istreambuf_iterator<char>(info)), {});
  EXPECT_NE(text.find("[12, [1, 3]]"), std::string::npos) << text;
  ASSERT_TRUE(Predictor::FromModelFolder(dir, {}, &predictor).ok());
  std::map<std::string, OutputTensor> named;
  s = predictor->Run({{"x", InputView::Of(x.data(), {1, 3})}}, &named);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(named.at("y").bytes, y_bytes);

  Session session;
  const std::string net = ::testing::TempDir() + "/float16_session.pbtxt";
  std::ofstream(net) << HalfReluNet().DebugString();
  std::string name;
  ASSERT_TRUE(session.LoadNet(net, &name).ok());
  ASSERT_TRUE(session.Feed("x", InputView::Of(x.data(), {3})).ok());
  ASSERT_TRUE(session.RunNet(name).ok());
  OutputTensor fetched;
  ASSERT_TRUE(session.Fetch("y", &fetched).ok());
  ASSERT_EQ(fetched.dtype, DType::kFloat16);
  EXPECT_EQ(static_cast<float>(fetched.data<Float16>()[2]), 3.f);
}

}  // namespace
}  // namespace braid
