#include "ops/cuda_test_util.h"

#include <cmath>
#include <random>
#include <sstream>

#include "braid/status.h"
#include "ops/op_test_util.h"
#include "runtime/core/device_context.h"
#include "runtime/core/workspace.h"

namespace braid::test {
namespace {

std::string DeviceOptionText(const Device& device) {
  return " device_option { device_type: " + std::to_string(static_cast<int>(device.type)) +
         " device_id: " + std::to_string(device.id) + " }";
}

template <typename T>
HostBlob MakeBlob(const std::string& name, std::vector<int64_t> dims, const std::vector<T>& values) {
  Tensor t(DTypeOf<T>(), std::move(dims));
  EXPECT_EQ(t.numel(), static_cast<int64_t>(values.size())) << name;
  std::copy(values.begin(), values.end(), t.mutable_data<T>());
  return {name, t};
}

double ValueAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kBool: return t.data<bool>()[i];
    default: ADD_FAILURE() << "cannot compare " << t.ShapeString(); return 0;
  }
}

}  // namespace

std::string NoGpuReason() {
  try {
    GetDeviceContext(ParseDevice("cuda:0"));
    return "";
  } catch (const Error& e) {
    return e.status().message();
  }
}

HostBlob RandomFloats(const std::string& name, std::vector<int64_t> dims, uint64_t seed, float lo,
                      float hi) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return MakeBlob(name, std::move(dims), values);
}

HostBlob Int32s(const std::string& name, std::vector<int64_t> dims, std::vector<int32_t> values) {
  return MakeBlob(name, std::move(dims), values);
}

HostBlob Floats(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
  return MakeBlob(name, std::move(dims), values);
}

std::vector<Tensor> RunOnDevice(const std::string& op_text, const std::vector<HostBlob>& inputs,
                                const std::string& device_text) {
  const Device device = ParseDevice(device_text);
  Workspace ws;
  for (const HostBlob& in : inputs) {
    Tensor* blob = ws.CreateBlob(in.name);
    *blob = Tensor(device);
    blob->CopyFrom(in.value);
  }
  NetDef net = NetOf({op_text + DeviceOptionText(device)});
  const Status s = ws.RunNetOnce(net);
  if (!s.ok()) {
    ADD_FAILURE() << "on " << device_text << ": " << s.ToString();
    return {};
  }
  std::vector<Tensor> outputs;
  for (const std::string& name : net.op(0).output()) {
    Tensor host;
    host.CopyFrom(*ws.GetBlob(name));
    outputs.push_back(host);
  }
  return outputs;
}

void ExpectCudaMatchesCpu(const std::string& op_text, const std::vector<HostBlob>& inputs,
                          Tolerance tol, const std::vector<std::string>& ignore) {
  const std::vector<Tensor> cpu = RunOnDevice(op_text, inputs, "cpu:0");
  const std::vector<Tensor> cuda = RunOnDevice(op_text, inputs, "cuda:0");
  if (cpu.empty() || cuda.empty()) return;
  const OperatorDef op = ParseOp(op_text);
  ASSERT_EQ(cpu.size(), cuda.size());
  for (size_t o = 0; o < cpu.size(); ++o) {
    const std::string label = op.type() + " output '" + op.output(o) + "'";
    ASSERT_EQ(cpu[o].dtype(), cuda[o].dtype()) << label;
    ASSERT_EQ(cpu[o].shape(), cuda[o].shape()) << label << ": " << cpu[o].ShapeString()
                                                << " on cpu, " << cuda[o].ShapeString()
                                                << " on cuda";
    if (std::find(ignore.begin(), ignore.end(), op.output(o)) != ignore.end()) continue;
    int64_t bad = 0;
    std::ostringstream first;
    for (int64_t i = 0; i < cpu[o].numel(); ++i) {
      const double want = ValueAt(cpu[o], i);
      const double got = ValueAt(cuda[o], i);
      if (std::abs(got - want) <= tol.abs + tol.rel * std::abs(want)) continue;
      if (bad++ == 0) first << "element " << i << ": cuda " << got << ", cpu " << want;
    }
    EXPECT_EQ(bad, 0) << label << ": " << bad << " of " << cpu[o].numel()
                      << " elements differ beyond abs " << tol.abs << " + rel " << tol.rel
                      << "; first " << first.str();
  }
}

}  // namespace braid::test
