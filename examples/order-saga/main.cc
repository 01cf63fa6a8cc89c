// order-saga: an order -> inventory -> payment saga, run against a Settle coordinator by three
// small participant services started in this process. It prints each branch call as a service
// receives it, the saga's outcome, and what each service is left with. --fail-payment makes
// the payment service decline the card, to show the compensations running in reverse order.
// Exit code: 0 when the saga ends as asked (succeed, or failed with --fail-payment), 1
// otherwise, 2 for bad arguments or a coordinator that cannot be reached.
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "shop.h"

using namespace settle;
using namespace settle::order_saga;

namespace {

// The --data-dir, or else a fresh temporary directory that is removed with this object.
class DataDir {
 public:
  explicit DataDir(std::filesystem::path path) : path_(std::move(path)) {
    std::error_code ignored;
    if (!path_.empty()) {
      std::filesystem::create_directories(path_, ignored);
      return;
    }
    std::string pattern = std::filesystem::temp_directory_path(ignored) / "order-saga-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = temporary_ = pattern;
  }
  ~DataDir() {
    std::error_code ignored;
    if (!temporary_.empty()) std::filesystem::remove_all(temporary_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::filesystem::path temporary_;
};

int Fail(const char* what, const Status& status, int exit_code) {
  std::fprintf(stderr, "order-saga: %s: %s\n", what, status.ToString().c_str());
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  std::string coordinator;
  bool fail_payment = false;
  std::int64_t quantity = 2;
  std::string data_dir;
  CLI::App app{"order-saga: an order -> inventory -> payment saga with compensations"};
  app.add_option("--coordinator", coordinator,
                 "The coordinator's API base, e.g. http://127.0.0.1:36789/api/settle")
      ->required();
  app.add_flag("--fail-payment", fail_payment, "The payment service declines the card");
  app.add_option("--quantity", quantity, "Widgets to order (10 in stock)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}))
      ->capture_default_str();
  app.add_option("--data-dir", data_dir,
                 "Where the services keep their databases (default: a temporary directory)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  DataDir dir(data_dir);  // outlives the shop, whose databases it holds
  if (dir.path().empty()) return Fail("data dir", Status::Unavailable("cannot create one"), 2);
  CallLog log(stdout);
  ShopOptions options;
  options.data_dir = dir.path();
  options.decline_cards = fail_payment;
  auto shop = Shop::Start(options, log);
  if (!shop) return Fail("starting the services", shop.status(), 2);
  auto client = sdk::Client::Create(coordinator);
  if (!client) return Fail("--coordinator", client.status(), 2);
  auto gid = (*client)->NewGid();
  if (!gid)
    return Fail(("cannot reach the coordinator at " + coordinator).c_str(), gid.status(), 2);

  const Order order = (*shop)->NewOrder(*gid, quantity);
  std::printf("saga %s: order %lld x %s for %lld%s\n", gid->c_str(),
              static_cast<long long>(order.quantity), order.item.c_str(),
              static_cast<long long>(order.amount),
              fail_payment ? " (the card will be declined)" : "");
  std::fflush(stdout);
  auto outcome = (*shop)->PlaceOrder(**client, order);
  if (!outcome) {
    return Fail("submitting the saga", outcome.status(),
                outcome.status().code() == StatusCode::kUnavailable ? 2 : 1);
  }
  const std::string status(ToString(outcome->status));
  std::printf("saga %s: %s%s%s\n", gid->c_str(), status.c_str(),
              outcome->reason.empty() ? "" : ": ", outcome->reason.c_str());

  auto order_status = (*shop)->orders().StatusOf(order.order_id);
  auto stock = (*shop)->inventory().Stock(order.item);
  auto payment = (*shop)->payments().StatusOf(order.order_id);
  if (!order_status || !stock || !payment)
    return Fail("reading the state", Status::Unavailable("a database failed"), 1);
  std::printf("order service:     order %s %s\n", order.order_id.c_str(), order_status->c_str());
  std::printf("inventory service: %lld %s in stock\n", static_cast<long long>(*stock),
              order.item.c_str());
  std::printf("payment service:   order %s %s\n", order.order_id.c_str(), payment->c_str());
  std::fflush(stdout);

  const GlobalStatus expected = fail_payment ? GlobalStatus::kFailed : GlobalStatus::kSucceed;
  return outcome->status == expected ? 0 : 1;
}
