#pragma once

namespace settle::api {

// Hands the memory the allocator holds free back to the system (glibc's malloc_trim: the top
// of every arena and the free pages inside them), so that a burst of large answers does not
// leave the process at its peak size. Nothing where the allocator has no such call.
void ReturnFreedMemory();

}  // namespace settle::api
