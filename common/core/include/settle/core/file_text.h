#pragma once

#include <string>

#include "settle/core/status.h"

namespace settle {

// The whole content of the file at `path` (a PEM certificate, a token file), byte for byte.
// Unavailable naming the path and the system's reason when it cannot be opened or read.
Result<std::string> ReadFileText(const std::string& path);

}  // namespace settle
