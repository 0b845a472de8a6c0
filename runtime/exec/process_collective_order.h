// OrderProcessCollectives: keeps a `dag` net's collectives across processes from deadlocking.
//
// Ops that wait for other processes (OpSchema::WaitsForOtherProcesses: ProcessAllreduce) block a
// worker until every rank has started the same collective; distinct tags keep concurrent ones
// apart but do not make ranks start them in one order. With fewer free workers than independent
// collectives, rank 0's workers can all wait in collectives 1 and 2 while rank 1's wait in 3 and 4:
// a hang, until the process group's timeout. So in a dag net each such op, in net order, also
// waits for the one before it to finish (a control_input on that op's first output): every rank
// runs them one at a time in net order, which needs one free worker, however many threads the
// process's oneTBB gives the net (several nets running at once share them) and whatever each
// rank's timing. (Allowing W in flight with W workers is deadlock-free only when the net surely
// has W threads.) The data-parallel builder chains its buckets so already. Every rank must list
// its collectives in one order (run the same net): CheckProcessCollectiveOrder below says so
// before the first collective. The executor and the memory planner both see the added control
// inputs, in the net's def().
//
//   NetDef net = ...;              // type "dag", three independent ProcessAllreduce ops
//   OrderProcessCollectives(&net); // the second waits for the first, the third for the second
//
// Pure: touches only `net`.
//
// CheckProcessCollectiveOrder: that every rank lists them alike. Before a net's first Run in a
// group each rank fingerprints the net's collectives in net order (the net's name, each
// collective's type and the effective values every rank must share: tag, tensors per replica,
// algorithm, average; on a cuda device also the replicas and, with average, the weight), and the
// ranks compare fingerprints in one small all-reduce on a tag of braid's own range,
// [kFirstReservedTag, 2^32), picked by the net's name. Ranks whose lists differ (another net,
// another order, another tag) then all fail at once with an error naming the first difference (the
// lists are exchanged through the group's store), instead of each waiting in another collective
// until the group's timeout; a peer already lost fails the all-reduce at once, naming it. A net
// without collectives, or a process without a group or alone in it, checks nothing; a rank whose
// net has none while a peer's has some leaves that peer waiting in the check until its timeout, as
// it would wait in its first collective.
//
//   Status s = CheckProcessCollectiveOrder(net->def(), CurrentProcessGroup());
//
// Checks of nets with different names run side by side on their own tags (names whose tags
// collide, one in 65536, take turns); a name's checks run one at a time in a process and pair up
// across ranks in that order (two nets of one name must be first run in the same order on every
// rank). ProcessAllreduce on cuda devices (NCCL) is ordered and checked as on cpu devices.
// Thread-safe.
#ifndef BRAID_RUNTIME_EXEC_PROCESS_COLLECTIVE_ORDER_H_
#define BRAID_RUNTIME_EXEC_PROCESS_COLLECTIVE_ORDER_H_

#include <cstdint>
#include <string>

#include "braid/status.h"
#include "proto/braid.pb.h"
#include "runtime/dist/process_group.h"

namespace braid {

// Gloo tags from here up are braid's own (the checks' all-reduces); ProcessAllreduce refuses them.
constexpr uint32_t kFirstReservedTag = 0xFFFF0000u;

// The default tag of a cross-process collective: FNV-1a (32 bits) of `output` (its first output's
// name), moved below the reserved range when it falls in it.
uint32_t DefaultCollectiveTag(const std::string& output);

void OrderProcessCollectives(NetDef* net);

Status CheckProcessCollectiveOrder(const NetDef& net, ProcessGroup* group);

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_PROCESS_COLLECTIVE_ORDER_H_
