#pragma once

// The two services' SQLite statements are the examples' shared ones (examples/common).
#include "example_sql.h"

namespace settle::order_msg {
using examples::Query;
using examples::QueryRow;
using examples::Run;
using examples::SqlValue;
}  // namespace settle::order_msg
