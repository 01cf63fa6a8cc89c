#pragma once

// A failed TCC or XA transaction that an operator did not force-stop, and that still has a
// cancel (rollback) row never completed: its registered branch's Try is reserved, and the
// coordinator must make the call (Store::ListUndoneRollbacks). Only a version with the
// timeout/registration race leaves one (a failed transaction otherwise has every cancel row
// succeeded). The same condition, in the SQL of both stores, keeps retention from deleting it
// before the calls are made. `g` names trans_global in the enclosing query.
#define SETTLE_UNDONE_ROLLBACKS_OF(g)                                                 \
  "(" g ".status = 'failed' AND " g ".force_stopped = 0 AND " g                       \
  ".trans_type IN ('tcc', 'xa') AND EXISTS (SELECT 1 FROM trans_branch_op AS undone " \
  "WHERE undone.global_id = " g                                                       \
  ".id AND undone.op IN ('cancel', 'rollback') "                                      \
  "AND undone.status = 'prepared'))"
