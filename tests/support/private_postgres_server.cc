#include "private_postgres_server.h"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace settle::testing {

PrivatePostgresServer::PrivatePostgresServer() {
  Run("start");
  std::ifstream in(state_.File("conninfo"));
  std::getline(in, conninfo_);
  if (conninfo_.empty()) throw std::runtime_error("postgres-test-server wrote no conninfo");
}

PrivatePostgresServer::~PrivatePostgresServer() {
  const std::string command = std::string("bash ") + POSTGRES_TEST_SERVER_SCRIPT + " stop '" +
                              state_.path().string() + "' >/dev/null 2>&1";
  [[maybe_unused]] const int ignored = std::system(command.c_str());
}

void PrivatePostgresServer::Crash() { Run("crash"); }

void PrivatePostgresServer::Restart() { Run("restart"); }

void PrivatePostgresServer::Run(const std::string& action) const {
  const std::string command = std::string("bash ") + POSTGRES_TEST_SERVER_SCRIPT + " " + action +
                              " '" + state_.path().string() + "' >/dev/null";
  if (std::system(command.c_str()) != 0) {
    throw std::runtime_error("postgres-test-server " + action + " failed");
  }
}

}  // namespace settle::testing
