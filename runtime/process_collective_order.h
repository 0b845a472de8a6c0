// OrderProcessCollectives: keeps a `dag` net's collectives across processes from deadlocking.
//
// Ops that wait for other processes (OpSchema::WaitsForOtherProcesses: ProcessAllreduce) block a
// worker until every rank has started the same collective; distinct tags keep concurrent ones
// apart but do not make ranks start them in one order. With W workers and more than W independent
// collectives, rank 0's workers can all wait in collectives 1 and 2 while rank 1's wait in 3 and 4:
// a hang, until the process group's timeout. So in a dag net of W workers, each such op, in net
// order, also waits for the W-th such op before it to finish (a control_input on its first
// output). Then at most W of them are in flight on a rank, the oldest unfinished one always has a
// free worker on every rank, and every collective ends (whatever each rank's W and timing), given
// that every rank lists its collectives in one order (runs the same net, as tags pair them). The
// net's first run goes in net order on one thread anyway (runtime/dag_net.h). The executor and the
// memory planner both see the added control inputs, in the net's def().
//
//   NetDef net = ...;                  // type "dag", num_workers 2, four ProcessAllreduce ops
//   OrderProcessCollectives(&net, 2);  // the third waits for the first, the fourth for the second
//
// Pure: touches only `net`.
#ifndef BRAID_RUNTIME_PROCESS_COLLECTIVE_ORDER_H_
#define BRAID_RUNTIME_PROCESS_COLLECTIVE_ORDER_H_

#include "proto/braid.pb.h"

namespace braid {

void OrderProcessCollectives(NetDef* net, int workers);

}  // namespace braid

#endif  // BRAID_RUNTIME_PROCESS_COLLECTIVE_ORDER_H_
