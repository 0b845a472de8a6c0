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
// its collectives in one order (run the same net): the net's first run, in net order on one
// thread, hangs at the first difference, as it did before. The executor and the memory planner
// both see the added control inputs, in the net's def().
//
//   NetDef net = ...;              // type "dag", three independent ProcessAllreduce ops
//   OrderProcessCollectives(&net); // the second waits for the first, the third for the second
//
// Pure: touches only `net`.
#ifndef BRAID_RUNTIME_PROCESS_COLLECTIVE_ORDER_H_
#define BRAID_RUNTIME_PROCESS_COLLECTIVE_ORDER_H_

#include "proto/braid.pb.h"

namespace braid {

void OrderProcessCollectives(NetDef* net);

}  // namespace braid

#endif  // BRAID_RUNTIME_PROCESS_COLLECTIVE_ORDER_H_
