#pragma once

#include <cstddef>
#include <functional>

#include "settle/coordinator/executor.h"

namespace settle::coordinator {

// Runs body(0), ..., body(count - 1), each exactly once and in parallel where it can, and
// returns when every one has run.
//
// The calling thread runs index 0 and offers the others to `executor` as helper tasks. After
// index 0 it keeps claiming indices no helper has started, so it waits only for work another
// thread is actually doing, never for a task still in the executor's queue: ParallelFor cannot
// deadlock even when it runs on the executor's only thread. Helper tasks that start after
// every index is claimed return at once without calling `body`, so `body` may refer to the
// caller's locals. `body` must not throw.
void ParallelFor(Executor& executor, std::size_t count,
                 const std::function<void(std::size_t)>& body);

}  // namespace settle::coordinator
