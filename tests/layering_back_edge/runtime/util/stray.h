// A fixture for Layering.ABackEdgeIsNamed: a folder of runtime/ that is no room. Never compiled.
#include "runtime/core/tensor.h"
