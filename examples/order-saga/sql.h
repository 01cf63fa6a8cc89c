#pragma once

// The services' SQLite statements are the examples' shared ones (examples/common).
#include "example_sql.h"

namespace settle::order_saga {
using examples::Exec;
using examples::QueryRow;
using examples::SqlValue;
}  // namespace settle::order_saga
