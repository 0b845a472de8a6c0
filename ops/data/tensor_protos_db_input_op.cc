#include "ops/data/tensor_protos_db_input_op.h"

#include <optional>
#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "ops/data/db_example_source.h"
#include "ops/data/db_reader_blob.h"
#include "ops/data/reader_args.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/io/tensor_protos_record.h"

namespace braid {
namespace {

std::string DbPath(const OperatorDef& def) {
  const std::string db = ArgumentReader(def.arg()).Get<std::string>("db", "");
  if (db.empty()) {
    ThrowInvalidArgument("argument 'db' (the DB's path) is required without a DB reader input "
                         "(CreateDB's output)");
  }
  return db;
}

std::optional<PixelNormalisation> Normalisation(const OperatorDef& def) {
  const ArgumentReader args(def.arg());
  if (!args.Has("mean") && !args.Has("std")) return std::nullopt;
  return PixelNormalisation(args.Get<float>("mean", 0.f), args.Get<float>("std", 1.f));
}

void CheckOutputCount(const OperatorDef& def, size_t tensors, const std::string& db) {
  if (static_cast<size_t>(def.output_size()) != tensors) {
    ThrowInvalidArgument("the records of DB '" + db + "' hold " + std::to_string(tensors) +
                         " tensors but the op has " + std::to_string(def.output_size()) +
                         " outputs (one per tensor)");
  }
}

}  // namespace

TensorProtosDbInputOp::TensorProtosDbInputOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), batch_size_(ReaderBatchSize(def)) {
  if (InputSize() == 0) {
    Start(def);
  } else if (Input(0).has_storage()) {
    Start(WithDbReaderArgs(def, ReadDbReaderBlob(Input(0), def.input(0))));
  }
}

void TensorProtosDbInputOp::Start(const OperatorDef& def) {
  const std::string db = DbPath(def);
  auto source = std::make_unique<DbExampleSource>(
      ArgumentReader(def.arg()).Get<std::string>("db_type", "lmdb"), db, Normalisation(def));
  CheckOutputCount(def, source->outputs().size(), db);
  prefetcher_ = std::make_unique<BatchPrefetcher>(std::move(source),
                                                  ReaderPrefetchOptions(def, batch_size_,
                                                                        /*shuffle_default=*/false));
}

void TensorProtosDbInputOp::Run() {
  if (prefetcher_ == nullptr) {
    Start(WithDbReaderArgs(def(), ReadDbReaderBlob(Input(0), def().input(0))));
  }
  ServeNextBatch(prefetcher_.get(), batch_size_, this);
}

BRAID_OPERATOR_SCHEMA(TensorProtosDBInput)
    .Args(ReaderArgSpecs())
    .Arg("db_type", ArgKind::kString)
    .Arg("db", ArgKind::kString)
    .Arg("mean", ArgKind::kFloat)
    .Arg("std", ArgKind::kFloat)
    .NumInputs(0, 1)
    .NumOutputs(1, 64)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>&) {
      const int64_t batch_size = ReaderBatchSize(def);
      std::vector<ShapeInfo> out(static_cast<size_t>(def.output_size()));
      if (def.input_size() > 0) return out;  // the DB is known once CreateDB has run: unknown
      const std::string db = DbPath(def);
      const std::string type = ArgumentReader(def.arg()).Get<std::string>("db_type", "lmdb");
      const TensorProtosDbLayout layout = DescribeTensorProtosDb(type, db);
      CheckOutputCount(def, layout.tensors.size(), db);
      for (size_t i = 0; i < out.size(); ++i) {
        out[i].dtype = layout.tensors[i].dtype;
        out[i].dims = {batch_size};
        out[i].dims.insert(out[i].dims.end(), layout.tensors[i].dims.begin(),
                           layout.tensors[i].dims.end());
        out[i].known = true;
      }
      if (Normalisation(def)) out[0].dtype = DType::kFloat32;  // DbExampleSource checks uint8
      return out;
    })
    .HostOnly()
    .SetDoc(
        "Batches of a DB of TensorProtos records (Caffe2's), one output per tensor, decoded on a "
        "background thread; the DB from the input (CreateDB's) or the db/db_type arguments.");

BRAID_REGISTER_CPU_OPERATOR(TensorProtosDBInput, TensorProtosDbInputOp);

}  // namespace braid
