#pragma once

#include <string>

#include "settle/sdk/postgres_xa.h"
#include "settle/sdk/workflow.h"

namespace settle::sdk {

// An XA branch of the service's own PostgreSQL database as a workflow step (DTM's DoXa): the
// action runs `business` in a local transaction of `xa`'s database and prepares it (PREPARE
// TRANSACTION, with its barrier row, as PostgresXa's action does, but registered with nobody:
// the step log records it); the commit is COMMIT PREPARED, the rollback ROLLBACK PREPARED, so
// its changes become visible only when the whole workflow succeeded, and the locks it holds
// are released when it ends. The step's output is empty.
//
// A run that stops after the prepare and before the record (a crash, the coordinator
// unreachable) leaves the branch prepared: the next run finds it so and records it without
// running the business again. A business Conflict fails the step (nothing prepared; its
// rollback then finds nothing). The workflow's gid and the step's branch id name the prepared
// transaction (PostgresXa::PreparedTransactionName). `xa` must outlive the workflows.
WorkflowStep XaStep(PostgresXa& xa, std::string name, XaBusiness business);

}  // namespace settle::sdk
