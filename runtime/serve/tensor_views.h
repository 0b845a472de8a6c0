// Between the public API's tensors (<braid/tensor_view.h>: InputView, OutputTensor) and braid's
// Tensor, for the Predictor and the Session.
//
//   Tensor host = HostView(view, "input 'data'");  // over the caller's memory, not copied
//   blob->CopyFrom(host);
//   CopyOut(*blob, &output);                        // to host memory the caller owns
//
// Thread safety: free functions; the tensors are the caller's to order.
#ifndef BRAID_RUNTIME_SERVE_TENSOR_VIEWS_H_
#define BRAID_RUNTIME_SERVE_TENSOR_VIEWS_H_

#include <string>

#include "braid/tensor_view.h"
#include "runtime/core/tensor.h"

namespace braid {

// A host tensor of the view's dtype and shape over the caller's memory, which braid only reads.
// Throws braid::Error (InvalidArgument, starting with `what`) for a negative dim, an element count
// too large, or no data where there are elements.
Tensor HostView(const InputView& view, const std::string& what);

// Copies `tensor`, on any device and of any dtype, into *out (its byte buffer reused).
void CopyOut(const Tensor& tensor, OutputTensor* out);

}  // namespace braid

#endif  // BRAID_RUNTIME_SERVE_TENSOR_VIEWS_H_
