// An application that embeds braid through its installed public API only: <braid/session.h> and
// <braid/status.h>. Usage: app INIT_NET NET. Exits 0 when every check passes.
#include <braid/session.h>
#include <braid/status.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

namespace {

int failures = 0;

void Expect(bool condition, const std::string& what) {
  if (!condition) {
    std::cerr << "FAILED: " << what << "\n";
    ++failures;
  }
}

void ExpectOk(const braid::Status& status, const std::string& what) {
  Expect(status.ok(), what + ": " + status.ToString());
}

// y = Relu(x * 1.5 + 2) for x = {-4, -1, 0, 1, 2, 3}: {0, 0.5, 2, 3.5, 5, 6.5}.
void RunsTheNet(const std::string& init_path, const std::string& net_path) {
  braid::Session session;
  ExpectOk(session.RunNetOnce(init_path), "RunNetOnce(init)");
  // Inputs exist before LoadNet: building a net checks that every input it reads is there.
  ExpectOk(session.Feed("x", {2, 3}, {-4, -1, 0, 1, 2, 3}), "Feed(x)");
  std::string net_name;
  ExpectOk(session.LoadNet(net_path, &net_name), "LoadNet");
  Expect(net_name == "embed_predict", "LoadNet names the net, got '" + net_name + "'");
  ExpectOk(session.RunNet(net_name, 2), "RunNet");

  std::vector<int64_t> shape;
  std::vector<float> y;
  ExpectOk(session.Fetch("y", &shape, &y), "Fetch(y)");
  Expect(shape == std::vector<int64_t>{2, 3}, "y has shape [2,3]");
  const std::vector<float> expected = {0, 0.5f, 2, 3.5f, 5, 6.5f};
  Expect(y == expected, "y == Relu(x * 1.5 + 2)");
  std::cout << "y = [";
  for (size_t i = 0; i < y.size(); ++i) std::cout << (i ? ", " : "") << y[i];
  std::cout << "]\n";
}

// The same net with its memory planned: the same y, and the plan reports its sizes.
void PlansTheNetsMemory(const std::string& init_path, const std::string& net_path) {
  braid::Session session;
  ExpectOk(session.RunNetOnce(init_path), "RunNetOnce(init)");
  ExpectOk(session.Feed("x", {2, 3}, {-4, -1, 0, 1, 2, 3}), "Feed(x)");
  std::string net_name;
  ExpectOk(session.LoadNet(net_path, &net_name), "LoadNet");
  int64_t planned = -1, naive = -1;
  ExpectOk(session.PlanMemory(net_name, &planned, &naive), "PlanMemory");
  Expect(planned >= 0 && planned <= naive, "planned <= naive bytes");
  ExpectOk(session.RunNet(net_name, 2), "RunNet after PlanMemory");
  std::vector<int64_t> shape;
  std::vector<float> y;
  ExpectOk(session.Fetch("y", &shape, &y), "Fetch(y)");
  Expect(y == std::vector<float>({0, 0.5f, 2, 3.5f, 5, 6.5f}), "planned y == Relu(x * 1.5 + 2)");
  Expect(!session.PlanMemory("no_such_net").ok(), "PlanMemory of an unknown net fails");
  std::cout << "planned " << planned << " of " << naive << " bytes\n";
}

// The same net on a simulated GPU: parameters, input and output live in its memory; Fetch copies.
void RunsOnASimulatedGpu(const std::string& init_path, const std::string& net_path) {
  braid::Session session;
  ExpectOk(session.SetDevice("sim:0"), "SetDevice(sim:0)");
  ExpectOk(session.RunNetOnce(init_path), "RunNetOnce(init) on sim:0");
  ExpectOk(session.Feed("x", {2, 3}, {-4, -1, 0, 1, 2, 3}), "Feed(x) on sim:0");
  std::string net_name;
  ExpectOk(session.LoadNet(net_path, &net_name), "LoadNet on sim:0");
  ExpectOk(session.RunNet(net_name, 2), "RunNet on sim:0");
  std::vector<int64_t> shape;
  std::vector<float> y;
  ExpectOk(session.Fetch("y", &shape, &y), "Fetch(y) from sim:0");
  Expect(y == std::vector<float>({0, 0.5f, 2, 3.5f, 5, 6.5f}), "y on sim:0 == Relu(x * 1.5 + 2)");
  Expect(!session.SetDevice("gpu:7").ok(), "SetDevice of a device braid does not know fails");
  std::cout << "sim:0 computed the same y\n";
}

void ReportsErrorsAsStatus() {
  braid::Session session;
  std::string net_name;
  const braid::Status missing = session.LoadNet("/nonexistent/braid/net.pbtxt", &net_name);
  Expect(!missing.ok(), "LoadNet of a missing file fails");
  Expect(missing.code() == braid::StatusCode::kNotFound,
         "... with NotFound: " + missing.ToString());
  Expect(!session.RunNet("no_such_net").ok(), "RunNet of an unknown net fails");
  std::vector<int64_t> shape;
  std::vector<float> values;
  Expect(!session.Fetch("no_such_blob", &shape, &values).ok(), "Fetch of an unknown blob fails");
  std::cout << "bad net path: " << missing.ToString() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: app INIT_NET NET\n";
    return 2;
  }
  RunsTheNet(argv[1], argv[2]);
  PlansTheNetsMemory(argv[1], argv[2]);
  RunsOnASimulatedGpu(argv[1], argv[2]);
  ReportsErrorsAsStatus();
  if (failures > 0) {
    std::cerr << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "embed: all checks passed\n";
  return 0;
}
