#include "ops/op_test_util.h"

#include <random>

#include "braid/status.h"
#include "runtime/io/proto_io.h"

namespace braid::test {

std::vector<float> UniformFloats(int64_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::vector<std::string> OpTypes(const NetDef& net) {
  std::vector<std::string> types;
  for (const OperatorDef& op : net.op()) types.push_back(op.type());
  return types;
}

void ExpectCloseToScale(const std::vector<float>& got, const std::vector<float>& want,
                        float relative) {
  ASSERT_EQ(got.size(), want.size());
  float scale = 0;
  for (float v : want) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], relative * scale) << i;
  }
}
namespace {

std::vector<ShapeInfo> InputInfos(const Workspace& ws, const OperatorDef& op) {
  std::vector<ShapeInfo> in;
  for (const std::string& name : op.input()) {
    const Tensor* t = ws.GetBlob(name);
    in.push_back(t ? ShapeInfo{t->dtype(), t->shape(), true} : ShapeInfo{});
  }
  return in;
}

std::string InfoString(const ShapeInfo& info) {
  if (!info.known) return "unknown";
  std::string s = std::string(DTypeName(info.dtype)) + "[";
  for (size_t i = 0; i < info.dims.size(); ++i) s += (i ? "," : "") + std::to_string(info.dims[i]);
  return s + "]";
}

}  // namespace

OperatorDef ParseOp(const std::string& text) {
  OperatorDef op;
  ParseTextProto(text, "<op>", &op);
  return op;
}

NetDef NetOf(const std::vector<std::string>& op_texts, const std::string& type) {
  NetDef net;
  net.set_name("test");
  net.set_type(type);
  for (const std::string& text : op_texts) *net.add_op() = ParseOp(text);
  return net;
}

void ExpectLeftAlone(const std::function<int(NetDef*)>& rewrite,
                     const std::vector<UnrewritableNet>& nets) {
  for (const UnrewritableNet& c : nets) {
    NetDef net = NetOf(c.ops);
    for (const std::string& out : c.outputs) net.add_external_output(out);
    const std::string before = net.DebugString();
    EXPECT_EQ(rewrite(&net), 0) << c.why;
    EXPECT_EQ(net.DebugString(), before) << c.why;
  }
}

NetDef InitNetOf(const Workspace& ws, const std::vector<std::string>& names) {
  NetDef init;
  init.set_name("init");
  for (const std::string& name : names) {
    const Tensor* t = ws.GetBlob(name);
    OperatorDef* fill = init.add_op();
    fill->set_type("GivenTensorFill");
    fill->add_output(name);
    Argument* shape = fill->add_arg();
    shape->set_name("shape");
    for (int64_t d : t->shape()) shape->add_ints(d);
    Argument* values = fill->add_arg();
    values->set_name("values");
    for (int64_t i = 0; i < t->numel(); ++i) values->add_floats(t->data<float>()[i]);
  }
  return init;
}

std::vector<int64_t> ShapeOf(const Workspace& ws, const std::string& name) {
  const Tensor* t = ws.GetBlob(name);
  return t ? t->shape() : std::vector<int64_t>{};
}

::testing::AssertionResult RunOp(Workspace* ws, const std::string& op_text, bool allow_unknown) {
  NetDef net = NetOf({op_text});
  const OperatorDef& op = net.op(0);
  const OpSchema* schema = FindSchema(op.type());
  if (schema == nullptr) return ::testing::AssertionFailure() << "no schema for " << op.type();
  std::vector<ShapeInfo> inferred;
  try {
    inferred = schema->InferShapes(op, InputInfos(*ws, op));
  } catch (const Error& e) {
    return ::testing::AssertionFailure() << "shape inference threw: " << e.what();
  }
  Status status = ws->RunNetOnce(net);
  if (!status.ok()) return ::testing::AssertionFailure() << status.ToString();
  for (int i = 0; i < op.output_size(); ++i) {
    const Tensor* t = ws->GetBlob(op.output(i));
    ShapeInfo actual{t->dtype(), t->shape(), true};
    if (!inferred[i].known && allow_unknown) continue;
    if (!inferred[i].known || inferred[i].dtype != actual.dtype ||
        inferred[i].dims != actual.dims) {
      return ::testing::AssertionFailure()
             << op.type() << " output '" << op.output(i) << "': schema inferred "
             << InfoString(inferred[i]) << ", kernel produced " << InfoString(actual);
    }
  }
  return ::testing::AssertionSuccess();
}

std::string RunOpError(Workspace* ws, const std::string& op_text) {
  return ws->RunNetOnce(NetOf({op_text})).message();
}

std::string InferError(const Workspace& ws, const std::string& op_text) {
  OperatorDef op = ParseOp(op_text);
  try {
    FindSchema(op.type())->InferShapes(op, InputInfos(ws, op));
  } catch (const Error& e) {
    return e.status().message();
  }
  return "";
}

void ExpectRunFails(Workspace* ws, const std::string& op_text, const std::string& fragment) {
  const std::string run = RunOpError(ws, op_text);
  EXPECT_NE(run.find(fragment), std::string::npos) << run;
}

void ExpectInferAndRunFail(Workspace* ws, const std::string& op_text,
                           const std::string& fragment) {
  const std::string infer = InferError(*ws, op_text);
  EXPECT_NE(infer.find(fragment), std::string::npos) << infer;
  ExpectRunFails(ws, op_text, fragment);
}

}  // namespace braid::test
