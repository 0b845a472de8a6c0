#include "ops/data/data_source_input_op.h"

#include <string>
#include <utility>
#include <vector>

#include "ops/common/op_checks.h"
#include "ops/data/reader_args.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/io/data_source_registry.h"

namespace braid {
namespace {

// The registered source the op names, checked against its outputs.
std::shared_ptr<const RegisteredDataSource> NamedSource(const OperatorDef& def) {
  const std::string name = ArgumentReader(def.arg()).Get<std::string>("source", "");
  if (name.empty()) {
    ThrowInvalidArgument("argument 'source' (a name given to RegisterDataSource) is required");
  }
  std::shared_ptr<const RegisteredDataSource> source = FindDataSource(name);
  if (source == nullptr) {
    throw Error(Status::NotFound("data source '" + name + "' is not registered " +
                                 "(RegisterDataSource, <braid/data_source.h>)"));
  }
  if (static_cast<size_t>(def.output_size()) != source->fields.size()) {
    ThrowInvalidArgument(source->Describe() + " has " + std::to_string(source->fields.size()) +
                         " fields but the op has " + std::to_string(def.output_size()) +
                         " outputs (one per field)");
  }
  return source;
}

// The registered source as the prefetcher's ExampleSource; Decode is called by the prefetcher's
// producer thread alone.
class RegisteredExampleSource final : public ExampleSource {
 public:
  explicit RegisteredExampleSource(std::shared_ptr<const RegisteredDataSource> source)
      : source_(std::move(source)) {
    for (const DataField& f : source_->fields) outputs_.push_back({f.dtype, f.dims});
  }

  int64_t count() const override { return source_->size; }
  const std::vector<ExampleOutput>& outputs() const override { return outputs_; }

  void Decode(int64_t example, const std::vector<uint8_t*>& slots) override {
    slots_.assign(slots.begin(), slots.end());
    const Status read = source_->Read(example, slots_);
    if (!read.ok()) {
      throw Error(Status(read.code(), source_->Describe() + " example " + std::to_string(example) +
                                          ": " + read.message()));
    }
  }

 private:
  const std::shared_ptr<const RegisteredDataSource> source_;
  std::vector<ExampleOutput> outputs_;
  std::vector<void*> slots_;  // Decode's, reused
};

}  // namespace

DataSourceInputOp::DataSourceInputOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), batch_size_(ReaderBatchSize(def)) {
  prefetcher_ = std::make_unique<BatchPrefetcher>(
      std::make_unique<RegisteredExampleSource>(NamedSource(def)),
      ReaderPrefetchOptions(def, batch_size_, /*shuffle_default=*/false));
}

void DataSourceInputOp::Run() { ServeNextBatch(prefetcher_.get(), batch_size_, this); }

BRAID_OPERATOR_SCHEMA(DataSourceInput)
    .Args(ReaderArgSpecs())
    .Arg("source", ArgKind::kString)
    .NumInputs(0)
    .NumOutputs(1, kMaxDataFields)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>&) {
      const int64_t batch_size = ReaderBatchSize(def);
      const std::shared_ptr<const RegisteredDataSource> source = NamedSource(def);
      std::vector<ShapeInfo> out;
      for (const DataField& f : source->fields) {
        std::vector<int64_t> dims = {batch_size};
        dims.insert(dims.end(), f.dims.begin(), f.dims.end());
        out.push_back({f.dtype, std::move(dims), true});
      }
      return out;
    })
    .HostOnly()
    .SetDoc(
        "Batches of a data source the application registered (RegisterDataSource), one output "
        "per field, read on a background thread.");

BRAID_REGISTER_CPU_OPERATOR(DataSourceInput, DataSourceInputOp);

}  // namespace braid
