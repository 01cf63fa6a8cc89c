// Barrier::Cleanup deletes rows older than the retention, a batch per short transaction, so
// that the barrier table does not grow forever and never holds the write lock for long.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "eventually.h"
#include "fake_clock.h"
#include "settle/sdk/barrier.h"
#include "settle/sdk/barrier_cleaner.h"
#include "settle/sdk/sqlite_barrier_store.h"
#include "temp_dir.h"

namespace settle::sdk {
namespace {

using settle::testing::FakeClock;
using settle::testing::TempDir;

// Passes everything to a real store and records what each DeleteCreatedBefore returned.
class RecordingStore final : public BarrierStore {
 public:
  explicit RecordingStore(BarrierStore& inner) : inner_(inner) {}

  Status fail_deletes = Status::Ok();

  Result<std::unique_ptr<BarrierTransaction>> Begin() override { return inner_.Begin(); }
  Result<std::size_t> DeleteCreatedBefore(TimePoint cutoff, std::size_t limit) override {
    if (!fail_deletes.ok()) return fail_deletes;
    Result<std::size_t> deleted = inner_.DeleteCreatedBefore(cutoff, limit);
    std::lock_guard lock(mu_);
    if (deleted) deletes_.push_back(*deleted);
    return deleted;
  }

  // What each delete transaction so far deleted, in order (the cleaner runs on its own thread).
  std::vector<std::size_t> Deletes() const {
    std::lock_guard lock(mu_);
    return deletes_;
  }

 private:
  BarrierStore& inner_;
  mutable std::mutex mu_;
  std::vector<std::size_t> deletes_;
};

std::unique_ptr<SqliteBarrierStore> MustOpen(const std::string& path) {
  Result<std::unique_ptr<SqliteBarrierStore>> opened = SqliteBarrierStore::Open(path);
  INFO(opened.status().ToString());
  REQUIRE(opened);
  return std::move(opened).value();
}

struct Fixture {
  // `count` rows for distinct branches of `gid`, created now, in one transaction.
  void AddRows(const std::string& gid, int count) {
    Result<std::unique_ptr<BarrierTransaction>> tx = sqlite->Begin();
    REQUIRE(tx);
    for (int i = 0; i < count; ++i) {
      Result<bool> inserted =
          (*tx)->InsertIfAbsent({"tcc", gid, std::to_string(i), "try", "01", "try", clock.Now()});
      REQUIRE(inserted);
      REQUIRE(*inserted);
    }
    REQUIRE((*tx)->Commit().ok());
  }

  bool HasRow(const std::string& gid, int branch) {
    Result<std::unique_ptr<BarrierTransaction>> tx = sqlite->Begin();
    REQUIRE(tx);
    Result<std::optional<std::string>> reason =
        (*tx)->ReasonOf(gid, std::to_string(branch), "try", "01");
    REQUIRE(reason);
    return reason->has_value();
  }

  TempDir dir;
  std::unique_ptr<SqliteBarrierStore> sqlite = MustOpen(dir.File("barrier.db"));
  FakeClock clock;
  RecordingStore store{*sqlite};
  Barrier barrier{store, clock};
};

constexpr Duration kRetention = std::chrono::hours(24 * 7);

TEST_CASE("cleanup deletes rows older than the retention in batches and keeps newer ones",
          "[barrier][cleanup]") {
  Fixture f;
  f.AddRows("old", 2500);
  f.clock.Advance(kRetention);
  f.AddRows("new", 10);
  f.clock.Advance(Duration(1));  // "old" is now older than the retention; "new" is not

  Result<std::size_t> deleted = f.barrier.Cleanup(kRetention, 1000);
  REQUIRE(deleted);
  CHECK(*deleted == 2500);
  CHECK(f.store.Deletes() == std::vector<std::size_t>{1000, 1000, 500});
  CHECK_FALSE(f.HasRow("old", 0));
  CHECK_FALSE(f.HasRow("old", 2499));
  CHECK(f.HasRow("new", 0));
  CHECK(f.HasRow("new", 9));

  SECTION("a second cleanup finds nothing more to delete") {
    Result<std::size_t> again = f.barrier.Cleanup(kRetention, 1000);
    REQUIRE(again);
    CHECK(*again == 0);
  }
}

TEST_CASE("cleanup keeps a row created exactly at the cutoff", "[barrier][cleanup]") {
  Fixture f;
  f.AddRows("edge", 1);
  f.clock.Advance(kRetention);
  Result<std::size_t> deleted = f.barrier.Cleanup(kRetention);
  REQUIRE(deleted);
  CHECK(*deleted == 0);
  CHECK(f.HasRow("edge", 0));
}

TEST_CASE("cleanup stops after a batch that was not full", "[barrier][cleanup]") {
  Fixture f;
  f.AddRows("old", 2000);
  f.clock.Advance(kRetention + Duration(1));
  Result<std::size_t> deleted = f.barrier.Cleanup(kRetention, 1000);
  REQUIRE(deleted);
  CHECK(*deleted == 2000);
  CHECK(f.store.Deletes() == std::vector<std::size_t>{1000, 1000, 0});
}

TEST_CASE("cleanup refuses a batch size of 0 and a negative retention", "[barrier][cleanup]") {
  Fixture f;
  CHECK(f.barrier.Cleanup(kRetention, 0).status().code() == StatusCode::kInvalidArgument);
  CHECK(f.barrier.Cleanup(Duration(-1)).status().code() == StatusCode::kInvalidArgument);
  CHECK(f.store.Deletes().empty());
}

TEST_CASE("cleanup passes a store error on", "[barrier][cleanup]") {
  Fixture f;
  f.store.fail_deletes = Status::Unavailable("locked");
  Result<std::size_t> deleted = f.barrier.Cleanup(kRetention);
  CHECK(deleted.status().code() == StatusCode::kUnavailable);
  CHECK(deleted.status().message() == "locked");
}

TEST_CASE("the background cleaner cleans at start and every interval, until stopped",
          "[barrier][cleanup]") {
  Fixture f;
  f.AddRows("old", 30);
  f.clock.Advance(kRetention + Duration(1));
  BarrierCleaner cleaner(f.barrier,
                         {.retention = kRetention, .batch_size = 20, .interval = Duration(20)});

  // Both waits share these 10 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto wait_for = [&deadline](auto done) {
    return settle::testing::Eventually(
        done,
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()),
        std::chrono::milliseconds(5));
  };
  cleaner.Start();
  REQUIRE(wait_for([&] { return cleaner.deleted() >= 30; }));
  f.AddRows("later", 5);  // created at the fake "now": young, so kept by the next rounds
  // Two more delete transactions: at least one began after the young rows were added.
  const std::size_t before = f.store.Deletes().size();
  REQUIRE(wait_for([&] { return f.store.Deletes().size() >= before + 2; }));
  cleaner.Stop();

  CHECK(cleaner.deleted() == 30);
  CHECK_FALSE(f.HasRow("old", 29));
  CHECK(f.HasRow("later", 4));
  // Several rounds ran (the first deleted 20 + 10), each ending with a short batch.
  const std::vector<std::size_t> deletes = f.store.Deletes();
  CHECK(deletes.size() >= 3);
  CHECK(deletes[0] == 20);
  CHECK(deletes[1] == 10);
}

}  // namespace
}  // namespace settle::sdk
