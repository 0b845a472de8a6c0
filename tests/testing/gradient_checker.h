// Numerical gradient checker: compares an op's gradient ops (built by its registered
// GradientMaker) with central finite differences of a scalar loss, and checks that the op and its
// gradient ops compute the same bits on a simulated GPU (sim:0, runtime/device/sim/sim_device.h) as
// on the host, from the same inputs: so every op it checks runs on sim, with shape inference that
// agrees with its kernel.
//
// The loss is sum_k sum_i w_k[i] * output_k[i] over the checked outputs, with fixed random weights
// w_k in [-1, 1) (from `seed`), accumulated in double. The output gradients fed to the gradient ops
// are exactly those weights. For every checked input element x_j the numeric gradient is
// (loss(x_j + step) - loss(x_j - step)) / (2 step); each forward evaluation runs the op as a fresh
// one-op net, so ops drawing random numbers from their seeded stream see the same stream every
// time. In-place ops are supported: inputs the op overwrites are restored before each evaluation.
// An input blob named more than once (Mul(X, X)) is checked once, against the sum of its
// occurrences' gradients.
//
//   Workspace ws;
//   Feed<float>(&ws, "X", {2, 3}, {...});   // keep Relu inputs away from 0 by more than `step`
//   EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Relu" input: "X" output: "Y")"), &ws));
//
// Blobs it creates in *ws: the output gradients ("<output>_grad") and the input gradients
// ("<input>_grad"; a suffix "_<k>" makes names unique), and whatever the gradient ops write. On
// return the outputs and gradients are those at the fed inputs, and the inputs the op does not
// overwrite hold their fed values.
//
// Thread safety: none; one call per workspace at a time.
#ifndef BRAID_TESTS_TESTING_GRADIENT_CHECKER_H_
#define BRAID_TESTS_TESTING_GRADIENT_CHECKER_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"

namespace braid::testing {

struct GradientCheckOptions {
  float step = 1e-3f;       // central-difference step
  float tolerance = 1e-2f;  // |analytic - numeric| <= tolerance * max(1, |numeric|)
  std::vector<int>
      inputs;  // inputs to check; empty = every float32 input the maker gives a gradient
  std::vector<int> outputs;  // outputs in the loss; empty = every float32 output
  uint64_t seed = 1;         // seed of the random loss weights
};

// Runs `op` (a forward op whose inputs are already fed in *ws), builds its gradient ops with the
// op type's registered GradientMaker, and compares each checked input's analytic gradient with
// central finite differences of loss = sum_k w_k * output_k (fixed random weights w, accumulated in
// double). On failure the message names the input, the worst element, both values.
::testing::AssertionResult CheckGradient(const OperatorDef& op, Workspace* ws,
                                         const GradientCheckOptions& options = {});

// For a whole net: compares `analytic`, the gradient of sum(`loss`) with respect to `blob` (as an
// autodiff-built backward pass computed it), with central finite differences of sum(`loss`) after
// running `forward` (a net in *ws computing `loss` from `blob`), on every `stride`-th element.
::testing::AssertionResult CheckNetGradient(Net* forward, Workspace* ws, const std::string& blob,
                                            const std::string& loss,
                                            const std::vector<float>& analytic, size_t stride = 1,
                                            const GradientCheckOptions& options = {});

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_GRADIENT_CHECKER_H_
