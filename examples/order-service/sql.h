#pragma once

// This example's SQLite statements are the examples' shared ones (examples/common).
#include "example_sql.h"

namespace settle::order_service {
using examples::Exec;
using examples::Query;
using examples::Read;
using examples::SqlRow;
using examples::SqlValue;
using examples::Write;
}  // namespace settle::order_service
