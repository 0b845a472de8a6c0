#include "ops/nn/conv_algorithm.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ops/common/op_checks.h"
#include "ops/nn/dnnl_util.h"
#include "runtime/device/algorithm_registry.h"

namespace braid {
namespace {

using dnnl::convolution_backward_data;
using dnnl::convolution_backward_weights;
using dnnl::convolution_forward;
using ExecArgs = std::vector<std::pair<int, dnnl::memory::desc>>;

// oneDNN's name for the ISA its kernels use on this CPU, the part of the key that says which
// machine the timings hold for.
std::string CpuIsaName() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: {
      char hex[32];
      std::snprintf(hex, sizeof(hex), "0x%x", static_cast<unsigned>(dnnl::get_effective_cpu_isa()));
      return hex;
    }
  }
}

// Runs `pd`'s primitive on zeroed buffers of `args` (MappedBuffers: glibc would keep freed ones of
// this size resident beside the net's memory, raising the peak resident memory); one warm-up, then
// kSearchRuns timed; the median in ms.
// `given` maps an argument to memory it may use instead (pointer and bytes), where it fits;
// `before`, when set, runs before the primitive in every run and is timed with it.
template <typename Primitive>
double MedianMs(const typename Primitive::primitive_desc& pd, const ExecArgs& args,
                const std::unordered_map<int, std::pair<void*, size_t>>& given = {},
                const std::function<void()>& before = {}) {
  const Primitive primitive(pd);
  std::vector<std::unique_ptr<MappedBuffer>> buffers;
  std::unordered_map<int, dnnl::memory> memories;
  for (const auto& [arg, md] : args) {
    if (md.get_size() == 0) continue;
    auto it = given.find(arg);
    void* data = nullptr;
    if (it != given.end() && it->second.first != nullptr && md.get_size() <= it->second.second) {
      data = it->second.first;
    } else {
      buffers.push_back(std::make_unique<MappedBuffer>(md.get_size()));
      data = buffers.back()->data();
    }
    memories.emplace(arg, dnnl::memory(md, Engine(), data));
  }
  dnnl::stream& stream = ThreadStream();
  std::vector<double> ms;
  for (int run = 0; run <= kSearchRuns; ++run) {
    const auto start = std::chrono::steady_clock::now();
    if (before) before();
    primitive.execute(stream, memories);
    stream.wait();
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    if (run > 0) ms.push_back(elapsed.count());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

double TimeForward(const ConvShapes& s, dnnl::algorithm algorithm, const ConvSearchMemory& memory) {
  const convolution_forward::primitive_desc pd = MakeConvForwardDesc(s, algorithm);
  // The op reorders its filter into the candidate's weights layout on every run (Winograd's
  // transformed weights, or a plain filter into the blocked one): timed with the convolution.
  const dnnl::memory::desc filter_desc = s.FilterDesc();
  const size_t weights_bytes = pd.weights_desc().get_size();
  const bool reads_the_filter = filter_desc == pd.weights_desc() && memory.filter != nullptr &&
                                memory.filter_bytes >= weights_bytes;
  std::unique_ptr<MappedBuffer> weights, zero_filter;
  void* weights_data = const_cast<void*>(memory.filter);  // only read
  if (!reads_the_filter) {
    weights = std::make_unique<MappedBuffer>(weights_bytes);
    weights_data = weights->data();
  }
  std::function<void()> reorder_weights;
  if (filter_desc != pd.weights_desc()) {
    const void* filter = memory.filter;
    if (filter == nullptr || memory.filter_bytes < filter_desc.get_size()) {
      zero_filter = std::make_unique<MappedBuffer>(filter_desc.get_size());
      std::memset(zero_filter->data(), 0, filter_desc.get_size());  // resident, as a filter is
      filter = zero_filter->data();
    }
    const dnnl::memory from(filter_desc, Engine(), const_cast<void*>(filter));
    const dnnl::memory to(pd.weights_desc(), Engine(), weights_data);
    reorder_weights = [reorder = dnnl::reorder(from, to), from, to] {
      reorder.execute(ThreadStream(), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
    };
  }
  return MedianMs<convolution_forward>(
      pd,
      {{DNNL_ARG_SRC, pd.src_desc()},
       {DNNL_ARG_WEIGHTS, pd.weights_desc()},
       {DNNL_ARG_BIAS, s.has_bias ? pd.bias_desc() : dnnl::memory::desc()},
       {DNNL_ARG_DST, pd.dst_desc()},
       {kSummandArg, s.has_summand ? pd.dst_desc() : dnnl::memory::desc()},
       {DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc()}},
      {{DNNL_ARG_SRC, {const_cast<void*>(memory.src), memory.src_bytes}},  // only read
       {kSummandArg, {const_cast<void*>(memory.summand), memory.summand_bytes}},  // only read
       {DNNL_ARG_WEIGHTS, {weights_data, weights_bytes}},
       {DNNL_ARG_DST, {memory.dst, memory.dst_bytes}}},
      reorder_weights);
}

double TimeBackward(const ConvShapes& s, ConvDirection direction, dnnl::algorithm algorithm,
                    const convolution_forward::primitive_desc& hint) {
  if (direction == ConvDirection::kBackwardData) {
    const auto pd = MakeConvBackwardDataDesc(s, algorithm, hint);
    return MedianMs<convolution_backward_data>(pd, {{DNNL_ARG_DIFF_DST, pd.diff_dst_desc()},
                                                    {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                                                    {DNNL_ARG_DIFF_SRC, pd.diff_src_desc()},
                                                    {DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc()}});
  }
  const auto pd = MakeConvBackwardWeightsDesc(s, algorithm, hint);
  return MedianMs<convolution_backward_weights>(
      pd, {{DNNL_ARG_SRC, pd.src_desc()},
           {DNNL_ARG_DIFF_DST, pd.diff_dst_desc()},
           {DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc()},
           {DNNL_ARG_DIFF_BIAS, s.has_bias ? pd.diff_bias_desc() : dnnl::memory::desc()},
           {DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc()}});
}

// The scratchpad bytes of `algorithm` in `direction`; throws dnnl::error when it does not build.
int64_t ScratchpadBytes(const ConvShapes& s, ConvDirection direction, dnnl::algorithm algorithm,
                        dnnl::algorithm forward) {
  const convolution_forward::primitive_desc fwd = MakeConvForwardDesc(
      s, direction == ConvDirection::kForward ? algorithm : forward);
  switch (direction) {
    case ConvDirection::kForward:
      return static_cast<int64_t>(fwd.scratchpad_desc().get_size());
    case ConvDirection::kBackwardData:
      return MakeConvBackwardDataDesc(s, algorithm, fwd).scratchpad_desc().get_size();
    case ConvDirection::kBackwardWeights:
      return MakeConvBackwardWeightsDesc(s, algorithm, fwd).scratchpad_desc().get_size();
  }
  return 0;
}

// Winograd (where eligible and built) then direct, each timed on demand.
std::vector<AlgorithmCandidate> FindConvCandidates(const ConvShapes& s, ConvDirection direction,
                                                   dnnl::algorithm forward,
                                                   const ConvSearchMemory& memory) {
  std::vector<dnnl::algorithm> algorithms{dnnl::algorithm::convolution_direct};
  if (WinogradEligible(s)) algorithms.insert(algorithms.begin(), dnnl::algorithm::convolution_winograd);
  std::vector<AlgorithmCandidate> candidates;
  for (const dnnl::algorithm algorithm : algorithms) {
    int64_t bytes = 0;
    try {
      bytes = ScratchpadBytes(s, direction, algorithm, forward);
    } catch (const dnnl::error&) {  // no kernel for this ISA or shape
      if (algorithm == dnnl::algorithm::convolution_winograd) continue;
      throw;
    }
    candidates.push_back({ConvAlgorithmName(algorithm), bytes, [=, &s] {
                            if (direction == ConvDirection::kForward) {
                              return TimeForward(s, algorithm, memory);
                            }
                            return TimeBackward(s, direction, algorithm,
                                                MakeConvForwardDesc(s, forward));
                          }});
  }
  return candidates;
}

dnnl::algorithm AlgorithmNamed(const std::string& name, const std::string& key) {
  if (name == "winograd") return dnnl::algorithm::convolution_winograd;
  if (name == "direct") return dnnl::algorithm::convolution_direct;
  throw Error(Status::InvalidArgument("algorithm registry: key '" + key + "' has algorithm '" +
                                      name + "', which Conv does not know (direct, winograd)"));
}

std::string BaseKey(const ConvShapes& s, ConvDirection direction) {
  const ConvPoolWindow& w = s.window;
  std::ostringstream key;
  key << "Conv/" << ConvDirectionName(direction) << "|onednn-cpu|isa=" << CpuIsaName()
      << "|f32|x=" << JoinedInts(s.x_dims) << "|w=" << JoinedInts(s.filter_dims) << "|g=" << s.group
      << "|bias=" << s.has_bias << "|filter=" << LayoutName(s.w_layout)
      << "|stride=" << JoinedInts(w.Strides())
      << "|dilation=" << JoinedInts(w.DnnlDilation()) << "|pad=" << JoinedInts(w.PadBegin()) << ","
      << JoinedInts(w.PadEnd()) << "|layout=any";
  if (s.has_summand) key << "|sum";  // a binary post-op: some kernels (Winograd) take none
  return key.str();
}

}  // namespace

const char* ConvDirectionName(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::kForward: return "forward";
    case ConvDirection::kBackwardData: return "backward_data";
    case ConvDirection::kBackwardWeights: return "backward_weights";
  }
  return "?";
}

const char* ConvAlgorithmName(dnnl::algorithm algorithm) {
  return algorithm == dnnl::algorithm::convolution_winograd ? "winograd" : "direct";
}

std::string ConvAlgorithmKey(const ConvShapes& s, ConvDirection direction,
                             dnnl::algorithm forward) {
  if (direction == ConvDirection::kForward) return BaseKey(s, direction);
  return BaseKey(s, direction) + "|hint=" + ConvAlgorithmName(forward);
}

int64_t LargestForwardScratchpadBytes(const ConvShapes& s) {
  try {
    int64_t bytes = 0;
    for (const AlgorithmCandidate& candidate :
         FindConvCandidates(s, ConvDirection::kForward, dnnl::algorithm::convolution_direct, {})) {
      bytes = std::max(bytes, candidate.workspace_bytes);
    }
    return bytes;
  } catch (const dnnl::error& e) {
    ThrowDnnlError(e, "the forward convolution candidates for X " + DimsText(s.x_dims) +
                          " and filter " + DimsText(s.filter_dims));
  }
}

dnnl::algorithm ChooseConvAlgorithm(const ConvShapes& s, ConvDirection direction,
                                    const Device& device, const ConvSearchMemory& memory) {
  // The backward hint first, outside the backward search (the search guard is not re-entrant).
  const dnnl::algorithm forward =
      direction == ConvDirection::kForward
          ? dnnl::algorithm::convolution_direct
          : ChooseConvAlgorithm(s, ConvDirection::kForward, device);
  const AlgorithmRequest request{ConvAlgorithmKey(s, direction, forward), device,
                                 SearchWorkspaceLimit(device)};
  const AlgorithmChoice choice = AlgorithmRegistry::Global().Choose(request, [&]() -> std::vector<AlgorithmCandidate> {
    try {
      return FindConvCandidates(s, direction, forward, memory);
    } catch (const dnnl::error& e) {
      ThrowDnnlError(e, std::string("the ") + ConvDirectionName(direction) +
                            " convolution candidates for X " + DimsText(s.x_dims) +
                            " and filter " + DimsText(s.filter_dims));
    }
  });
  return AlgorithmNamed(choice.algorithm, request.key);
}

convolution_forward::primitive_desc MakeConvForwardDesc(const ConvShapes& s,
                                                        dnnl::algorithm algorithm) {
  const ConvPoolWindow& w = s.window;
  const dnnl::memory::desc bias = s.has_bias ? PlainDesc({s.out_channels()}) : dnnl::memory::desc();
  const auto desc = [&](const dnnl::memory::desc& y) {
    return convolution_forward::desc(dnnl::prop_kind::forward_training, algorithm,
                                     AnyDesc(ToDnnlDims(s.x_dims)), AnyDesc(s.DnnlWeightDims()),
                                     bias, y, w.Strides(), w.DnnlDilation(), w.PadBegin(),
                                     w.PadEnd());
  };
  dnnl::memory::desc y = AnyDesc(ToDnnlDims(s.y_dims));
  dnnl::primitive_attr attr = UserScratchpadAttr();
  dnnl::post_ops post;
  if (s.has_summand) {  // post-op 0 (kSummandArg), in Y's layout, fixed for it
    y = convolution_forward::primitive_desc(desc(y), attr, Engine()).dst_desc();
    post.append_binary(dnnl::algorithm::binary_add, y);
  }
  if (s.activation.kind != FusedActivation::Kind::kNone) {
    const bool relu = s.activation.kind == FusedActivation::Kind::kRelu;
    post.append_eltwise(1.f, relu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_clip,
                        relu ? 0.f : s.activation.min, relu ? 0.f : s.activation.max);
  }
  attr.set_post_ops(post);
  return convolution_forward::primitive_desc(desc(y), attr, Engine());
}

convolution_backward_weights::primitive_desc MakeConvBackwardWeightsDesc(
    const ConvShapes& s, dnnl::algorithm algorithm,
    const convolution_forward::primitive_desc& hint) {
  const ConvPoolWindow& w = s.window;
  const dnnl::memory::desc bias = s.has_bias ? PlainDesc({s.out_channels()}) : dnnl::memory::desc();
  return convolution_backward_weights::primitive_desc(
      convolution_backward_weights::desc(algorithm, AnyDesc(ToDnnlDims(s.x_dims)),
                                         AnyDesc(s.DnnlWeightDims()), bias,
                                         AnyDesc(ToDnnlDims(s.y_dims)), w.Strides(),
                                         w.DnnlDilation(), w.PadBegin(), w.PadEnd()),
      UserScratchpadAttr(), Engine(), hint);
}

convolution_backward_data::primitive_desc MakeConvBackwardDataDesc(
    const ConvShapes& s, dnnl::algorithm algorithm,
    const convolution_forward::primitive_desc& hint) {
  const ConvPoolWindow& w = s.window;
  return convolution_backward_data::primitive_desc(
      convolution_backward_data::desc(algorithm, AnyDesc(ToDnnlDims(s.x_dims)),
                                      AnyDesc(s.DnnlWeightDims()), AnyDesc(ToDnnlDims(s.y_dims)),
                                      w.Strides(), w.DnnlDilation(), w.PadBegin(), w.PadEnd()),
      UserScratchpadAttr(), Engine(), hint);
}

}  // namespace braid
