// Trains a classifier the application defines itself, a two-layer perceptron written as NetDefs,
// on Fashion-MNIST (Debian's dataset-fashion-mnist) through braid::Trainer, and checks that the
// training loss falls and the test accuracy rises well above chance. Usage: train_model
#include <braid/braid.pb.h>
#include <braid/trainer.h>

#include <iostream>
#include <string>
#include <vector>

namespace {

braid::OperatorDef* AddOp(braid::NetDef* net, const std::string& type,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  braid::OperatorDef* op = net->add_op();
  op->set_type(type);
  for (const std::string& input : inputs) op->add_input(input);
  for (const std::string& output : outputs) op->add_output(output);
  return op;
}

// A fill op writing the parameter `blob` of `shape` (ConstantFill: zeros).
void AddFill(braid::NetDef* init, const std::string& fill, const std::string& blob,
             const std::vector<int64_t>& shape) {
  braid::Argument* arg = AddOp(init, fill, {}, {blob})->add_arg();
  arg->set_name("shape");
  for (int64_t dim : shape) arg->add_ints(dim);
}

}  // namespace

int main() {
  // 28x28 images -> 128 hidden units -> 10 classes. The init net fills the parameters; the
  // forward net reads the images ("data", [N, 1, 28, 28]) and writes the logits.
  braid::NetDef init, forward;
  init.set_name("mlp_init");
  AddFill(&init, "XavierFill", "fc1_w", {128, 784});
  AddFill(&init, "ConstantFill", "fc1_b", {128});
  AddFill(&init, "XavierFill", "fc2_w", {10, 128});
  AddFill(&init, "ConstantFill", "fc2_b", {10});
  forward.set_name("mlp");
  AddOp(&forward, "FC", {"data", "fc1_w", "fc1_b"}, {"hidden"});  // flattens each image
  AddOp(&forward, "Relu", {"hidden"}, {"hidden"});
  AddOp(&forward, "FC", {"hidden", "fc2_w", "fc2_b"}, {"logits"});
  forward.add_external_output("logits");

  // The Trainer adds the loss, the gradients and momentum SGD, and reads the data.
  braid::TrainerOptions options;
  options.net = {&init, &forward};
  options.data = "fashion-mnist";
  options.batch_size = 64;
  options.iterations = 300;
  options.learning_rate = 0.05;
  options.progress_every = 50;
  std::vector<double> losses;
  options.on_progress = [&losses](const braid::TrainingProgress& p) {
    if (p.evaluated) return;
    losses.push_back(p.loss);
    std::cout << "iteration " << p.iteration << "/" << p.total_iterations << ": loss " << p.loss
              << ", " << p.images_per_second << " images/s\n";
  };
  std::unique_ptr<braid::Trainer> trainer;
  braid::Status status = braid::Trainer::Create(options, &trainer);
  double untrained_accuracy = 0, untrained_loss = 0;
  if (status.ok()) status = trainer->Evaluate(&untrained_accuracy, &untrained_loss);
  braid::TrainingProgress last;
  if (status.ok()) status = trainer->Run(&last);
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  std::cout << "test accuracy " << untrained_accuracy << " untrained, " << last.test_accuracy
            << " after " << trainer->iteration() << " iterations\n";
  const bool learned = losses.back() < 0.6 * losses.front() && last.test_accuracy > 0.7 &&
                       last.test_accuracy > untrained_accuracy + 0.3;
  return learned ? 0 : 1;  // ten classes: chance is 0.1
}
