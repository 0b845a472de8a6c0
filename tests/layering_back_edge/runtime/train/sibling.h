// A fixture for Layering.ABackEdgeIsNamed: train and serve are siblings; neither includes the
// other. Never compiled.
#include <runtime/serve/session.h>
