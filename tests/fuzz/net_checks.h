// What every fuzz harness that yields a NetDef does with it: plan its memory and build it, as
// braid_plan and Workspace::CreateNet would, without running it (a run's sizes are unbounded).
//
// Each stage may refuse the net with braid::Error: that is the outcome bad input must have. A
// crash, a sanitizer report, any other exception (escaping, or wrapped as an Internal Status:
// fuzz/refusal.h), or a memory plan that the planner's independent checker
// (planner/verify_plan.h) rejects is a finding: the harness aborts and libFuzzer keeps the input.
//
// Building is skipped for nets whose construction does work outside the process's bounds by
// design: ops on a device other than cpu:N or sim:0 (each simulated device starts its stream
// threads for the life of the process), IdxImageInput and TensorProtosDBInput (they read the files
// or DBs they name, or build a dataset, and start a prefetching thread when constructed). They are
// still planned.
#ifndef BRAID_TESTS_FUZZ_NET_CHECKS_H_
#define BRAID_TESTS_FUZZ_NET_CHECKS_H_

#include <map>
#include <string>

#include "proto/braid.pb.h"
#include "runtime/core/op_schema.h"

namespace braid::fuzz {

// Plans `net` (inference, for the executor the runtime would run it on) from `known` shapes plus
// what shape inference derives, verifies the plan, then builds the net in a workspace holding its
// external inputs.
void PlanAndBuild(const NetDef& net, const std::map<std::string, ShapeInfo>& known);

// The shapes an init net's fills give its outputs (none when the init net is refused).
std::map<std::string, ShapeInfo> ShapesFilledBy(const NetDef& init_net);

// Quiets glog (bad input logs warnings by design).
void QuietLogging();

}  // namespace braid::fuzz

#endif  // BRAID_TESTS_FUZZ_NET_CHECKS_H_
