// One rank of a data-parallel job of several processes (on one host here; on several, give each
// its host's address in options.hostname and a rendezvous every host reaches, "redis://HOST:PORT").
// Each rank connects to the job, trains its shard of every batch through braid::Trainer
// (gradients averaged over the ranks), and averages its last training loss over the ranks with a
// collective of its own. Usage: train_processes RANK WORLD_SIZE RENDEZVOUS
//   train_processes 0 2 file:///tmp/job1 & train_processes 1 2 file:///tmp/job1
#include <braid/process_group.h>
#include <braid/trainer.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: train_processes RANK WORLD_SIZE RENDEZVOUS\n";
    return 2;
  }
  braid::ProcessGroupOptions group;
  group.rank = std::stoi(argv[1]);
  group.world_size = std::stoi(argv[2]);
  group.rendezvous = argv[3];
  braid::Status status = braid::ConnectProcessGroup(group);

  braid::TrainerOptions options;
  options.model = "resnet20";
  options.data = "synthetic";
  options.synthetic.image_size = 12;
  options.synthetic.examples = 512;
  options.synthetic.test_examples = 128;
  options.batch_size = 32;  // the job's batch: 16 images on each of two ranks
  options.iterations = 32;
  options.processes.rank = group.rank;
  options.processes.world_size = group.world_size;
  options.progress_every = 8;
  float loss = 0;  // this rank's mean training loss over the last 8 iterations, on its shard
  options.on_progress = [&loss](const braid::TrainingProgress& p) {
    if (!p.evaluated) loss = static_cast<float>(p.loss);
  };
  std::unique_ptr<braid::Trainer> trainer;
  braid::TrainingProgress last;
  if (status.ok()) status = braid::Trainer::Create(options, &trainer);
  if (status.ok()) status = trainer->Run(&last);
  // The evaluation is already the job's; the training loss is each rank's own.
  float job_loss = loss;
  if (status.ok()) status = braid::ProcessAllreduceSum(&job_loss, 1, /*tag=*/1);
  job_loss /= static_cast<float>(group.world_size);
  if (status.ok()) status = braid::DisconnectProcessGroup();
  if (!status.ok()) {
    std::cerr << "rank " << group.rank << ": " << status.ToString() << "\n";
    return 1;
  }
  std::cout << "rank " << group.rank << ": loss " << loss << ", the job's " << job_loss
            << ", test accuracy " << last.test_accuracy << "\n";
  // Ten classes: chance is an accuracy of 0.1 and a loss of ln(10) = 2.3.
  return last.test_accuracy > 0.5 && job_loss < 1.5f ? 0 : 1;
}
