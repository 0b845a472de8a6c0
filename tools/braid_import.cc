// braid_import: turns an ONNX model into a model folder in the layout of Caffe2's model zoo.
//
//   braid_import MODEL.onnx --out DIR [--input-shape 1,3,224,224]
//
// Imports MODEL.onnx (runtime/io/onnx/onnx_import.h) and writes DIR/init_net.pb, DIR/predict_net.pb
// and DIR/value_info.json (runtime/io/model_folder.h), then one summary line:
//
//   resnet18.onnx -> resnet18/: 49 ops, 102 weights (11689512 values), input 'input' [1,3,224,224]
//
// --input-shape replaces the model's input shape (symbolic dims otherwise become 1). Exit codes: 0
// success, 1 the import failed (its Status on one stderr line: the file, the node, what is not
// supported), 2 bad flags.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/core/dims_text.h"
#include "runtime/io/model_folder.h"
#include "runtime/io/onnx/onnx_import.h"
#include "tools/command_line.h"

DEFINE_string(out, "", "the model folder to write (created when missing)");
DEFINE_string(input_shape, "", "the input's shape, e.g. 1,3,224,224 (default: the model's)");

namespace braid {
namespace {

[[noreturn]] void ExitBadFlags(const std::string& message) {
  std::cerr << "braid_import: " << message << "\n" << gflags::ProgramUsage() << "\n";
  std::exit(kExitBadFlags);
}

std::vector<int64_t> ParseShape(const std::string& text) {
  std::vector<int64_t> dims;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    char* end = nullptr;
    const long long dim = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || dim < 1) {
      ExitBadFlags("--input-shape '" + text + "': expected positive dims separated by commas");
    }
    dims.push_back(dim);
  }
  return dims;
}

void Import(const std::string& model_path, const OnnxImportOptions& options) {
  ModelFolder model;
  const Status status = ImportOnnxFile(model_path, options, &model);
  if (!status.ok()) throw Error(status);
  const Status written = WriteModelFolder(FLAGS_out, model);
  if (!written.ok()) throw Error(written);
  int64_t values = 0;
  for (const OperatorDef& fill : model.init_net.op()) {
    for (const Argument& arg : fill.arg()) {
      if (arg.name() == "values") values += arg.floats_size() + arg.ints_size();
    }
  }
  std::cout << model_path << " -> " << FLAGS_out << "/: " << model.predict_net.op_size()
            << " ops, " << model.init_net.op_size() << " weights (" << values
            << " values), input '" << model.inputs[0].name << "' "
            << DimsText(model.inputs[0].shape) << "\n";
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const std::vector<std::string> models = braid::ParseCommandLine(
      argc, argv, "braid_import MODEL.onnx --out DIR [--input-shape 1,3,224,224]");
  if (models.size() != 1) {
    braid::ExitBadFlags("expected exactly one MODEL.onnx, got " + std::to_string(models.size()));
  }
  if (FLAGS_out.empty()) braid::ExitBadFlags("--out DIR is required");
  braid::OnnxImportOptions options;
  if (!FLAGS_input_shape.empty()) options.input_shape = braid::ParseShape(FLAGS_input_shape);
  return braid::RunTool("braid_import", [&] { braid::Import(models[0], options); });
}
