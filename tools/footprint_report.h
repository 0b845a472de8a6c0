// Printing a predicted training footprint (runtime/models/training_footprint.h): a table for people
// and a JSON object for scripts, one column or object per device, in MiB and bytes.
//
//   std::cout << FootprintTable(PredictTrainingFootprint(nets, {}));
//
// Thread safety: pure functions.
#ifndef BRAID_TOOLS_FOOTPRINT_REPORT_H_
#define BRAID_TOOLS_FOOTPRINT_REPORT_H_

#include <string>
#include <vector>

#include "runtime/models/training_footprint.h"

namespace braid {

std::string FootprintTable(const std::vector<DeviceFootprint>& devices);
// {"devices": [{"device": "sim:0", "parameters": B, ..., "total": B}, ...]}
std::string FootprintJson(const std::vector<DeviceFootprint>& devices);

}  // namespace braid

#endif  // BRAID_TOOLS_FOOTPRINT_REPORT_H_
