// RunInitNet: runs a model's init net (its weights, as fill ops) once, one op at a time, freeing
// each op's arguments as soon as it has run, so that the weights are held about once: in the
// NetDef's remaining ops and in the tensors already filled, never also in a built net's copies.
//
// A net built by Workspace::CreateNet keeps a copy of its NetDef and every op a copy of its
// OperatorDef; for an init net whose GivenTensorFill ops carry a model's values that triples the
// weights while it runs (ResNet-50: 3 x 98 MB). The whole net is validated first (every error
// names the net and the op as in a built net), then each op runs as a net of its own.
//
//   ModelFolder model;
//   Status s = LoadModelFolder("resnet50", &model);
//   if (s.ok()) s = RunInitNet(std::move(model.init_net), &ws);
//
// Thread safety: as Workspace::RunNetOnce.
#ifndef BRAID_RUNTIME_EXEC_INIT_NET_H_
#define BRAID_RUNTIME_EXEC_INIT_NET_H_

#include "braid/status.h"
#include "proto/braid.pb.h"

namespace braid {

class Workspace;

Status RunInitNet(NetDef init_net, Workspace* ws);

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_INIT_NET_H_
