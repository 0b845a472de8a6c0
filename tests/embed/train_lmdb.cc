// Trains a classifier the application defines itself on Caffe2 LMDBs of TensorProtos records (as
// braid_make_db writes them from Fashion-MNIST's IDX files), through braid::Trainer, and checks
// that it learns. Usage: train_lmdb TRAIN_DB TEST_DB
//   braid_make_db --images train-images-idx3-ubyte.gz --labels train-labels-idx1-ubyte.gz --out
//   TRAIN_DB
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

void AddFill(braid::NetDef* init, const std::string& fill, const std::string& blob,
             const std::vector<int64_t>& shape) {
  braid::Argument* arg = AddOp(init, fill, {}, {blob})->add_arg();
  arg->set_name("shape");
  for (int64_t dim : shape) arg->add_ints(dim);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: train_lmdb TRAIN_DB TEST_DB\n";
    return 2;
  }
  // 28x28 images -> 64 hidden units -> 10 classes.
  braid::NetDef init, forward;
  init.set_name("lmdb_mlp_init");
  AddFill(&init, "XavierFill", "fc1_w", {64, 784});
  AddFill(&init, "ConstantFill", "fc1_b", {64});
  AddFill(&init, "XavierFill", "fc2_w", {10, 64});
  AddFill(&init, "ConstantFill", "fc2_b", {10});
  forward.set_name("lmdb_mlp");
  AddOp(&forward, "FC", {"data", "fc1_w", "fc1_b"}, {"hidden"});
  AddOp(&forward, "Relu", {"hidden"}, {"hidden"});
  AddOp(&forward, "FC", {"hidden", "fc2_w", "fc2_b"}, {"logits"});
  forward.add_external_output("logits");

  // The records' uint8 images are normalised as the Fashion-MNIST path normalises them; each
  // epoch reads the DB in a new order from the seed, prefetched on a background thread.
  braid::TrainerOptions options;
  options.net = {&init, &forward};
  options.data = "lmdb";
  options.db.train = argv[1];
  options.db.test = argv[2];
  options.batch_size = 50;
  options.test_batch_size = 100;
  options.iterations = 100;
  options.learning_rate = 0.05;
  std::unique_ptr<braid::Trainer> trainer;
  braid::Status status = braid::Trainer::Create(options, &trainer);
  braid::TrainingProgress last;
  if (status.ok()) status = trainer->Run(&last);
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  std::cout << "test accuracy " << last.test_accuracy << " after " << trainer->iteration()
            << " iterations on " << argv[1] << "\n";
  return last.test_accuracy > 0.6 ? 0 : 1;  // ten classes: chance is 0.1
}
