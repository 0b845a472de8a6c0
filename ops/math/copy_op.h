// Copy: output 0 becomes a copy of input 0, any element type, any layout (Caffe2's Copy). It runs
// on its device_option's device and writes its output there; the input may be on any device (a
// copy between devices: host to device, device to host, device to device). As in Caffe2, Y may not
// be X. Its gradient is a Copy of dY on the same device. On a CUDA device every copy, within the
// device too, is its context's CopyInKernel: cudaMemcpyAsync (or a peer copy) on the current stream.
//
// The same kernel serves CopyCPUToGPU and CopyGPUToCPU (ops/device/): a copy whose schema places
// its input or output on the host.
#ifndef BRAID_OPS_MATH_COPY_OP_H_
#define BRAID_OPS_MATH_COPY_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class CopyOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_COPY_OP_H_
