#include "settle/storage/sqlite_store.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "file_lock.h"
#include "schema.h"
#include "settle/db/sqlite_connection.h"
#include "sqlite_checkpointer.h"
#include "sqlite_reader.h"
#include "sqlite_writer.h"

namespace settle::storage {
namespace {

Status UseWal(db::SqliteConnection& connection) {
  Result<db::SqliteStatement> stmt = connection.Prepare("PRAGMA journal_mode = WAL");
  if (!stmt) return stmt.status();
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  const std::string mode = *row ? stmt->ColumnBytes(0) : "";
  if (mode != "wal") return Status::Unavailable("sqlite: cannot use WAL mode (got '" + mode + "')");
  return Status::Ok();
}

Status Damaged(const std::string& path, const std::string& what) {
  return Status::InvalidArgument(
      "the database '" + path + "' is damaged (" + what +
      "): settled does not start on it; restore it from a backup (docs/operations.md, \"A "
      "damaged database\")");
}

// SQLite's quick_check of every page, every record and every index's order (not that an
// index holds the same rows as its table: a page overwritten breaks the first three). It
// reads the whole file once.
Status CheckIntact(db::SqliteConnection& c, const std::string& path) {
  constexpr int kProblemsNamed = 3;
  Result<db::SqliteStatement> stmt =
      c.Prepare("PRAGMA quick_check(" + std::to_string(kProblemsNamed) + ")");
  if (!stmt) return Damaged(path, stmt.status().message());
  std::string problems;
  while (true) {
    Result<bool> row = stmt->Step();
    if (!row) return Damaged(path, row.status().message());
    if (!*row) break;
    const std::string line = stmt->ColumnBytes(0);
    if (line == "ok") continue;
    problems += (problems.empty() ? "" : "; ") + line;
  }
  return problems.empty() ? Status::Ok() : Damaged(path, problems);
}

bool HoldsData(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return !ec && size > 0;
}

// The write connection: durable commits (an fsync of the WAL per COMMIT), schema up to date.
Result<std::unique_ptr<db::SqliteConnection>> OpenWriteConnection(
    const std::string& path, const SqliteStoreOptions& options) {
  const bool existed = HoldsData(path);
  Result<std::unique_ptr<db::SqliteConnection>> connection = db::SqliteConnection::Open(
      path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, options.busy_timeout_ms);
  if (!connection) return connection.status();
  db::SqliteConnection& c = **connection;
  // Before anything else reads it: a damaged file is refused by name, not served with
  // "database disk image is malformed" answered to every request.
  if (existed) {
    if (Status s = CheckIntact(c, path); !s.ok()) return s;
  }
  if (Status s = c.Exec("PRAGMA synchronous = FULL"); !s.ok()) return s;
  // Before WAL: a file that is not a database, or is newer than this binary, is refused
  // before anything in it changes.
  if (Status s = MigrateSchema(c); !s.ok()) return s;
  if (Status s = UseWal(c); !s.ok()) return s;
  return connection;
}

}  // namespace

class SqliteStore::Impl {
 public:
  Impl(std::unique_ptr<FileLock> lock, std::unique_ptr<SqliteWriter> writer,
       std::unique_ptr<SqliteReader> reader)
      : lock_(std::move(lock)), writer_(std::move(writer)), reader_(std::move(reader)) {}

  ~Impl() {
    // Readers first, so that the writer's connection is the last one and its checkpoint
    // leaves the database file complete; the lock goes last.
    reader_.reset();
    writer_.reset();
    lock_.reset();
  }

  SqliteWriter& writer() { return *writer_; }
  SqliteReader& reader() { return *reader_; }

 private:
  std::unique_ptr<FileLock> lock_;
  std::unique_ptr<SqliteWriter> writer_;
  std::unique_ptr<SqliteReader> reader_;
};

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       SqliteStoreOptions options) {
  if (Status s = db::CreateParentDirectory(path); !s.ok()) return s;
  Result<std::unique_ptr<FileLock>> lock = FileLock::Acquire(path + ".lock", path);
  if (!lock) return lock.status();
  Result<std::unique_ptr<db::SqliteConnection>> connection = OpenWriteConnection(path, options);
  if (!connection) return connection.status();
  // After the write connection: the file is then migrated and in WAL mode.
  Result<std::unique_ptr<SqliteCheckpointer>> checkpointer =
      SqliteCheckpointer::Start(path, options.busy_timeout_ms);
  if (!checkpointer) return checkpointer.status();
  Result<std::unique_ptr<SqliteWriter>> writer =
      SqliteWriter::Start(std::move(connection).value(), std::move(checkpointer).value(), options);
  if (!writer) return writer.status();
  auto reader = std::make_unique<SqliteReader>(path, options.busy_timeout_ms);
  auto impl =
      std::make_unique<Impl>(std::move(lock).value(), std::move(writer).value(), std::move(reader));
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(impl)));
}

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SqliteStore::~SqliteStore() = default;

Status SqliteStore::Commit(const WriteBatch& batch) { return impl_->writer().Commit(batch); }

void SqliteStore::CommitAsync(WriteBatch batch, std::function<void(Status)> done) {
  impl_->writer().CommitAsync(std::move(batch), std::move(done));
}

Result<std::optional<Transaction>> SqliteStore::Load(const std::string& gid) {
  return impl_->reader().Load(gid);
}

Result<ListPage> SqliteStore::List(const ListQuery& query) { return impl_->reader().List(query); }

Result<std::vector<DueEntry>> SqliteStore::ListUnfinished() {
  return impl_->reader().ListUnfinished();
}

Result<std::vector<UnfinishedCount>> SqliteStore::CountUnfinished() {
  return impl_->reader().CountUnfinished();
}

Result<std::vector<CreatorUsage>> SqliteStore::UnfinishedUsage(
    const std::optional<std::string>& creator) {
  return impl_->reader().UnfinishedUsage(creator);
}

Result<std::vector<std::string>> SqliteStore::ListFinishedBefore(TimePoint cutoff,
                                                                 std::size_t limit) {
  return impl_->reader().ListFinishedBefore(cutoff, limit);
}

Result<std::vector<UndoneRollback>> SqliteStore::ListUndoneRollbacks(TimePoint finished_since,
                                                                     std::int64_t after_id,
                                                                     std::size_t limit) {
  return impl_->reader().ListUndoneRollbacks(finished_since, after_id, limit);
}

Result<std::vector<Subscriber>> SqliteStore::Subscribers(const std::string& topic) {
  return impl_->reader().Subscribers(topic);
}

Result<std::vector<Topic>> SqliteStore::ListTopics() { return impl_->reader().ListTopics(); }

Result<AuditPage> SqliteStore::ListAudit(const AuditQuery& query) {
  return impl_->reader().ListAudit(query);
}

Result<std::optional<BulkJob>> SqliteStore::LoadJob(const std::string& id) {
  return impl_->reader().LoadJob(id);
}

Result<std::vector<BulkJob>> SqliteStore::ListJobs(std::size_t limit, bool running_only) {
  return impl_->reader().ListJobs(limit, running_only);
}

StoreStats SqliteStore::Stats() const { return impl_->writer().Stats(); }

int SqliteStore::SchemaVersion() { return LatestSchemaVersion(); }

}  // namespace settle::storage
