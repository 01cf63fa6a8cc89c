#pragma once

#include <string_view>

namespace settle {

// Names the calling thread (at most 15 bytes are kept), so that top, perf and /proc/PID/task
// tell Settle's threads apart: scripts/bench reports settled's CPU per thread by these names.
void NameThisThread(std::string_view name);

}  // namespace settle
