// The coordinator's storage fails for real: settled's database lives on a small filesystem
// that fills up. Requests answer 503, nothing is half-written, and service comes back when
// space returns.
#include <sys/mount.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "eventually.h"
#include "fault_world.h"
#include "file_text.h"
#include "json_client.h"

namespace settle::testing {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A size-limited tmpfs for the test's lifetime.
class SmallFilesystem {
 public:
  SmallFilesystem(const std::string& where, const std::string& size) : path_(where) {
    std::filesystem::create_directories(path_);
    mounted_ = mount("settle-test", path_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    error_ = mounted_ ? 0 : errno;
  }
  ~SmallFilesystem() {
    if (mounted_) umount2(path_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  int error() const { return error_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

  // Fills the filesystem with a ballast file until no byte is left.
  void Fill() {
    std::ofstream ballast(File("ballast"), std::ios::binary);
    const std::string chunk(64 * 1024, 'x');
    while (ballast.write(chunk.data(), static_cast<std::streamsize>(chunk.size()))) {
    }
  }
  void Free() { std::filesystem::remove(File("ballast")); }

 private:
  std::string path_;
  bool mounted_ = false;
  int error_ = 0;
};

TEST_CASE(
    "when settled's disk is full, requests answer 503, nothing is half-written, and "
    "service returns with the space",
    "[fault][storage]") {
  TempDir dir;
  SmallFilesystem disk(dir.File("small"), "4m");
  if (!disk.mounted() && disk.error() == EPERM) {
    WARN(
        "this machine does not allow mounting a tmpfs (EPERM); the in-process storage "
        "failure tests cover 503 instead");
    return;
  }
  REQUIRE(disk.mounted());
  WorldOptions options;
  options.settled_db = disk.File("settle.db");
  // The log elsewhere, as journald keeps it: it must say when commits start and stop failing.
  options.settled_log = dir.File("settled.log");
  {
    FaultWorld w(options);
    sdk::TransOptions wait;
    wait.wait_result = true;
    REQUIRE(w.Run({.tcc = false, .amount = 5}, wait)->status == GlobalStatus::kSucceed);

    disk.Fill();
    JsonClient http(w.settled().port());
    const auto prepare =
        http.PostJson("/api/settle/prepare", {{"gid", "while-full"}, {"trans_type", "tcc"}});
    CHECK(prepare.status == 503);
    CHECK_THAT(prepare.json["message"].get<std::string>(), Catch::Contains("full"));
    const std::string gid = w.NewGid();
    auto refused = w.Run({.gid = gid, .tcc = false, .amount = 7}, wait);
    REQUIRE_FALSE(refused);
    CHECK(refused.status().code() == StatusCode::kUnavailable);
    // Nothing of either request was stored, and reads still work.
    CHECK_FALSE(w.StatusOf("while-full"));
    CHECK_FALSE(w.StatusOf(gid));
    CHECK(http.Get("/api/ping").status == 200);
    // Said once, with the cause, however many requests fail.
    CHECK(Eventually(
        [&] { return Contains(ReadFile(dir.File("settled.log")), "the store's commits fail: "); }));
    CHECK_THAT(ReadFile(dir.File("settled.log")), Catch::Contains("full"));

    disk.Free();
    auto retried = w.Run({.gid = gid, .tcc = false, .amount = 7}, wait);
    REQUIRE(retried);
    CHECK(retried->status == GlobalStatus::kSucceed);
    CHECK(http.PostJson("/api/settle/prepare", {{"gid", "while-full"}, {"trans_type", "tcc"}})
              .status == 200);
    CHECK(
        http.PostJson("/api/settle/abort", {{"gid", "while-full"}, {"trans_type", "tcc"}}).status ==
        200);
    w.CheckInvariants();
    CHECK(Eventually([&] {
      return Contains(ReadFile(dir.File("settled.log")), "the store's commits work again, after ");
    }));
    const std::string log = ReadFile(dir.File("settled.log"));
    std::size_t told = 0;
    for (std::size_t at = log.find("the store's commits fail: "); at != std::string::npos;
         at = log.find("the store's commits fail: ", at + 1)) {
      ++told;
    }
    CHECK(told == 1);
  }
}

}  // namespace
}  // namespace settle::testing
