// The options of --help's "Alerts" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

namespace settle::app {

void AddAlertsOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kAlerts);
  app.add_option("--alert-webhook", c.alert_webhook,
                 "http:// or https:// URL to POST a JSON alert to when a transaction becomes "
                 "stuck");
  app.add_option("--alerts-per-creator", c.alerts_per_creator,
                 "Alerts about one creator's transactions (stuck, parked, gave up) the webhook "
                 "gets per minute; the rest are held back and counted in the next (0: no limit)")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
}

}  // namespace settle::app
