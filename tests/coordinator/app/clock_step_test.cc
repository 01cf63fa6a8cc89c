// One settled on SQLite whose host wall clock is stepped while a TCC waits for its
// timeout_to_fail: libfaketime (wall clock only) reads the offset from a file the test rewrites,
// as an NTP step or an operator's `date -s` would move the clock under a running process. The
// timeout must neither fire early (a step forward) nor freeze (a step back): settled's clock
// follows a step at 1% of the time passing.
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "file_text.h"
#include "final_status.h"
#include "json_client.h"
#include "participant_server.h"
#include "settled_process.h"
#include "temp_dir.h"

namespace settle {
namespace {

using nlohmann::json;
using Steady = std::chrono::steady_clock;

// Sets the wall-clock offset libfaketime gives the settled that reads `path`.
void SetFakeOffset(const std::string& path, const std::string& offset) {
  std::ofstream(path, std::ios::trunc) << offset << "\n";
}

struct SteppedSettled {
  SteppedSettled()
      : rc(dir.File("faketime.rc")),
        settled((SetFakeOffset(rc, "+0"), dir.File("settle.db")), {"--log-level", "info"}, 0, "",
                {"LD_PRELOAD=" SETTLE_LIBFAKETIME, "FAKETIME_TIMESTAMP_FILE=" + rc,
                 "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1"}),
        client(settled.port()) {}
  // SIGTERM, not the default SIGKILL: libfaketime removes its shared memory (/dev/shm) only when
  // the process exits.
  ~SteppedSettled() { settled.Terminate(); }

  // Prepares a TCC that times out after 3 s with one branch whose cancel goes to `p`.
  void PrepareTcc(const std::string& gid, const testing::ParticipantServer& p) {
    REQUIRE(client
                .PostJson("/api/settle/prepare",
                          json{{"gid", gid}, {"trans_type", "tcc"}, {"timeout_to_fail", 3}})
                .status == 200);
    REQUIRE(client
                .PostJson("/api/settle/registerBranch", json{{"gid", gid},
                                                             {"trans_type", "tcc"},
                                                             {"branch_id", "01"},
                                                             {"data", "{}"},
                                                             {"confirm", p.Url("/confirm")},
                                                             {"cancel", p.Url("/cancel")}})
                .status == 200);
  }
  // Something that runs the scheduler's due transactions at once: a forceStop (it schedules
  // the stopped transaction now, so that the scheduler forgets it).
  void Nudge() {
    REQUIRE(client.PostJson("/api/settle/prepare", json{{"gid", "nudge"}, {"trans_type", "tcc"}})
                .status == 200);
    REQUIRE(client.PostJson("/api/settle/forceStop", json{{"gid", "nudge"}}).status == 200);
  }

  testing::TempDir dir;
  std::string rc;
  testing::SettledProcess settled;
  testing::JsonClient client;
};

// Prepares a TCC that times out after 3 s, steps settled's wall clock by `offset` ("+3600")
// once the TCC is stored, waits until settled has seen the step (its log says `seen`), and makes
// its scheduler look at what is due. Returns how long after the prepare the participant got the
// TCC's cancel, and requires the TCC to end failed.
double SecondsUntilTimeoutAfterStep(const std::string& offset, const std::string& seen) {
  testing::ParticipantServer p;
  SteppedSettled s;
  const auto start = Steady::now();
  s.PrepareTcc("t1", p);
  SetFakeOffset(s.rc, offset);
  REQUIRE(testing::WaitForFileToContain(s.settled.log_path(), seen,
                                        Steady::now() + std::chrono::seconds(10)));
  s.Nudge();  // the scheduler looks at what is due: the TCC must not be, by settled's clock

  REQUIRE(p.WaitForCalls("/cancel", 1, std::chrono::seconds(20)));
  CHECK(testing::WaitForFinalStatus(s.client, "t1", Steady::now() + std::chrono::seconds(10)) ==
        "failed");
  return std::chrono::duration<double>(p.CallsTo("/cancel")[0].received_at - start).count();
}

TEST_CASE("a step of the wall clock an hour forward does not fire a TCC's timeout early",
          "[clock-step]") {
  const double after = SecondsUntilTimeoutAfterStep("+3600", "the system clock was set forward");
  CHECK(after >= 2.9);
  CHECK(after < 8.0);
}

TEST_CASE("a step of the wall clock an hour back does not freeze a TCC's timeout", "[clock-step]") {
  const double after = SecondsUntilTimeoutAfterStep("-3600", "the system clock was set back");
  CHECK(after >= 2.9);
  CHECK(after < 8.0);
}

}  // namespace
}  // namespace settle
