#pragma once

#include <string>
#include <vector>

namespace settle::testing {

// Key files for signed calls (docs/protocol.md §4.9) made in `dir` with the `openssl` command
// as docs/operations.md tells an operator to, and the forms a key file must not take. Each
// function throws std::runtime_error if a command fails.

// `openssl genpkey -algorithm ed25519 -out <dir>/<stem>.pem` and its public half, `openssl
// pkey -pubout`, in <dir>/<stem>.pub.
struct Ed25519KeyFiles {
  std::string private_key;
  std::string public_key;
};
Ed25519KeyFiles WriteEd25519KeyFiles(const std::string& dir, const std::string& stem);

// A shared secret as a key file declares it: `echo "hmac:$(openssl rand -base64 <bytes>)" >
// <dir>/<name>` (the base64 of more than 48 bytes is wrapped over lines by openssl).
std::string WriteHmacKeyFile(const std::string& dir, const std::string& name, int bytes = 32);

// A key file in a form that must be refused when it is read, and what the refusal says.
struct RefusedKeyFile {
  std::string form;     // what it is, for a test's INFO: "bare base64 of 32 bytes"
  std::string path;     // in `dir`
  std::string because;  // words the refusal's reason contains
  // The file's secret or key body without blanks, of which no refusal may quote any part;
  // "" when there is none.
  std::string material;
  // A public key: refused where a private key is needed, accepted by a verifier.
  bool refused_to_signer_only = false;
};

// One file of each refused form, written in `dir`: bare base64 (a secret that does not say it
// is one), an Ed25519 public key's base64 body without its -----BEGIN/-----END lines (read as
// a secret, everyone holding the public key would know it), a private key's body so, "hmac:"
// with a 31-byte secret, with text that is not base64, with nothing, with a public key's body
// (a public key declared a secret is no secret either), a PEM certificate, an
// encrypted private key, an EC private key, a PEM private key cut short, an empty file,
// binary junk, and an Ed25519 public key (refused to a signer only).
std::vector<RefusedKeyFile> WriteRefusedKeyFiles(const std::string& dir);

}  // namespace settle::testing
