// An application's own op, trained and served: a softsign activation y = x / (1 + |x|) written
// here as a braid custom op with its gradient op, used in a perceptron trained with Adam on
// Fashion-MNIST through braid::Trainer, exported as a model folder and served by braid::Predictor
// (tools.TrainerExportTest proves an export answers as the trainer's test net; here the served
// model must give probabilities). Usage: custom_op EXPORT_DIR
#include <braid/braid.pb.h>
#include <braid/custom_op.h>
#include <braid/predictor.h>
#include <braid/trainer.h>

#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

// y = x / (1 + |x|), and its gradient dx = dy / (1 + |x|)^2, for float32 tensors on the host.
braid::Status Softsign(braid::OpContext& ctx) {
  const braid::ConstTensorRef x = ctx.input(0);
  if (x.dtype() != braid::DType::kFloat32) return ctx.Invalid("AppSoftsign takes float32");
  const float* in = x.data<float>();
  float* y = ctx.output(0, braid::DType::kFloat32, x.shape()).data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = in[i] / (1 + std::fabs(in[i]));
  return braid::Status::OK();
}

braid::Status SoftsignGradient(braid::OpContext& ctx) {
  const braid::ConstTensorRef x = ctx.input(0), dy = ctx.input(1);
  const float* in = x.data<float>();
  const float* grad = dy.data<float>();
  float* dx = ctx.output(0, braid::DType::kFloat32, x.shape()).data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float d = 1 + std::fabs(in[i]);
    dx[i] = grad[i] / (d * d);
  }
  return braid::Status::OK();
}

braid::Status SameTypeAndShape(const braid::OperatorDef&, const std::vector<braid::TensorType>& in,
                               std::vector<braid::TensorType>* out) {
  *out = {in[0]};
  return braid::Status::OK();
}

braid::Status RegisterSoftsign() {
  braid::CustomOp forward;
  forward.type = "AppSoftsign";
  forward.infer = SameTypeAndShape;
  forward.run_cpu = Softsign;
  forward.gradient = [](const braid::GradientOpsRequest& r, braid::GradientOpsReply* reply) {
    reply->ops = {braid::GradientOp(r.op, "AppSoftsignGradient", {r.op.input(0), r.output_grads[0]},
                                    {r.input_grads[0]})};
    reply->has_input_grad = {true};
    return braid::Status::OK();
  };
  braid::CustomOp backward;
  backward.type = "AppSoftsignGradient";
  backward.min_inputs = backward.max_inputs = 2;
  backward.infer = SameTypeAndShape;
  backward.run_cpu = SoftsignGradient;
  backward.no_gradient = true;
  braid::Status status = braid::RegisterCustomOp(forward);
  return status.ok() ? braid::RegisterCustomOp(backward) : status;
}

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
  if (argc != 2) {
    std::cerr << "usage: custom_op EXPORT_DIR\n";
    return 2;
  }
  braid::Status status = RegisterSoftsign();
  // 28x28 images -> 128 softsign units -> 10 classes.
  braid::NetDef init, forward;
  init.set_name("softsign_mlp_init");
  AddFill(&init, "XavierFill", "fc1_w", {128, 784});
  AddFill(&init, "ConstantFill", "fc1_b", {128});
  AddFill(&init, "XavierFill", "fc2_w", {10, 128});
  AddFill(&init, "ConstantFill", "fc2_b", {10});
  forward.set_name("softsign_mlp");
  AddOp(&forward, "FC", {"data", "fc1_w", "fc1_b"}, {"hidden"});
  AddOp(&forward, "AppSoftsign", {"hidden"}, {"hidden_act"});
  AddOp(&forward, "FC", {"hidden_act", "fc2_w", "fc2_b"}, {"logits"});
  forward.add_external_output("logits");

  braid::TrainerOptions options;
  options.net = {&init, &forward};
  options.data = "fashion-mnist";
  options.batch_size = 64;
  options.iterations = 150;
  options.optimizer.type = "adam";
  options.learning_rate = 0.002;
  std::unique_ptr<braid::Trainer> trainer;
  if (status.ok()) status = braid::Trainer::Create(options, &trainer);
  braid::TrainingProgress last;
  if (status.ok()) status = trainer->Run(&last);
  if (status.ok())
    status = trainer->Export(argv[1]);  // init_net.pb, predict_net.pb, value_info.json

  // The exported model, served: its predict net runs AppSoftsign too.
  std::unique_ptr<braid::Predictor> predictor;
  if (status.ok()) status = braid::Predictor::FromModelFolder(argv[1], {}, &predictor);
  std::vector<float> image(28 * 28, 0.5f);
  std::map<std::string, braid::OutputTensor> outputs;
  if (status.ok()) {
    status =
        predictor->Run({{"data", braid::InputView::Of(image.data(), {1, 1, 28, 28})}}, &outputs);
  }
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  const float* probabilities = outputs["softmax"].data<float>();
  float sum = 0;
  for (int c = 0; c < 10; ++c) sum += probabilities[c];
  std::cout << "test accuracy " << last.test_accuracy << " after " << trainer->iteration()
            << " Adam iterations through AppSoftsign; the served model's probabilities sum to "
            << sum << "\n";
  return last.test_accuracy > 0.65 && std::fabs(sum - 1) < 1e-4 ? 0 : 1;  // chance: 0.1
}
