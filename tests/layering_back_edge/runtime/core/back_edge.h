// A fixture for Layering.ABackEdgeIsNamed: a core header including above core, four ways. Never
// compiled.
#include "runtime/exec/net.h"
#if 1
  #include "braid/trainer.h"
#endif
#include "runtime/core/../exec/scratch.h"
