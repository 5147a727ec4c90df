// A fixture for scripts/check-layout.sh (never compiled): a program outside src/ including the
// engine's device header, which opforge/device.h replaces.
#include "device/device.h"
#include "opforge/device.h"
