#include "key_files.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace settle::testing {
namespace {

void Run(const std::string& command) {
  const std::string quiet = command + " 2>/dev/null";
  if (std::system(quiet.c_str()) != 0) throw std::runtime_error("failed: " + command);
}

std::string Quoted(const std::string& path) { return "'" + path + "'"; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string WithoutBlanks(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') out += c;
  }
  return out;
}

// The lines of a PEM file between its -----BEGIN and -----END lines, as someone who cut them
// off would have it.
std::string PemBody(const std::string& pem) {
  std::istringstream lines(pem);
  std::string body;
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("-----")) body += line + "\n";
  }
  return body;
}

}  // namespace

Ed25519KeyFiles WriteEd25519KeyFiles(const std::string& dir, const std::string& stem) {
  Ed25519KeyFiles files{.private_key = dir + "/" + stem + ".pem",
                        .public_key = dir + "/" + stem + ".pub"};
  Run("openssl genpkey -algorithm ed25519 -out " + Quoted(files.private_key));
  Run("openssl pkey -in " + Quoted(files.private_key) + " -pubout -out " +
      Quoted(files.public_key));
  return files;
}

std::string WriteHmacKeyFile(const std::string& dir, const std::string& name, int bytes) {
  const std::string path = dir + "/" + name;
  Run("echo \"hmac:$(openssl rand -base64 " + std::to_string(bytes) + ")\" > " + Quoted(path));
  return path;
}

std::vector<RefusedKeyFile> WriteRefusedKeyFiles(const std::string& dir) {
  std::vector<RefusedKeyFile> refused;
  // Writes `bytes` as the file `name`; `material` is what of them no refusal may quote.
  const auto add = [&](std::string form, const std::string& name, const std::string& bytes,
                       std::string because, const std::string& material) {
    const std::string path = dir + "/" + name;
    WriteAll(path, bytes);
    refused.push_back({.form = std::move(form),
                       .path = path,
                       .because = std::move(because),
                       .material = WithoutBlanks(material)});
  };

  Run("openssl rand -base64 32 > " + Quoted(dir + "/bare.key"));
  const std::string bare = ReadAll(dir + "/bare.key");
  add("bare base64 of 32 bytes", "bare.key", bare, "the file holds bare base64", bare);

  const Ed25519KeyFiles pair = WriteEd25519KeyFiles(dir, "refused-ed25519");
  const std::string public_body = PemBody(ReadAll(pair.public_key));
  const std::string private_body = PemBody(ReadAll(pair.private_key));
  add("an Ed25519 public key's base64 body without its -----BEGIN/-----END lines",
      "public-body.key", public_body,
      "the file holds the base64 body of an Ed25519 public key without its -----BEGIN PUBLIC "
      "KEY----- and -----END PUBLIC KEY----- lines",
      public_body);
  add("an Ed25519 private key's base64 body without its -----BEGIN/-----END lines",
      "private-body.key", private_body, "the file holds the base64 body of an Ed25519 private key",
      private_body);

  Run("echo \"hmac:$(openssl rand -base64 31)\" > " + Quoted(dir + "/short.key"));
  const std::string short_secret = ReadAll(dir + "/short.key");
  add("hmac: with a 31-byte secret", "short.key", short_secret,
      "the secret after hmac: is 31 bytes, fewer than the 32 needed", short_secret.substr(5));
  const std::string not_base64 = "this-is-a-long-secret-but*not*base64*at*all!!";
  add("hmac: with text that is not base64", "not-base64.key", "hmac:" + not_base64 + "\n",
      "the secret after hmac: is not base64", not_base64);
  add("hmac: with nothing after it", "hmac-only.key", "hmac:\n", "no secret follows hmac:", "");
  add("hmac: with an Ed25519 public key's base64 body", "hmac-public.key",
      "hmac:" + WithoutBlanks(public_body) + "\n",
      "the secret after hmac: is the base64 body of an Ed25519 key", public_body);

  Run("openssl req -x509 -newkey ed25519 -nodes -keyout " + Quoted(dir + "/cert-key.pem") +
      " -out " + Quoted(dir + "/cert.pem") + " -subj /CN=settle-test -days 1");
  const std::string certificate = ReadAll(dir + "/cert.pem");
  add("a PEM certificate", "certificate.key", certificate,
      "the PEM block is labelled CERTIFICATE, not PRIVATE KEY or PUBLIC KEY", PemBody(certificate));

  Run("openssl genpkey -algorithm ed25519 -aes-256-cbc -pass pass:secret-pass -out " +
      Quoted(dir + "/encrypted.pem"));
  const std::string encrypted = ReadAll(dir + "/encrypted.pem");
  add("an encrypted Ed25519 private key", "encrypted.key", encrypted,
      "the PEM block is an encrypted private key", PemBody(encrypted));

  Run("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " +
      Quoted(dir + "/ec.pem"));
  const std::string ec = ReadAll(dir + "/ec.pem");
  add("an EC private key", "ec.key", ec, "the PEM key is not an Ed25519 key", PemBody(ec));

  // The -----BEGIN line and half the key's line: no -----END line.
  const std::string private_pem = ReadAll(pair.private_key);
  const std::string cut = private_pem.substr(0, private_pem.find('\n') + 33);
  add("a PEM private key cut short", "truncated.key", cut,
      "the PEM private key cannot be read (damaged or cut short)", PemBody(cut));

  add("an empty file", "empty.key", "", "the file is empty", "");
  add("binary junk", "junk.key", std::string("\x00\x01\xfe\xff\x7f\x80junk\x00", 11),
      "the file is neither a PEM key nor a shared secret declared with hmac:", "");

  refused.push_back({.form = "an Ed25519 public key in PEM",
                     .path = pair.public_key,
                     .because = "the PEM block is a public key, which cannot sign",
                     .refused_to_signer_only = true});
  return refused;
}

}  // namespace settle::testing
