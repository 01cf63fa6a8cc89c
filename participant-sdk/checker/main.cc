// settle-check: runs the barrier checks of docs/protocol.md §6.3 against a participant's branch
// URLs, or the Idempotency-Key checks against a service's entry point, and prints one line per
// check. Wiring only; see command_line.h, check_runner.h and entry_check_runner.h.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check_plan.h"
#include "check_report.h"
#include "check_runner.h"
#include "command_line.h"
#include "entry_check_runner.h"
#include "exit_codes.h"
#include "grpc_participant_client.h"
#include "http_participant_client.h"

using namespace settle::checker;

namespace {

// Runs every check of `runner` (a CheckRunner or an EntryCheckRunner), printing each verdict
// as it comes; returns the exit status.
template <typename Runner>
int RunChecks(Runner& runner, const SummaryLabels& labels) {
  if (settle::Status state = runner.ProbeState(); !state.ok()) {
    std::fprintf(stderr, "settle-check: %s\n", state.message().c_str());
    return kExitUsage;
  }
  std::vector<CheckOutcome> outcomes;
  for (std::size_t i = 0; i < runner.size(); ++i) {
    settle::Result<CheckOutcome> outcome = runner.Run(i);
    if (!outcome) {
      std::fflush(stdout);
      std::fprintf(stderr, "settle-check: %s\n", outcome.status().message().c_str());
      return kExitUsage;
    }
    std::printf("%s\n", FormatOutcome(*outcome).c_str());
    std::fflush(stdout);  // one line as each check ends, for a participant that is slow
    outcomes.push_back(std::move(*outcome));
  }
  std::fputs(FormatSummary(labels, outcomes).c_str(), stdout);
  return ExitCode(outcomes);
}

}  // namespace

int Run(int argc, char** argv) {
  CommandLine command_line = ParseCommandLine(argc, argv);
  if (command_line.exit_now) {
    std::fputs(command_line.output.c_str(), command_line.exit_code == 0 ? stdout : stderr);
    return command_line.exit_code;
  }
  const CheckerOptions& options = command_line.options;

  // Branches that are gRPC methods are called over gRPC; everything else over HTTP.
  const CheckerTls tls{options.ca_file, options.tls_client_cert, options.tls_client_key};
  // Never destroyed: the process ends with std::_Exit (main), gRPC's channels with it.
  GrpcParticipantClient& client =
      *new GrpcParticipantClient(std::make_unique<HttpParticipantClient>(
                                     options.headers, options.timeout, tls, options.signing_key),
                                 options.headers, options.timeout, tls, options.signing_key);
  if (!options.entry_url.empty()) {
    EntryCheckRunner runner(
        client, EntrySettings{options.entry_url, options.body, options.other_body,
                              options.other_body_derived, options.key_optional, options.concurrency,
                              options.state_url, RandomGidPrefix()});
    return RunChecks(runner, runner.Labels());
  }
  CheckPlan plan = options.trans_type == settle::TransType::kTcc ? TccPlan() : SagaPlan();
  if (options.signing_key) {
    for (Check& check : SignatureChecks(options.trans_type))
      plan.checks.push_back(std::move(check));
  }
  CheckRunner runner(client, RunSettings{std::move(plan), options.urls, options.body,
                                         options.state_url, RandomGidPrefix()});
  return RunChecks(runner, BranchSummaryLabels(options.trans_type, options.state_url.has_value(),
                                               runner.GidFor(0), runner.GidFor(runner.size() - 1)));
}

int main(int argc, char** argv) {
  const int status = Run(argc, argv);
  // Ends here, without destroying the gRPC channels (Run leaves its client) or running gRPC's
  // teardown at exit:
  // gRPC 1.51's own threads may still be finishing a call to a participant that refused the
  // connection, and racing them at exit now and then aborted on a refcount assertion after
  // every verdict was printed. Nothing is left to flush but stdio.
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}
