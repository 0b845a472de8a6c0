// Between the public API's tensors (<braid/tensor_view.h>: InputView, OutputTensor, OutputView)
// and braid's Tensor, for the Predictor and the Session.
//
//   Tensor in = ViewOf(view, "input 'data'");   // over the caller's memory (host or device)
//   StreamMarks writers = MarkWriters({{"data", view}}, "predictor 'p'");
//   WaitForWriters(writers, stop, "predictor 'p'");  // the application's streams wrote them
//   blob->CopyFrom(in);
//   CopyOut(*blob, &output);                     // to host memory the caller owns
//   CheckFits(*blob, &into, "output 'prob'");    // then, once every output fits:
//   CopyOut(*blob, into);                        // into the caller's buffer, host or device
//
// Thread safety: free functions; the tensors are the caller's to order.
#ifndef BRAID_RUNTIME_SERVE_TENSOR_VIEWS_H_
#define BRAID_RUNTIME_SERVE_TENSOR_VIEWS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "braid/tensor_view.h"
#include "runtime/core/device.h"
#include "runtime/core/device_context.h"
#include "runtime/core/tensor.h"
#include "runtime/exec/run_stop.h"

namespace braid {

// The device a view's memory is on ("": cpu:0). Throws braid::Error (InvalidArgument, starting
// with `what`) for a device braid cannot parse or use, a stream given with host memory, or device
// memory the device's backend says is not its own.
Device ViewDevice(const std::string& device, const void* data, const void* stream,
                  const std::string& what);

// A tensor of the view's dtype and shape over the caller's memory, on the view's device, which
// braid only reads. Throws braid::Error (InvalidArgument, starting with `what`) as ViewDevice, and
// for a negative dim, an element count too large, or no data where there are elements.
Tensor ViewOf(const InputView& view, const std::string& what);

// The tensor ViewOf gives, for a view that passed it already (nothing checked again).
Tensor TensorOver(const InputView& view);

// Events capturing the work the applications queued so far on the streams that write the views on
// a device (none for host memory). The views passed ViewOf. Throws braid::Error (InvalidArgument,
// naming `label` and the input) for a stream braid cannot record on.
using StreamMarks = std::vector<std::unique_ptr<Event>>;
StreamMarks MarkWriters(const std::map<std::string, InputView>& inputs, const std::string& label);
// Waits for `marks` (on the host) until `stop` fires; then throws its DeadlineExceeded or
// Cancelled, naming `label`.
void WaitForWriters(const StreamMarks& marks, const RunStop& stop, const std::string& label);

// Copies `tensor`, on any device and of any dtype, into *out (its byte buffer reused).
void CopyOut(const Tensor& tensor, OutputTensor* out);

// Sets out's shape to the tensor's, and throws braid::Error (InvalidArgument, starting with
// `what`) unless the tensor fits out: out's dtype, room for its bytes, data where it has elements,
// a device braid can use.
void CheckFits(const Tensor& tensor, OutputView* out, const std::string& what);
// Copies `tensor` into out's memory (CheckFits passed), returning once it is written.
void CopyOut(const Tensor& tensor, const OutputView& out);

}  // namespace braid

#endif  // BRAID_RUNTIME_SERVE_TENSOR_VIEWS_H_
