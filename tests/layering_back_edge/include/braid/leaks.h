// A fixture for Layering.ABackEdgeIsNamed: a public header including a private one. Never compiled.
#include <runtime/core/tensor.h>
