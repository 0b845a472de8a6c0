#include "ops/nn/cudnn_descriptors.h"

#include <limits>

#include "ops/common/op_checks.h"

namespace braid {

int CudnnInt(int64_t value, const std::string& what) {
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
    ThrowInvalidArgument(what + " " + std::to_string(value) + " does not fit cuDNN's int");
  }
  return static_cast<int>(value);
}

TensorDescriptor NchwTensorDescriptor(const std::vector<int64_t>& dims) {
  if (dims.size() != 4)
    ThrowInvalidArgument("cuDNN tensor " + DimsText(dims) + " is not 4-D NCHW");
  int64_t numel = 1;
  for (int64_t d : dims) numel *= d;
  CudnnInt(numel, "the element count of tensor " + DimsText(dims));
  TensorDescriptor desc;
  CheckCudnn(cudnnSetTensor4dDescriptor(desc.get(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                        CudnnInt(dims[0], "N"), CudnnInt(dims[1], "C"),
                                        CudnnInt(dims[2], "H"), CudnnInt(dims[3], "W")),
             "cudnnSetTensor4dDescriptor");
  return desc;
}

FilterDescriptor NchwFilterDescriptor(const std::vector<int64_t>& dims) {
  if (dims.size() != 4) ThrowInvalidArgument("cuDNN filter " + DimsText(dims) + " is not 4-D");
  FilterDescriptor desc;
  CheckCudnn(cudnnSetFilter4dDescriptor(desc.get(), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                        CudnnInt(dims[0], "K"), CudnnInt(dims[1], "C"),
                                        CudnnInt(dims[2], "kH"), CudnnInt(dims[3], "kW")),
             "cudnnSetFilter4dDescriptor");
  return desc;
}

ConvolutionDescriptor MakeConvolutionDescriptor(const Int64Pair& pad, const Int64Pair& stride,
                                                const Int64Pair& dilation, int64_t group) {
  ConvolutionDescriptor desc;
  CheckCudnn(cudnnSetConvolution2dDescriptor(
                 desc.get(), CudnnInt(pad[0], "pad_h"), CudnnInt(pad[1], "pad_w"),
                 CudnnInt(stride[0], "stride_h"), CudnnInt(stride[1], "stride_w"),
                 CudnnInt(dilation[0], "dilation_h"), CudnnInt(dilation[1], "dilation_w"),
                 CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
             "cudnnSetConvolution2dDescriptor");
  CheckCudnn(cudnnSetConvolutionGroupCount(desc.get(), CudnnInt(group, "group")),
             "cudnnSetConvolutionGroupCount");
  CheckCudnn(cudnnSetConvolutionMathType(desc.get(),
                                         CudaTf32Allowed() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
             "cudnnSetConvolutionMathType");
  return desc;
}

PoolingDescriptor MakePoolingDescriptor(cudnnPoolingMode_t mode, const Int64Pair& kernel,
                                        const Int64Pair& pad, const Int64Pair& stride) {
  PoolingDescriptor desc;
  CheckCudnn(
      cudnnSetPooling2dDescriptor(desc.get(), mode, CUDNN_PROPAGATE_NAN,
                                  CudnnInt(kernel[0], "kernel_h"), CudnnInt(kernel[1], "kernel_w"),
                                  CudnnInt(pad[0], "pad_h"), CudnnInt(pad[1], "pad_w"),
                                  CudnnInt(stride[0], "stride_h"), CudnnInt(stride[1], "stride_w")),
      "cudnnSetPooling2dDescriptor");
  return desc;
}

void RequireSymmetricPads(const OperatorDef& def, const ConvPoolWindow& window,
                          const std::vector<int64_t>& x_dims, const std::string& remedy) {
  if (window.pad_begin == window.pad_end) return;
  ThrowInvalidArgument(
      def.type() + " on CUDA needs equal begin and end pads (cuDNN pads both sides alike), got " +
      "pad_t=" + std::to_string(window.pad_begin[0]) + " pad_b=" +
      std::to_string(window.pad_end[0]) + " pad_l=" + std::to_string(window.pad_begin[1]) +
      " pad_r=" + std::to_string(window.pad_end[1]) + " for X " + DimsText(x_dims) + "; " +
      remedy);
}

}  // namespace braid
