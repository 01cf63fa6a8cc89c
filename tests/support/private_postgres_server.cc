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

PrivatePostgresServer::~PrivatePostgresServer() { Script("stop"); }

void PrivatePostgresServer::Crash() { Run("crash"); }

void PrivatePostgresServer::Restart() { Run("restart"); }

void PrivatePostgresServer::Run(const std::string& action) const {
  if (!Script(action)) throw std::runtime_error("postgres-test-server " + action + " failed");
}

bool PrivatePostgresServer::Script(const std::string& action) const {
  const std::string command = std::string("bash ") + POSTGRES_TEST_SERVER_SCRIPT + " " + action +
                              " '" + state_.path().string() + "' >/dev/null";
  return std::system(command.c_str()) == 0;
}

}  // namespace settle::testing
