// The nets braid_bench_planner plans: ResNets and a wide branchy net, in training and inference.
//
// Every model is BuildTrainingNets' (runtime/models/training_nets.h) around a forward pass, reading
// synthetic batches (IdxImageInput synthetic=1), so shape inference sizes every blob from the init
// net's parameters and the reader's arguments. A training row plans the train net (forward, loss,
// gradients, SGD updates) with gradients and activations shared; an inference row plans the test
// net. The wide net is `branches` parallel chains of `depth` Conv+Relu from the input, joined by
// one Sum, then global average pooling and an FC layer: under the dag executor every branch may run
// at once, so little can share (the lower bound says how little).
//
//   for (const PlannerModel& model : PlannerModels()) {
//     TrainingNets nets = BuildPlannerNets(model);   // nets.params.init_net, nets.train, nets.test
//   }
//
// Pure functions; thread-safe. BuildPlannerNets throws braid::Error for an unknown model.
#ifndef BRAID_TOOLS_BENCH_PLANNER_ROWS_H_
#define BRAID_TOOLS_BENCH_PLANNER_ROWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/models/training_nets.h"

namespace braid::bench {

struct PlannerModel {
  std::string model;  // a ResNetSpecFromName name, or "wide" for the branchy net
  int64_t batch = 32;
  int64_t channels = 3;
  int64_t image_size = 224;
  int64_t classes = 1000;
  int branches = 0;   // wide: parallel chains
  int depth = 0;      // wide: Conv+Relu pairs per chain
  int64_t width = 0;  // wide: channels of every chain

  // "resnet50-b32", "wide32x3-b32"
  std::string name() const;
};

// resnet20 b64 (1x28x28), resnet50 b32 (3x224x224), wide 32 branches x 3 convs b32 (3x32x32).
const std::vector<PlannerModel>& PlannerModels();

TrainingNets BuildPlannerNets(const PlannerModel& model);

}  // namespace braid::bench

#endif  // BRAID_TOOLS_BENCH_PLANNER_ROWS_H_
