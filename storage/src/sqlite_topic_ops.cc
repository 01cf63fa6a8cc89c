#include "sqlite_topic_ops.h"

#include <string>

namespace settle::storage {
namespace {

// seq is left to AUTOINCREMENT: the new row comes after every row there is or was.
constexpr std::string_view kInsertSubscriber =
    "INSERT INTO topic_subscriber (topic, url, remark, create_time, creator) "
    "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (topic, url) DO NOTHING";

// The topic's owner: its oldest subscription's creator.
constexpr std::string_view kSelectTopicCreator =
    "SELECT creator FROM topic_subscriber WHERE topic = ?1 ORDER BY seq LIMIT 1";

constexpr std::string_view kDeleteSubscriber =
    "DELETE FROM topic_subscriber WHERE topic = ?1 AND url = ?2";

constexpr std::string_view kDeleteTopic = "DELETE FROM topic_subscriber WHERE topic = ?1";

}  // namespace

Status ApplyTopicOp(db::SqliteConnection& c, const Subscribe& op) {
  Result<db::SqliteStatement> stmt = c.Prepare(kInsertSubscriber);
  if (!stmt) return stmt.status();
  stmt->BindText(1, op.topic)
      .BindText(2, op.subscriber.url)
      .BindText(3, op.subscriber.remark)
      .BindInt64(4, ToUnixMillis(op.subscriber.create_time))
      .BindText(5, op.subscriber.creator);
  if (Status s = stmt->Run(); !s.ok()) return s;
  if (c.Changes() == 1) return Status::Ok();
  return Status::AlreadyExists("url " + op.subscriber.url + " already subscribes to topic " +
                               op.topic);
}

Status ApplyTopicOp(db::SqliteConnection& c, const Unsubscribe& op) {
  Result<db::SqliteStatement> stmt = c.Prepare(kDeleteSubscriber);
  if (!stmt) return stmt.status();
  stmt->BindText(1, op.topic).BindText(2, op.url);
  if (Status s = stmt->Run(); !s.ok()) return s;
  if (c.Changes() == 1) return Status::Ok();
  return Status::NotFound("url " + op.url + " does not subscribe to topic " + op.topic);
}

Status ApplyTopicOp(db::SqliteConnection& c, const ExpectTopicCreator& op) {
  Result<db::SqliteStatement> stmt = c.Prepare(kSelectTopicCreator);
  if (!stmt) return stmt.status();
  stmt->BindText(1, op.topic);
  Result<bool> row = stmt->Step();
  if (!row) return row.status();
  if (!*row) return Status::Ok();
  const std::string stored = stmt->ColumnBytes(0);
  if (stored.empty() || stored == op.creator) return Status::Ok();
  return Status::Conflict("topic " + op.topic + " belongs to another client");
}

Status ApplyTopicOp(db::SqliteConnection& c, const DeleteTopic& op) {
  Result<db::SqliteStatement> stmt = c.Prepare(kDeleteTopic);
  if (!stmt) return stmt.status();
  stmt->BindText(1, op.topic);
  if (Status s = stmt->Run(); !s.ok()) return s;
  if (c.Changes() > 0) return Status::Ok();
  return Status::NotFound("topic " + op.topic + " not found");
}

}  // namespace settle::storage
