// What the CUDA Conv and ConvGradient kernels (ops/nn/conv_op.cu, conv_gradient_op.cu) share: the
// convolution as plain numbers, its cuDNN descriptors, and the algorithm of each direction, chosen
// once per process through the AlgorithmRegistry (runtime/device/algorithm_registry.h).
//
// Shapes come from the CPU ops' own functions (ComputeConvShapes, ComputeConvGradientShapes), so
// the two devices accept the same ops with the same errors. One thing the CPU op takes and cuDNN
// cannot express is refused: unequal begin and end pads (pad_t != pad_b or pad_l != pad_r).
//
// Algorithms. The key (CudnnConvAlgorithmKey) names the direction, cuDNN's version, the GPU (SM
// and model name), float32 with FMA math, the shapes (batch included), group, bias, stride,
// dilation and pads; no device id, so every replica of a data-parallel net runs the same algorithm.
// The candidates are those cuDNN's heuristic (cudnnGetConvolution*Algorithm_v7) supports for the
// shape, in its order of preference, each with its workspace (cudnnGetConvolution*WorkspaceSize).
// An op with deterministic = 1 leaves out the algorithms that add with atomics (those cuDNN
// documents as non-deterministic: backward-data ALGO_0, backward-filter ALGO_0 and ALGO_3, and any
// it reports so for the shape) unless nothing else is supported, so that reruns compute the same
// bits; its key then ends in "|deterministic". By default every algorithm competes, as in Caffe2
// and PyTorch: on ResNet-50 training the atomic ones are the fastest for many backward layers.
// Data-parallel replicas stay identical either way (each applies the same all-reduced gradient).
// With BRAID_ALGORITHM_SEARCH=rule the registry takes the first
// candidate that fits the workspace limit, untimed; so does an op with exhaustive_search = 0 (its
// key then ends in "|search=heuristic"). Otherwise it asks each candidate's time: the first such
// question runs cuDNN's find (cudnnFindConvolution*AlgorithmEx) once, over all algorithms at once,
// on the op's own buffers (the direction's output is overwritten) with one DeviceScratch workspace
// as large as the largest candidate that fits the limit (given back to the device after the search
// when it took a segment of its own, not cached); the other candidates' times are read from that
// one run. A candidate find could not run counts as infinitely slow. The registry then keeps the
// fastest, ties to the heuristic's favourite. The workspace limit is the op's ws_nbytes_limit
// (default 1 GiB), at most what the device can give beyond its allocator's reserve
// (ops/nn/conv_search_options.h).
//
// Thread safety: every function may be called from any thread; descriptors belong to their
// caller. Choosing synchronises the device when it searches (cuDNN's find times on the GPU): a
// search runs once per key and process, on the op's first run of a shape.
#ifndef BRAID_OPS_NN_CUDNN_CONV_H_
#define BRAID_OPS_NN_CUDNN_CONV_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/nn/conv_search_options.h"
#include "ops/nn/cudnn_descriptors.h"
#include "proto/braid.pb.h"
#include "runtime/core/device.h"
#include "runtime/core/op_schema.h"

namespace braid {

struct CudnnConvProblem {
  std::vector<int64_t> x_dims, filter_dims, y_dims;
  int64_t group = 1;
  bool has_bias = false;  // Conv: a third input; ConvGradient: a dbias output
  Int64Pair stride{1, 1}, dilation{1, 1}, pad{0, 0};  // pad: begin == end on both dims

  int64_t out_channels() const { return filter_dims[0]; }
};

// The problem of Conv op `def` (inputs X, filter[, bias]); throws braid::Error as the CPU op does,
// and InvalidArgument for unequal begin and end pads.
CudnnConvProblem CudnnConvProblemOf(const OperatorDef& def, const std::vector<ShapeInfo>& in);

// Which outputs a ConvGradient op writes (-1: not written), as the CPU op reads them.
struct CudnnConvGradientOutputs {
  int dfilter = 0, dbias = -1, dx = -1;
};
// The problem of ConvGradient op `def` (inputs X, filter, dY) and its outputs.
CudnnConvProblem CudnnConvGradientProblemOf(const OperatorDef& def,
                                            const std::vector<ShapeInfo>& in,
                                            CudnnConvGradientOutputs* outputs);

// The descriptors of a problem: X (and dX), Y (and dY), the filter, the bias as [1, M, 1, 1].
struct CudnnConvDescriptors {
  explicit CudnnConvDescriptors(const CudnnConvProblem& p);
  TensorDescriptor x, y, bias;
  FilterDescriptor filter;
  ConvolutionDescriptor conv;
};

enum class CudnnConvDirection { kForward, kBackwardData, kBackwardFilter };
const char* CudnnConvDirectionName(CudnnConvDirection direction);  // "forward", ...

// cuDNN's algorithm `algo` of `direction` by name ("implicit_precomp_gemm", "algo_1", "fft", ...),
// and back (-1 for a name the direction does not have).
std::string CudnnConvAlgorithmName(CudnnConvDirection direction, int algo);
int CudnnConvAlgorithmNamed(CudnnConvDirection direction, const std::string& name);
// Whether cuDNN documents `algo` of `direction` as non-deterministic (atomic adds).
bool CudnnConvAlgorithmIsNondeterministic(CudnnConvDirection direction, int algo);

// The registry key of `p` in `direction` on a GPU described by `gpu` (CudnnGpuDescription) with
// cuDNN `cudnn_version` (cudnnGetVersion()), with TF32 allowed or not (another math, other
// algorithms). Pure: the same arguments give the same key.
std::string CudnnConvAlgorithmKey(const CudnnConvProblem& p, CudnnConvDirection direction,
                                  const std::string& gpu, size_t cudnn_version, bool tf32 = false);
// "sm_90 NVIDIA H100 80GB HBM3" for the physical GPU of logical CUDA device `device` (cached per
// GPU); an error names `device`.
std::string CudnnGpuDescription(const Device& device);

// The device buffers a search may run the direction on (the op's own tensors).
struct CudnnConvBuffers {
  const float* x = nullptr;       // forward, backward filter
  const float* filter = nullptr;  // forward, backward data
  const float* dy = nullptr;      // backward data, backward filter
  float* out = nullptr;           // Y, dX or dfilter: overwritten by a search
};

struct CudnnConvAlgorithm {
  int algo = 0;  // a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
  size_t workspace_bytes = 0;
};

// The algorithm every replica runs for `p` in `direction` (searching on the current CUDA device,
// `device`, as `options` allow, when no one has yet) and its workspace for this problem. Call with
// the device current and CurrentCudaStream() set (a CUDA op's Run). Throws braid::Error when
// nothing fits or runs.
CudnnConvAlgorithm ChooseCudnnConvAlgorithm(const CudnnConvProblem& p,
                                            const CudnnConvDescriptors& d,
                                            CudnnConvDirection direction,
                                            const CudnnConvBuffers& buffers, const Device& device,
                                            const ConvSearchOptions& options);

}  // namespace braid

#endif  // BRAID_OPS_NN_CUDNN_CONV_H_
