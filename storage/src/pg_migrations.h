#pragma once

namespace settle::storage {

// Forward-only migrations; migration i (0-based) brings the database to version i + 1. Never
// edit a migration that has shipped: add a new one.
//
// The tables mirror the SQLite schema at its version 4 (see schema.cc): times are Unix
// milliseconds; branch rows are keyed by their global's id. Bodies, errors, options and
// reasons are BYTEA: they carry whatever bytes a client or participant sent, which TEXT
// would refuse (NUL bytes, invalid UTF-8). gid, branch_id and url are TEXT; the coordinator
// validates them before they get here.
//
// Version 2 adds settle_apply_group (pg_group_applier.h): a group commit is then one
// statement, one round trip and one WAL flush, instead of a round trip per operation. It
// applies each batch in its own subtransaction (an exception block) with the checks and
// messages of write_batch.h; a refusal raises SQLSTATE SE404 (NotFound), SE409 (Conflict),
// SE410 (AlreadyExists) or SE400 (InvalidArgument), which rolls back that batch alone and is
// reported in the result: a JSON array with null for each applied batch and [sqlstate,
// message] for each refused one. Bytes arrive hex-encoded. A data exception (class 22) in a
// batch is its refusal too; any other error fails the whole group.
//
// Version 3 adds instance leases (instance_leases.h): settle_instances holds each
// coordinator instance's lease expiry in the database's clock (Unix milliseconds, from
// settle_now()), trans_global.owner the instance driving each transaction ('' for none). A
// partial index on next_cron_time serves ListClaimable's scan of unfinished transactions by
// due time.
//
// Version 4 adds topic subscriptions, as SQLite's version 5 does: topic_subscriber holds one
// row per (topic, url), and its identity `seq` is the subscription order. Topic names use the
// "C" collation, so that they compare and sort byte for byte as in SQLite, whatever the
// database's locale. settle_apply_topic_op applies the topic operations with the checks and
// messages of write_batch.h, and settle_apply_group is replaced by one that hands them to it
// and every other operation to settle_apply_op, unchanged: a coordinator of the previous
// version still running on the database goes on working.
//
// Version 5 serializes a branch registration with every decision on its transaction (the
// timeout/registration race): the status check of 'eg' (ExpectGlobalStatus) locks the global
// row FOR SHARE until the group commits, and 'ec' (ExpectBranchCount) locks it as an UPDATE
// does before it counts, so under READ COMMITTED a count cannot miss a registration whose
// status check passed, and a registration waiting on a decision reads the status it committed.
// It adds force_stopped (an operator's forceStop, as SQLite's version 6; the transactions whose
// reason names one are marked), which 'ig' and 'ug' write when the batch carries it (a
// coordinator of the previous version sends none: 0, or left as it is), and 'df' keeps a failed TCC
// or XA whose cancels are still to be made (undone_rollbacks.h). settle_apply_op is replaced whole;
// its other operations are unchanged.
extern const char* const kPgMigration1;
extern const char* const kPgMigration2;
extern const char* const kPgMigration3;
extern const char* const kPgMigration4;
//
// Version 6 stores who created each transaction and each topic subscription (creator: the
// caller's name, docs/protocol.md §1.6; trans_global.owner already names the instance driving
// a transaction), as SQLite's version 7. Rows from before have none (''): they belong to
// nobody. settle_apply_group is replaced by one that writes the creator an 'ig' or 'su' carries
// ('cr'; a coordinator of the previous version sends none) and hands the ownership checks 'xc'
// (ExpectCreator) and 'xt' (ExpectTopicCreator, which takes a lock of the topic's name until the
// group commits) to settle_expect_creator; every other operation is unchanged.
extern const char* const kPgMigration5;
extern const char* const kPgMigration6;
//
// Version 7 stores a body once per transaction however many rows carry it, as SQLite's version
// 8: a row that shares another's body names it in (body_of_branch, body_of_op) and keeps none
// ('' for a row that holds its own); `data` is renamed `body`, so that a coordinator of an
// earlier version, which would send a sharing row's body as empty, fails on the table instead
// (stop every instance before starting this version on the database: docs/operations.md,
// Upgrades). settle_insert_branch inserts a branch ('ib', whose 'bo'/'bop' name the holder and
// 'bl' its body's length, checked); settle_apply_group is replaced by one that hands it 'ib'
// (settle_apply_op's own 'ib' writes the old column and is no longer called); every other
// operation is unchanged.
extern const char* const kPgMigration7;
//
// Version 8 adds the audit trail, as SQLite's version 9: admin_audit holds one row per operator
// action (actor, target, parameters and reason as BYTEA: whatever bytes they hold), and
// settle_op_au inserts one ('au', RecordAudit), settle_op_ad deletes the old ones ('ad',
// DeleteAuditBefore). settle_apply_group is replaced one last time:
// the operations above keep their routes, and any other operation 't' is handed to a function
// named settle_op_<t> (EXECUTE: planned per call, for the rare operations), so that a later
// version adds an operation by adding its function.
extern const char* const kPgMigration8;
//
// Version 9 adds pause and resume, as SQLite's version 10: trans_global's paused_at (NULL: not
// paused), paused_by and paused_reason (BYTEA), a partial index on the paused rows, and
// settle_op_pa (PauseGlobal, 'pa') and settle_op_re (ResumeGlobal, 're'), which
// settle_apply_group's router hands them to. A paused transaction is left out of the scans for
// due and unfinished transactions; every other operation leaves the pause as it is.
extern const char* const kPgMigration9;
//
// Version 10 adds settle_op_rd (RedirectBranch, 'rd'): an operator's new url for a pending
// branch row. No table changes (SQLite needs no new version for it).
extern const char* const kPgMigration10;
//
// Version 11 adds bulk jobs, as SQLite's version 11: bulk_jobs holds one row per job
// (records.h BulkJob; actor, filter, parameters, reason and last_skip as BYTEA: whatever bytes
// they hold; id in the "C" collation, so that jobs created in the same millisecond list in
// SQLite's order), and settle_op_ij (InsertJob, 'ij'), settle_op_aj (AdvanceJob, 'aj'),
// settle_op_cj (CancelJob, 'cj') and settle_op_dj (DeleteJobsBefore, 'dj'), which
// settle_apply_group's router hands them to.
extern const char* const kPgMigration11;
//
// Version 12 stores each transaction's span, as SQLite's version 12 (GlobalRecord::trace,
// trace_codec.h): trans_global's trace (the span as its traceparent), trace_parent and
// trace_state (TEXT: what W3C allows is ASCII), '' for none and in every row from before.
// settle_op_igt ('igt') inserts a global with every column, its creator and its span
// included, in one INSERT; the router's 'ig' (settle_apply_op, then the creator's UPDATE) stays
// for a coordinator of an earlier version, whose rows have no span. No other operation writes
// the span.
extern const char* const kPgMigration12;
//
// Version 13 adds a workflow's result, as SQLite's version 13 (GlobalRecord::result):
// trans_global's result (BYTEA, '' for none and in every row from before) and settle_op_ugr
// ('ugr'): UpdateGlobal with a result, 'ug' (settle_apply_op, its checks and refusals) and then
// the result. 'ug' stays for an update without one and for a coordinator of an earlier version.
extern const char* const kPgMigration13;

// Version 14 adds settle_op_ubr ('ubr'): UpdateBranch with the row as its writer read it
// (UpdateBranch::read_next_retry_at): a refusal naming the change when the row's url or
// next_retry_at moved since (a redirect, a Retry now), then 'ub'. SQLite needs no new version:
// its statement compares them itself.
extern const char* const kPgMigration14;
//
// Version 15 indexes the transactions the rollback repair looks for, as SQLite's version 14:
// a partial index on the finish_time of failed TCC and XA transactions that no operator
// force-stopped, so that a sweep never reads the succeeded ones.
extern const char* const kPgMigration15;

}  // namespace settle::storage
