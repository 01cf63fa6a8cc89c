// The options of --help's "Several settled on one PostgreSQL" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

namespace settle::app {

void AddClusterOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kCluster);
  app.add_option("--instance-id", c.lease.instance_id,
                 "With a postgresql:// store: this instance's name among those sharing it "
                 "(default: <hostname>-<pid>); a restart under the same name takes its "
                 "transactions back at once");
  AddDurationOptions(app, text.durations, kCluster);
}

}  // namespace settle::app
