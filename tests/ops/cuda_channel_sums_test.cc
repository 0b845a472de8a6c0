// The CUDA per-channel sums at a realistic size, N * H * W = 32 * 56 * 56 = 100352 terms per
// channel of a [32, 64, 56, 56] activation: SpatialBN's training statistics, SpatialBNGradient's
// dscale and dbias (and the outputs built from them), and ConvGradient's dbias (with dW of a 1x1
// convolution over the same 100352 positions). Each output of the CUDA kernel and of the CPU kernel
// is held against a reference computed here in double, so the two are also within the sum of their
// bounds of each other. They skip without a GPU.
//
// Bounds, per element: a sum S of terms t_i, and what is computed from it, against the reference:
//   CUDA  rel 1e-6 (+ a tiny abs): the kernels sum in double (ops/nn/cuda_channel_reduce.cuh), so a
//         sum is the exact one to float rounding (0.5 ulp = 6e-8), and the float formulas after it
//         add a few ulps;
//   CPU   1e-5 * sum |t_i|: oneDNN sums in float, in an order of its own. A float sum taken
//         strictly in sequence over 10^5 terms of one sign errs by about 4e-6 of sum |t_i| (one
//         sigma: the roundings of a growing partial sum add up as a random walk); oneDNN's blocked
//         partial sums err less. Values derived from a sum (the mean, 1/sqrt(var + eps), dX) get
//         the bound the sum's error carries into them.
// cuDNN's dW is a float sum too, bounded as the CPU's.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ops/cuda_test_util.h"
#include "ops/op_test_util.h"

namespace braid::test {
namespace {

constexpr int64_t kN = 32, kC = 64, kS = 56 * 56;
constexpr double kM = static_cast<double>(kN * kS);  // terms per channel
constexpr double kCudaRel = 1e-6;
constexpr double kCpuPerMagnitude = 1e-5;

std::vector<int64_t> Activation(int64_t channels) { return {kN, channels, 56, 56}; }

int64_t Offset(int64_t n, int64_t c, int64_t p, int64_t channels) {
  return (n * channels + c) * kS + p;
}

// Expects |got[i] - want[i]| <= bound(i) for every element.
void ExpectWithin(const std::string& label, const Tensor& got, const std::vector<double>& want,
                  const std::function<double(int64_t)>& bound) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << label;
  const float* g = got.data<float>();
  int64_t bad = 0;
  std::string first;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double error = std::abs(g[i] - want[i]);
    if (error <= bound(i)) continue;
    if (bad++ == 0) {
      first = "element " + std::to_string(i) + ": " + std::to_string(g[i]) + " vs reference " +
              std::to_string(want[i]) + ", error " + std::to_string(error) + " > bound " +
              std::to_string(bound(i));
    }
  }
  EXPECT_EQ(bad, 0) << label << ": " << bad << " of " << got.numel() << " beyond bound; first "
                    << first;
}

std::vector<double> AsDoubles(const HostBlob& blob) {
  const float* p = blob.value.data<float>();
  return std::vector<double>(p, p + blob.value.numel());
}

// Per channel of x: the mean, the biased variance and the sum of |x|, in double.
struct ChannelStats {
  std::vector<double> mean, var, magnitude;
};

ChannelStats StatsOf(const std::vector<double>& x) {
  ChannelStats s{std::vector<double>(kC), std::vector<double>(kC), std::vector<double>(kC)};
  for (int64_t c = 0; c < kC; ++c) {
    double sum = 0, squares = 0;
    for (int64_t n = 0; n < kN; ++n) {
      for (int64_t p = 0; p < kS; ++p) {
        sum += x[Offset(n, c, p, kC)];
        s.magnitude[c] += std::abs(x[Offset(n, c, p, kC)]);
      }
    }
    s.mean[c] = sum / kM;
    for (int64_t n = 0; n < kN; ++n) {
      for (int64_t p = 0; p < kS; ++p) {
        const double d = x[Offset(n, c, p, kC)] - s.mean[c];
        squares += d * d;
      }
    }
    s.var[c] = squares / kM;
  }
  return s;
}

// Runs `op` on cpu:0 and cuda:0 and holds output o of each against want[o] with the bounds.
struct OutputCheck {
  std::vector<double> want;
  std::function<double(int64_t)> cuda_bound, cpu_bound;
};

void ExpectBothWithinBounds(const std::string& op, const std::vector<HostBlob>& inputs,
                            const std::vector<OutputCheck>& checks) {
  const OperatorDef def = ParseOp(op);
  for (const char* device : {"cuda:0", "cpu:0"}) {
    const std::vector<Tensor> out = RunOnDevice(op, inputs, device);
    ASSERT_EQ(out.size(), checks.size()) << device;
    const bool cuda = std::string(device) == "cuda:0";
    for (size_t o = 0; o < checks.size(); ++o) {
      ExpectWithin(def.type() + " '" + def.output(o) + "' on " + device, out[o], checks[o].want,
                   cuda ? checks[o].cuda_bound : checks[o].cpu_bound);
    }
  }
}

