#include "tools/bench/planner_rows.h"

#include "runtime/models/model_builder.h"
#include "runtime/models/resnet.h"
#include "runtime/models/training_nets.h"

namespace braid::bench {
namespace {

OperatorDef SyntheticReader(const PlannerModel& model, const std::string& name) {
  return SyntheticImageReader({model.batch, model.channels, model.image_size, model.classes}, name);
}

std::string AddWideBranches(ModelBuilder* b, const PlannerModel& model, const std::string& data) {
  std::vector<std::string> ends;
  for (int branch = 0; branch < model.branches; ++branch) {
    std::string x = data;
    int64_t dim_in = model.channels;
    for (int layer = 0; layer < model.depth; ++layer) {
      const std::string name = "b" + std::to_string(branch) + "_" + std::to_string(layer);
      x = b->Relu(b->Conv(x, name + "_conv", dim_in, model.width, 3, 1, 1), name + "_relu");
      dim_in = model.width;
    }
    ends.push_back(x);
  }
  const std::string joined = b->Sum(ends, "join");
  return b->FC(b->GlobalAveragePool(joined, "pool"), "fc", model.width, model.classes);
}

}  // namespace

std::string PlannerModel::name() const {
  const std::string base =
      model == "wide" ? "wide" + std::to_string(branches) + "x" + std::to_string(depth) : model;
  return base + "-b" + std::to_string(batch);
}

const std::vector<PlannerModel>& PlannerModels() {
  static const auto* models = new std::vector<PlannerModel>{
      {.model = "resnet20", .batch = 64, .channels = 1, .image_size = 28, .classes = 10},
      {.model = "resnet50", .batch = 32, .channels = 3, .image_size = 224, .classes = 1000},
      {.model = "wide",
       .batch = 32,
       .channels = 3,
       .image_size = 32,
       .classes = 10,
       .branches = 32,
       .depth = 3,
       .width = 16},
  };
  return *models;
}

TrainingNets BuildPlannerNets(const PlannerModel& model) {
  TrainingNetsSpec spec;
  spec.name = model.name();
  if (model.model == "wide") {
    spec.forward = [model](ModelBuilder* b, const std::string& data) {
      return AddWideBranches(b, model, data);
    };
  } else {
    const ResNetSpec resnet = ResNetSpecFromName(model.model, model.channels, model.classes);
    spec.forward = [resnet](ModelBuilder* b, const std::string& data) {
      return AddResNet(b, resnet, data);
    };
  }
  spec.train_input = SyntheticReader(model, "train_reader");
  spec.test_input = SyntheticReader(model, "test_reader");
  spec.optimizer.lr.policy = "fixed";
  return BuildTrainingNets(spec);
}

}  // namespace braid::bench
