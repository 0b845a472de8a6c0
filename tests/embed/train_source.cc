// Trains on data the application makes itself: a braid::DataSource serves examples by index (an
// 8x8 image with a bright stripe on the row its label names, over noise) and braid batches them,
// reshuffles each epoch, reads ahead on a background thread and splits each batch over two
// devices. Checks that a ResNet-20 learns the stripes. Usage: train_source
#include <braid/data_source.h>
#include <braid/trainer.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <random>
#include <vector>

namespace {

class Stripes final : public braid::DataSource {
 public:
  Stripes(int64_t size, uint32_t seed) : size_(size), seed_(seed) {}

  int64_t size() const override { return size_; }
  std::vector<braid::DataField> fields() const override {
    return {{"image", braid::DType::kFloat32, {1, kSide, kSide}},
            {"label", braid::DType::kInt32, {}}};
  }
  // Called on braid's reader thread, one call at a time; example `index` is the same every
  // time it is read.
  braid::Status Read(int64_t index, const std::vector<void*>& slots) override {
    const int32_t label = static_cast<int32_t>(index % kSide);
    std::mt19937 random(seed_ * 1000003u + static_cast<uint32_t>(index));
    std::normal_distribution<float> noise(0.f, 0.5f);
    float* image = static_cast<float*>(slots[0]);
    for (int row = 0; row < kSide; ++row) {
      for (int column = 0; column < kSide; ++column) {
        image[row * kSide + column] = (row == label ? 1.f : 0.f) + noise(random);
      }
    }
    *static_cast<int32_t*>(slots[1]) = label;
    return braid::Status::OK();
  }

 private:
  static constexpr int kSide = 8;
  int64_t size_;
  uint32_t seed_;
};

}  // namespace

int main() {
  braid::TrainerOptions options;
  options.model = "resnet20";
  options.data = "source";
  options.source.train = std::make_shared<Stripes>(2048, 1);
  options.source.test = std::make_shared<Stripes>(400, 2);
  options.source.classes = 8;
  options.devices = {"cpu:0", "cpu:1"};
  options.batch_size = 32;
  options.iterations = 80;
  std::unique_ptr<braid::Trainer> trainer;
  braid::Status status = braid::Trainer::Create(options, &trainer);
  braid::TrainingProgress last;
  if (status.ok()) status = trainer->Run(&last);
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  std::cout << "test accuracy " << last.test_accuracy << " after " << trainer->iteration()
            << " iterations\n";
  return last.test_accuracy > 0.9 ? 0 : 1;  // eight classes: chance is 0.125
}
