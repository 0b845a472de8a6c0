// OpTypeProfile: an observer that sums op time by op type and prints it as a table.
//
//   OpTypeProfile profile;
//   net->AddObserver(&profile);
//   for (int i = 0; i < 10; ++i) net->Run();
//   std::cout << profile.Table();
//
// Thread safety: it locks itself, so one profile may watch several nets at once.
#ifndef BRAID_RUNTIME_EXEC_OP_TYPE_PROFILE_H_
#define BRAID_RUNTIME_EXEC_OP_TYPE_PROFILE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/exec/observer.h"

namespace braid {

class OpTypeProfile final : public NetObserver {
 public:
  void OnRunEnd(const Net& net, const std::vector<OpEvent>& events) override;
  // Columns: op type, count, total ms, mean us, share of all op time; sorted by total time.
  std::string Table() const;

 private:
  struct Totals {
    int64_t count = 0;
    int64_t total_ns = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Totals> by_type_;  // guarded by mu_
};

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_OP_TYPE_PROFILE_H_
