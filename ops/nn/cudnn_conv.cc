#include "ops/nn/cudnn_conv.h"

#include <iterator>
#include <map>
#include <mutex>
#include <sstream>

#include "ops/common/op_checks.h"
#include "ops/nn/conv_gradient_op.h"
#include "ops/nn/conv_op.h"
#include "runtime/core/device_context.h"

namespace braid {
namespace {

constexpr const char* kForwardNames[] = {
    "implicit_gemm", "implicit_precomp_gemm", "gemm", "direct", "fft", "fft_tiling",
    "winograd",      "winograd_nonfused"};
constexpr const char* kBackwardDataNames[] = {"algo_0",     "algo_1",   "fft",
                                              "fft_tiling", "winograd", "winograd_nonfused"};
constexpr const char* kBackwardFilterNames[] = {
    "algo_0", "algo_1", "fft", "algo_3", "winograd", "winograd_nonfused", "fft_tiling"};
static_assert(std::size(kForwardNames) == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
static_assert(std::size(kBackwardDataNames) == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
static_assert(std::size(kBackwardFilterNames) == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);

std::vector<const char*> NamesOf(CudnnConvDirection direction) {
  switch (direction) {
    case CudnnConvDirection::kForward:
      return {std::begin(kForwardNames), std::end(kForwardNames)};
    case CudnnConvDirection::kBackwardData:
      return {std::begin(kBackwardDataNames), std::end(kBackwardDataNames)};
    case CudnnConvDirection::kBackwardFilter:
      return {std::begin(kBackwardFilterNames), std::end(kBackwardFilterNames)};
  }
  return {};
}

CudnnConvProblem ProblemOf(const OperatorDef& def, const ConvShapes& s) {
  const ConvPoolWindow& w = s.window;
  RequireSymmetricPads(def, w, s.x_dims, "run it on the CPU or pad X explicitly");
  CudnnConvProblem p;
  p.x_dims = s.x_dims;
  p.filter_dims = s.filter_dims;
  p.y_dims = s.y_dims;
  p.group = s.group;
  p.has_bias = s.has_bias;
  p.stride = w.stride;
  p.dilation = w.dilation;
  p.pad = w.pad_begin;
  return p;
}

}  // namespace

CudnnConvProblem CudnnConvProblemOf(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  return ProblemOf(def, ComputeConvShapes(def, in));
}

CudnnConvProblem CudnnConvGradientProblemOf(const OperatorDef& def,
                                            const std::vector<ShapeInfo>& in,
                                            CudnnConvGradientOutputs* outputs) {
  const ConvGradientOutputs o = ConvGradientOutputsOf(def);
  *outputs = {o.dfilter, o.dbias, o.dx};
  return ProblemOf(def, ComputeConvGradientShapes(def, in));
}

CudnnConvDescriptors::CudnnConvDescriptors(const CudnnConvProblem& p)
    : x(NchwTensorDescriptor(p.x_dims)),
      y(NchwTensorDescriptor(p.y_dims)),
      bias(NchwTensorDescriptor({1, p.out_channels(), 1, 1})),
      filter(NchwFilterDescriptor(p.filter_dims)),
      conv(MakeConvolutionDescriptor(p.pad, p.stride, p.dilation, p.group)) {}

const char* CudnnConvDirectionName(CudnnConvDirection direction) {
  switch (direction) {
    case CudnnConvDirection::kForward:
      return "forward";
    case CudnnConvDirection::kBackwardData:
      return "backward_data";
    case CudnnConvDirection::kBackwardFilter:
      return "backward_filter";
  }
  return "?";
}

std::string CudnnConvAlgorithmName(CudnnConvDirection direction, int algo) {
  const std::vector<const char*> names = NamesOf(direction);
  if (algo < 0 || algo >= static_cast<int>(names.size())) return "algo" + std::to_string(algo);
  return names[algo];
}

int CudnnConvAlgorithmNamed(CudnnConvDirection direction, const std::string& name) {
  const std::vector<const char*> names = NamesOf(direction);
  for (size_t i = 0; i < names.size(); ++i) {
    if (name == names[i]) return static_cast<int>(i);
  }
  return -1;
}

bool CudnnConvAlgorithmIsNondeterministic(CudnnConvDirection direction, int algo) {
  switch (direction) {
    case CudnnConvDirection::kForward:
      return false;
    case CudnnConvDirection::kBackwardData:
      return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
    case CudnnConvDirection::kBackwardFilter:
      return algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 ||
             algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
  }
  return true;
}

std::string CudnnConvAlgorithmKey(const CudnnConvProblem& p, CudnnConvDirection direction,
                                  const std::string& gpu, size_t cudnn_version, bool tf32) {
  std::string gpu_name = gpu;
  for (char& ch : gpu_name) {
    if (ch == '\t' || ch == '\n' || ch == '\r' || ch == '|') ch = ' ';
  }
  std::ostringstream key;
  key << "Conv/" << CudnnConvDirectionName(direction) << "|cudnn=" << cudnn_version
      << "|gpu=" << gpu_name << "|f32|math=" << (tf32 ? "tf32" : "fma")
      << "|x=" << JoinedInts(p.x_dims) << "|w=" << JoinedInts(p.filter_dims) << "|g=" << p.group
      << "|bias=" << p.has_bias << "|stride=" << JoinedInts({p.stride[0], p.stride[1]})
      << "|dilation=" << JoinedInts({p.dilation[0], p.dilation[1]})
      << "|pad=" << JoinedInts({p.pad[0], p.pad[1]});
  return key.str();
}

std::string CudnnGpuDescription(const Device& device) {
  static std::mutex mu;
  static auto* descriptions = new std::map<int, std::string>();  // by physical GPU
  const int physical = PhysicalDevice(device).id;
  std::lock_guard<std::mutex> lock(mu);
  auto it = descriptions->find(physical);
  if (it == descriptions->end()) {
    cudaDeviceProp prop{};
    CheckCuda(cudaGetDeviceProperties(&prop, physical), "cudaGetDeviceProperties", device);
    const std::string sm = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    it = descriptions->emplace(physical, sm + " " + prop.name).first;
  }
  return it->second;
}

}  // namespace braid
