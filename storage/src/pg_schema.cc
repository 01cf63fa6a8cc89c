#include "pg_schema.h"

#include <array>
#include <string>

#include "pg_migrations.h"

namespace settle::storage {
namespace {

// The migrations, in order (pg_migrations.h).
const std::array<const char*, 15> kMigrations = {
    kPgMigration1,  kPgMigration2,  kPgMigration3,  kPgMigration4,  kPgMigration5,
    kPgMigration6,  kPgMigration7,  kPgMigration8,  kPgMigration9,  kPgMigration10,
    kPgMigration11, kPgMigration12, kPgMigration13, kPgMigration14, kPgMigration15};

// The advisory lock that serializes migrations: any constant, and the schema the tables are
// created in.
constexpr const char* kMigrationLock =
    "SELECT pg_advisory_xact_lock(74372853, hashtext(current_schema()))";

Status Failed(db::PgConnection& connection, int version, const Status& cause) {
  if (connection.InTransaction()) connection.Run("ROLLBACK").IgnoreError();
  return Status::Unavailable("migrating the postgresql schema to version " +
                             std::to_string(version) + ": " + cause.message());
}

}  // namespace

int LatestPgSchemaVersion() { return static_cast<int>(kMigrations.size()); }

Result<int> ReadPgSchemaVersion(db::PgConnection& connection) {
  Result<db::PgResult> exists = connection.Query("SELECT to_regclass('settle_schema') IS NOT NULL");
  if (!exists) return exists.status();
  if (exists->Text(0, 0) != "t") return 0;
  Result<db::PgResult> version = connection.Query("SELECT version FROM settle_schema");
  if (!version) return version.status();
  if (version->rows() == 0) return 0;  // created, and nothing migrated yet
  if (version->rows() != 1) {
    return Status::Unavailable("postgresql: settle_schema has " + std::to_string(version->rows()) +
                               " rows, expected 1");
  }
  return static_cast<int>(version->Int(0, 0));
}

Status MigratePgSchema(db::PgConnection& connection) {
  return MigratePgSchema(connection, LatestPgSchemaVersion());
}

Status MigratePgSchema(db::PgConnection& connection, int target_version) {
  const int latest = LatestPgSchemaVersion();
  if (target_version < 1 || target_version > latest) {
    return Status::InvalidArgument("no postgresql schema version " +
                                   std::to_string(target_version));
  }
  for (;;) {
    if (Status s = connection.Run("BEGIN"); !s.ok()) return s;
    if (Status s = connection.Run(kMigrationLock); !s.ok()) return Failed(connection, 0, s);
    // Under the lock: another coordinator may have migrated while this one waited.
    Status s =
        connection.Run("CREATE TABLE IF NOT EXISTS settle_schema (version INTEGER NOT NULL)");
    Result<int> version = s.ok() ? ReadPgSchemaVersion(connection) : Result<int>(s);
    if (!version) return Failed(connection, 0, version.status());
    if (*version > latest) {
      connection.Run("ROLLBACK").IgnoreError();
      return Status::Unavailable("database schema version " + std::to_string(*version) +
                                 " is newer than this binary's version " + std::to_string(latest) +
                                 "; upgrade Settle to use it");
    }
    if (*version >= target_version) return connection.Run("COMMIT");
    const int next = *version + 1;
    s = connection.Run(kMigrations[next - 1]);
    if (s.ok() && *version == 0) s = connection.Run("INSERT INTO settle_schema VALUES (0)");
    if (s.ok()) {
      s = connection.Run("UPDATE settle_schema SET version = " + std::to_string(next));
    }
    if (s.ok()) s = connection.Run("COMMIT");
    if (!s.ok()) return Failed(connection, next, s);
  }
}

}  // namespace settle::storage
