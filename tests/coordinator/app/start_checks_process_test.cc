// What settled checks when it starts, before it creates or opens its database: its files and
// flags, its ports (both bound exclusively), and the database itself. A refusal is the first
// thing it says, and its exit code tells a supervisor whether starting again can help.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "file_text.h"
#include "json_client.h"
#include "settled_process.h"
#include "temp_dir.h"
#include "test_ca.h"

namespace settle {
namespace {

using testing::ChildProcess;
using testing::JsonClient;
using testing::ReadFile;
using testing::SettledProcess;

// settled run with `args` until it exits; its exit code (-1 if it did not exit by itself).
int ExitCodeOf(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {SettledProcess::BinaryPath(), "--host", "127.0.0.1"};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess settled(argv, log);
  const int status = settled.Wait(std::chrono::seconds(20));
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The first line of a log that is not the build's or the descriptors' announcement.
std::string FirstWord(const std::string& log) {
  std::size_t start = 0;
  while (start < log.size()) {
    const std::size_t end = log.find('\n', start);
    const std::string line = log.substr(start, end - start);
    if (line.find(" starting") == std::string::npos &&
        line.find("descriptors:") == std::string::npos) {
      return line;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

TEST_CASE("a second settled on the gRPC port of another refuses to start, and creates no database",
          "[process][start]") {
  testing::TempDir dir;
  testing::SettledWithGrpc first(dir.File("first.db"), {}, dir.File("first"));
  const std::string second_db = dir.File("second.db");
  const int code = ExitCodeOf(
      {"--port", "0", "--grpc-port", std::to_string(first.grpc_port), "--store", second_db},
      dir.File("second.log"));
  const std::string log = ReadFile(dir.File("second.log"));
  INFO(log);
  // Another instance may be stopping: a supervisor may try again.
  CHECK(code == 1);
  CHECK_THAT(FirstWord(log), Catch::Contains("cannot start: --grpc-port: cannot listen on "
                                             "127.0.0.1:" +
                                             std::to_string(first.grpc_port)) &&
                                 Catch::Contains("in use"));
  CHECK_FALSE(std::filesystem::exists(second_db));
  CHECK_THAT(log, !Catch::Contains("listening"));
  // The first one still serves its gRPC port and its API.
  CHECK(JsonClient(first.process->port()).Get("/api/ping").status == 200);
}

TEST_CASE("a settled on the HTTP port of another refuses to start, and creates no database",
          "[process][start]") {
  testing::TempDir dir;
  SettledProcess first(dir.File("first.db"));
  const std::string second_db = dir.File("second.db");
  const int code =
      ExitCodeOf({"--port", std::to_string(first.port()), "--grpc-port", "0", "--store", second_db},
                 dir.File("second.log"));
  const std::string log = ReadFile(dir.File("second.log"));
  INFO(log);
  CHECK(code == 1);
  CHECK_THAT(FirstWord(log), Catch::Contains("cannot start: --port: cannot listen on"));
  CHECK_FALSE(std::filesystem::exists(second_db));
}

TEST_CASE(
    "a TLS key that is not the certificate's stops settled with exit code 2 before it creates "
    "its database, the cause said first",
    "[process][start][tls]") {
  testing::TempDir dir;
  testing::TestCa ca(dir.path());
  const testing::TestCa::Issued server = ca.IssueForLocalhost();
  const testing::TestCa::Issued other = ca.IssueClient("other", "/CN=other");
  const std::string db = dir.File("settle.db");
  const int code = ExitCodeOf({"--port", "0", "--grpc-port", "0", "--store", db, "--tls-cert",
                               server.cert_file, "--tls-key", other.key_file},
                              dir.File("settled.log"));
  const std::string log = ReadFile(dir.File("settled.log"));
  INFO(log);
  CHECK(code == 2);
  CHECK_THAT(log, Catch::StartsWith("--tls-cert/--tls-key: TLS key '" + other.key_file +
                                    "' does not match certificate"));
  CHECK_THAT(log, !Catch::Contains("closing the database"));
  CHECK_FALSE(std::filesystem::exists(db));
}

TEST_CASE(
    "a damaged database is refused by name with exit code 2, and a backup put in its place "
    "starts",
    "[process][start][backup]") {
  testing::TempDir dir;
  const std::string db = dir.File("settle.db");
  constexpr int kTransactions = 300;
  {
    SettledProcess settled(db);
    JsonClient client(settled.port());
    for (int i = 0; i < kTransactions; ++i) {
      const nlohmann::json body = {{"gid", "order-" + std::to_string(i)},
                                   {"trans_type", "tcc"},
                                   {"custom_data", std::string(200, 'x')}};
      REQUIRE(client.PostJson("/api/settle/prepare", body).status == 200);
    }
    REQUIRE(settled.Terminate() == 0);
  }
  // The cold copy an operator keeps (scripts/backup makes one while settled runs).
  std::filesystem::copy_file(db, dir.File("backup.db"));
  // One page in the middle of the file overwritten, as a failing disk or a stray write does.
  const auto size = std::filesystem::file_size(db);
  constexpr std::uintmax_t kPage = 4096;
  REQUIRE(size >= 8 * kPage);
  {
    std::fstream file(db, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>((size / kPage / 2) * kPage));
    const std::string junk(kPage, '\x5a');
    file.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const int code =
      ExitCodeOf({"--port", "0", "--grpc-port", "0", "--store", db}, dir.File("damaged.log"));
  const std::string log = ReadFile(dir.File("damaged.log"));
  INFO(log);
  CHECK(code == 2);
  CHECK_THAT(FirstWord(log),
             Catch::Contains("cannot start: the database '" + db + "' is damaged (") &&
                 Catch::Contains("restore it from a backup"));

  // The restore operations.md describes: the damaged file moved away, the backup in its place.
  std::filesystem::rename(db, dir.File("settle.db.damaged"));
  std::filesystem::copy_file(dir.File("backup.db"), db);
  SettledProcess restored(db);
  const auto found = JsonClient(restored.port())
                         .Get("/api/settle/query?gid=order-" + std::to_string(kTransactions - 1));
  CHECK(found.status == 200);
}

}  // namespace
}  // namespace settle
