// OrderProcessCollectives (runtime/exec/process_collective_order.h): which control inputs a dag
// net's cross-process collectives get, and that a dag net built with BuildNet has them.
#include "runtime/exec/process_collective_order.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "testing/net_text.h"

namespace braid {
namespace {

std::vector<std::string> ControlInputs(const NetDef& net, int op) {
  return {net.op(op).control_input().begin(), net.op(op).control_input().end()};
}

NetDef FiveCollectives() {
  std::string text = R"(name: "five" type: "dag")";
  for (int k = 0; k < 5; ++k) {
    const std::string g = "g" + std::to_string(k);
    text += " op { type: \"Relu\" input: \"x\" output: \"" + g + "\" }";
    text += " op { type: \"ProcessAllreduce\" input: \"" + g + "\" output: \"" + g +
            "\" arg { name: \"tag\" i: " + std::to_string(k) + " } }";
  }
  return testing::NetFromText(text);
}

TEST(ProcessCollectiveOrderTest, EachCollectiveWaitsForTheOneBeforeIt) {
  NetDef net = FiveCollectives();
  OrderProcessCollectives(&net);
  for (int op = 0; op < 10; op += 2) EXPECT_TRUE(ControlInputs(net, op).empty()) << op;  // Relus
  EXPECT_TRUE(ControlInputs(net, 1).empty());
  for (int k = 1; k < 5; ++k) {
    EXPECT_EQ(ControlInputs(net, 2 * k + 1), std::vector<std::string>{"g" + std::to_string(k - 1)});
  }
  const std::string once = net.SerializeAsString();
  OrderProcessCollectives(&net);  // already ordered: nothing more
  EXPECT_EQ(net.SerializeAsString(), once);
}

// The executor and the memory planner read the ordered net.
TEST(ProcessCollectiveOrderTest, ADagNetIsBuiltOrdered) {
  NetDef def = FiveCollectives();
  def.add_external_input("x");
  Argument* workers = def.add_arg();
  workers->set_name("num_workers");
  workers->set_i(3);
  Workspace ws;
  ws.CreateBlob("x")->Resize(DType::kFloat32, {4});
  const std::unique_ptr<Net> net = BuildNet(def, &ws);
  EXPECT_EQ(ControlInputs(net->def(), 7), std::vector<std::string>{"g2"});
  EXPECT_EQ(ControlInputs(net->def(), 9), std::vector<std::string>{"g3"});
  def.set_type("simple");  // one op at a time: nothing to order
  EXPECT_TRUE(ControlInputs(BuildNet(def, &ws)->def(), 7).empty());
}

}  // namespace
}  // namespace braid
