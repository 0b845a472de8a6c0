// A fixture for Layering.ABackEdgeIsNamed: a core header including an executor's header, the kind
// of back-edge check_layering.cmake must refuse. Never compiled.
#include "runtime/exec/net.h"