TEST(CudaChannelSums, SpatialBNTrainingStatisticsAtRealisticSize) {
  BRAID_REQUIRE_GPU();
  const float momentum = 0.9f, epsilon = 1e-5f;
  const std::vector<HostBlob> in{RandomFloats("X", Activation(kC), 90, -2.f, 3.f),
                                 RandomFloats("s", {kC}, 91, 0.5f, 1.5f),
                                 RandomFloats("b", {kC}, 92), RandomFloats("rm", {kC}, 93),
                                 RandomFloats("rv", {kC}, 94, 0.5f, 2.f)};
  const std::vector<double> x = AsDoubles(in[0]), scale = AsDoubles(in[1]), bias = AsDoubles(in[2]),
                            rm = AsDoubles(in[3]), rv = AsDoubles(in[4]);
  const ChannelStats st = StatsOf(x);
  OutputCheck y, running_mean, running_var, saved_mean, saved_inv_std;
  std::vector<double> mean_bound(kC), inv_bound(kC);  // the CPU's, carried from its sums
  for (int64_t c = 0; c < kC; ++c) {
    const double inv = 1 / std::sqrt(st.var[c] + epsilon);
    saved_mean.want.push_back(st.mean[c]);
    saved_inv_std.want.push_back(inv);
    running_mean.want.push_back(momentum * rm[c] + (1 - momentum) * st.mean[c]);
    running_var.want.push_back(momentum * rv[c] + (1 - momentum) * st.var[c] * kM / (kM - 1));
    mean_bound[c] = kCpuPerMagnitude * st.magnitude[c] / kM;
    // The variance sums (x - mean)^2 (or x^2): terms of one sign, up to 9 in size.
    inv_bound[c] = 0.5 * inv * kCpuPerMagnitude * (st.var[c] + st.mean[c] * st.mean[c]) / st.var[c];
  }
  y.want.resize(x.size());
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    const int64_t c = (i / kS) % kC;
    y.want[i] = (x[i] - st.mean[c]) * saved_inv_std.want[c] * scale[c] + bias[c];
  }
  const auto cuda_rel = [](const std::vector<double>& want, double abs) {
    return [&want, abs](int64_t i) { return kCudaRel * std::abs(want[i]) + abs; };
  };
  y.cuda_bound = cuda_rel(y.want, 1e-5);  // float (x - mean) * (inv * scale) + bias: a few ulps
  y.cpu_bound = [&](int64_t i) {
    const int64_t c = (i / kS) % kC;
    return 1e-5 + scale[c] * (mean_bound[c] * saved_inv_std.want[c] +
                              std::abs(x[i] - st.mean[c]) * inv_bound[c]);
  };
  saved_mean.cuda_bound = cuda_rel(saved_mean.want, 1e-7);
  saved_mean.cpu_bound = [&](int64_t c) { return mean_bound[c] + 1e-7; };
  saved_inv_std.cuda_bound = cuda_rel(saved_inv_std.want, 0);
  saved_inv_std.cpu_bound = [&](int64_t c) {
    return inv_bound[c] + kCudaRel * saved_inv_std.want[c];  // + a few ulps
  };
  running_mean.cuda_bound = cuda_rel(running_mean.want, 1e-7);
  running_mean.cpu_bound = [&](int64_t c) { return (1 - momentum) * mean_bound[c] + 1e-6; };
  running_var.cuda_bound = cuda_rel(running_var.want, 1e-7);
  running_var.cpu_bound = [&](int64_t c) {
    return (1 - momentum) * kCpuPerMagnitude * (st.var[c] + st.mean[c] * st.mean[c]) + 1e-6;
  };
  ExpectBothWithinBounds(R"(type: "SpatialBN" input: "X" input: "s" input: "b" input: "rm"
      input: "rv" output: "Y" output: "rm" output: "rv" output: "sm" output: "siv"
      arg { name: "momentum" f: 0.9 } arg { name: "epsilon" f: 1e-5 })",
                         in, {y, running_mean, running_var, saved_mean, saved_inv_std});
}

