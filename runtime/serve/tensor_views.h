// Between the public API's tensors (<braid/tensor_view.h>: InputView, OutputTensor, OutputView)
// and braid's Tensor, for the Predictor and the Session.
//
//   Tensor in = ViewOf(view, "input 'data'");  // over the caller's memory (host or device)
//   WaitForWriters(view);                       // the application's stream has written it
//   blob->CopyFrom(in);
//   CopyOut(*blob, &output);                    // to host memory the caller owns
//   CopyOut(*blob, &into, "output 'prob'");     // into the caller's buffer, host or device
//
// Thread safety: free functions; the tensors are the caller's to order.
#ifndef BRAID_RUNTIME_SERVE_TENSOR_VIEWS_H_
#define BRAID_RUNTIME_SERVE_TENSOR_VIEWS_H_

#include <string>

#include "braid/tensor_view.h"
#include "runtime/core/device.h"
#include "runtime/core/tensor.h"

namespace braid {

// The device a view's memory is on ("": cpu:0). Throws braid::Error (InvalidArgument, starting
// with `what`) for a device braid cannot parse or use, or a stream given with host memory.
Device ViewDevice(const std::string& device, const void* stream, const std::string& what);

// A tensor of the view's dtype and shape over the caller's memory, on the view's device, which
// braid only reads. Throws braid::Error (InvalidArgument, starting with `what`) as ViewDevice, and
// for a negative dim, an element count too large, or no data where there are elements.
Tensor ViewOf(const InputView& view, const std::string& what);

// Blocks until the work the application queued on the view's stream so far has run (nothing for
// host memory). The view passed ViewOf.
void WaitForWriters(const InputView& view);

// Copies `tensor`, on any device and of any dtype, into *out (its byte buffer reused).
void CopyOut(const Tensor& tensor, OutputTensor* out);

// Sets out's dtype and shape to the tensor's and copies it into out's memory, returning once it is
// written. Throws braid::Error (InvalidArgument, starting with `what`) as ViewDevice, for a buffer
// smaller than the tensor (nothing written) or without data.
void CopyOut(const Tensor& tensor, OutputView* out, const std::string& what);

}  // namespace braid

#endif  // BRAID_RUNTIME_SERVE_TENSOR_VIEWS_H_
