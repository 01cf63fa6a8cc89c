// The options of --help's "Signing" group (option_groups.h).
#include "option_groups.h"

#include <CLI/CLI.hpp>

namespace settle::app {

void AddSigningOptions(CLI::App& app, ServerConfig& c, ParsedText& text) {
  app.option_defaults()->group(kSigning);
  app.add_option("--signing-key", text.signing_key_file,
                 "Sign every call to a participant with this key (RFC 9421; docs/protocol.md "
                 "4.9): an Ed25519 private key in PEM (openssl genpkey -algorithm ed25519) or an "
                 "HMAC-SHA256 secret declared as such, hmac:<base64> (echo \"hmac:$(openssl rand "
                 "-base64 32)\"); any other file is refused")
      ->envname("SETTLE_SIGNING_KEY")
      ->check(CLI::ExistingFile);
  app.add_flag("--unsigned-authority", c.unsigned_authority,
               "With --signing-key: leave the Host (@authority; over gRPC the :authority) out "
               "of the signature, for participants behind a proxy that rewrites it");
}

}  // namespace settle::app
