#include "runtime/exec/run_stop.h"

#include <cstdio>

namespace braid {

Status RunStop::Why(const std::string& where) const {
  if (stop.stop_requested()) return Status::Cancelled(where + ": the caller cancelled it");
  char late[64];
  std::snprintf(late, sizeof(late), "%.3f ms",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          deadline)
                    .count());
  return Status::DeadlineExceeded(where + ": its deadline passed " + late + " ago");
}

}  // namespace braid
