// A fixture for scripts/check-layout.sh (never compiled): the engine itself may include its
// device layer.
#include "../device/device.h"
