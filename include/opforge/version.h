// opforge/version.h — the library version (also written into every plan file).
#pragma once

#define OPFORGE_VERSION_MAJOR 0
#define OPFORGE_VERSION_MINOR 1
#define OPFORGE_VERSION_PATCH 0
#define OPFORGE_VERSION_STRING "0.1.0"