TEST(CudaChannelSums, SpatialBNGradientAtRealisticSize) {
  BRAID_REQUIRE_GPU();
  HostBlob xb = RandomFloats("X", Activation(kC), 95, -2.f, 3.f);
  const std::vector<double> x = AsDoubles(xb);
  const ChannelStats st = StatsOf(x);
  std::vector<float> sm(kC), siv(kC);  // the batch's statistics, as SpatialBN saves them
  for (int64_t c = 0; c < kC; ++c) {
    sm[c] = static_cast<float>(st.mean[c]);
    siv[c] = static_cast<float>(1 / std::sqrt(st.var[c] + 1e-5));
  }
  const std::vector<HostBlob> in{xb, RandomFloats("s", {kC}, 96, 0.5f, 1.5f),
                                 RandomFloats("dY", Activation(kC), 97), Floats("sm", {kC}, sm),
                                 Floats("siv", {kC}, siv)};
  const std::vector<double> scale = AsDoubles(in[1]), dy = AsDoubles(in[2]);
  OutputCheck dx, dscale, dbias;
  std::vector<double> dbias_mag(kC), dscale_mag(kC);
  dscale.want.assign(kC, 0);
  dbias.want.assign(kC, 0);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    const int64_t c = (i / kS) % kC;
    const double xhat = (x[i] - sm[c]) * siv[c];
    dbias.want[c] += dy[i];
    dscale.want[c] += dy[i] * xhat;
    dbias_mag[c] += std::abs(dy[i]);
    dscale_mag[c] += std::abs(dy[i] * xhat);
  }
  dx.want.resize(x.size());
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    const int64_t c = (i / kS) % kC;
    const double xhat = (x[i] - sm[c]) * siv[c];
    dx.want[i] = scale[c] * siv[c] * (dy[i] - dbias.want[c] / kM - xhat * dscale.want[c] / kM);
  }
  dbias.cuda_bound = [&](int64_t c) { return kCudaRel * std::abs(dbias.want[c]) + 1e-9 * kM; };
  dbias.cpu_bound = [&](int64_t c) { return kCpuPerMagnitude * dbias_mag[c]; };
  dscale.cuda_bound = [&](int64_t c) { return kCudaRel * std::abs(dscale.want[c]) + 1e-9 * kM; };
  dscale.cpu_bound = [&](int64_t c) { return kCpuPerMagnitude * dscale_mag[c]; };
  dx.cuda_bound = [&](int64_t i) { return kCudaRel * std::abs(dx.want[i]) + 1e-5; };
  dx.cpu_bound = [&](int64_t i) {  // a few ulps, plus what the sums' errors carry in
    const int64_t c = (i / kS) % kC;
    const double xhat = std::abs((x[i] - sm[c]) * siv[c]);
    return 1e-5 + scale[c] * siv[c] * kCpuPerMagnitude * (dbias_mag[c] + xhat * dscale_mag[c]) / kM;
  };
  ExpectBothWithinBounds(R"(type: "SpatialBNGradient" input: "X" input: "s" input: "dY"
      input: "sm" input: "siv" output: "dX" output: "ds" output: "db"
      arg { name: "epsilon" f: 1e-5 })",
                         in, {dx, dscale, dbias});
}

// ConvGradient of a 1x1 convolution [32, 4, 56, 56] -> [32, 64, 56, 56]: db sums dY over the
// 100352 positions of each output channel (braid's kernel), dW dots dY with X over them (cuDNN's).
TEST(CudaChannelSums, ConvBiasGradientAtRealisticSize) {
  BRAID_REQUIRE_GPU();
  constexpr int64_t kIn = 4;
  const std::vector<HostBlob> in{RandomFloats("X", Activation(kIn), 98),
                                 RandomFloats("W", {kC, kIn, 1, 1}, 99),
                                 RandomFloats("dY", Activation(kC), 100)};
  const std::vector<double> x = AsDoubles(in[0]), dy = AsDoubles(in[2]);
  OutputCheck dw, db;
  std::vector<double> dw_mag(kC * kIn, 0), db_mag(kC, 0);
  dw.want.assign(kC * kIn, 0);
  db.want.assign(kC, 0);
  for (int64_t n = 0; n < kN; ++n) {
    for (int64_t m = 0; m < kC; ++m) {
      for (int64_t p = 0; p < kS; ++p) {
        const double g = dy[Offset(n, m, p, kC)];
        db.want[m] += g;
        db_mag[m] += std::abs(g);
        for (int64_t c = 0; c < kIn; ++c) {
          const double t = g * x[Offset(n, c, p, kIn)];
          dw.want[m * kIn + c] += t;
          dw_mag[m * kIn + c] += std::abs(t);
        }
      }
    }
  }
  db.cuda_bound = [&](int64_t m) { return kCudaRel * std::abs(db.want[m]) + 1e-9 * kM; };
  db.cpu_bound = [&](int64_t m) { return kCpuPerMagnitude * db_mag[m]; };
  dw.cuda_bound = [&](int64_t i) { return kCpuPerMagnitude * dw_mag[i]; };  // cuDNN: float sums
  dw.cpu_bound = dw.cuda_bound;
  ExpectBothWithinBounds(R"(type: "ConvGradient" input: "X" input: "W" input: "dY"
      output: "dW" output: "db")",
                         in, {dw, db});
}

}  // namespace
}  // namespace braid::test
