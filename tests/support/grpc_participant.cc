#include "grpc_participant.h"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <deque>
#include <fstream>
#include <sstream>

#include "eventually.h"

namespace settle::testing {

struct GrpcParticipant::Impl {
  mutable std::mutex mu;
  std::vector<GrpcCall> calls;
  std::map<std::string, std::deque<GrpcAnswer>> scripts;
  std::map<std::string, GrpcAnswer> defaults;
  int port = 0;
  std::unique_ptr<grpc::CallbackGenericService> service;
  std::unique_ptr<grpc::Server> server;

  GrpcAnswer Record(GrpcCall call) {
    std::lock_guard lock(mu);
    GrpcAnswer answer;
    auto script = scripts.find(call.method);
    if (script != scripts.end() && !script->second.empty()) {
      answer = script->second.front();
      script->second.pop_front();
    } else if (auto d = defaults.find(call.method); d != defaults.end()) {
      answer = d->second;
    }
    calls.push_back(std::move(call));
    return answer;
  }
};

namespace {

class Reactor final : public grpc::ServerGenericBidiReactor {
 public:
  Reactor(grpc::GenericCallbackServerContext* context, GrpcParticipant::Impl& owner)
      : context_(context), owner_(owner) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::INTERNAL, "no request message"));
      return;
    }
    GrpcCall call;
    call.method = context_->method();
    std::vector<grpc::Slice> slices;
    if (request_.Dump(&slices).ok()) {
      for (const grpc::Slice& s : slices) {
        call.body.append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
    }
    for (const auto& [key, value] : context_->client_metadata()) {
      call.metadata.emplace(std::string(key.data(), key.size()),
                            std::string(value.data(), value.size()));
    }
    const GrpcAnswer answer = owner_.Record(std::move(call));
    if (answer.code != 0) {
      Finish(grpc::Status(static_cast<grpc::StatusCode>(answer.code), answer.message));
      return;
    }
    grpc::Slice empty("");
    response_ = grpc::ByteBuffer(&empty, 1);
    StartWriteAndFinish(&response_, grpc::WriteOptions(), grpc::Status::OK);
  }

  void OnDone() override { delete this; }

 private:
  grpc::GenericCallbackServerContext* context_;
  GrpcParticipant::Impl& owner_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
};

class Service final : public grpc::CallbackGenericService {
 public:
  explicit Service(GrpcParticipant::Impl& owner) : owner_(owner) {}
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    return new Reactor(context, owner_);
  }

 private:
  GrpcParticipant::Impl& owner_;
};

}  // namespace

GrpcParticipant::GrpcParticipant(const std::string& cert_file, const std::string& key_file)
    : impl_(std::make_unique<Impl>()) {
  impl_->service = std::make_unique<Service>(*impl_);
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!cert_file.empty()) {
    auto read = [](const std::string& path) {
      std::ifstream in(path, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      return text.str();
    };
    grpc::SslServerCredentialsOptions tls;
    tls.pem_key_cert_pairs.push_back({read(key_file), read(cert_file)});
    credentials = grpc::SslServerCredentials(tls);
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", credentials, &impl_->port);
  builder.RegisterCallbackGenericService(impl_->service.get());
  impl_->server = builder.BuildAndStart();
}

GrpcParticipant::~GrpcParticipant() {
  if (impl_->server) impl_->server->Shutdown();
}

int GrpcParticipant::port() const { return impl_->port; }

std::string GrpcParticipant::Url(const std::string& method) const {
  return "127.0.0.1:" + std::to_string(impl_->port) + "/" + method;
}

void GrpcParticipant::Script(const std::string& method, std::vector<GrpcAnswer> answers) {
  std::lock_guard lock(impl_->mu);
  for (GrpcAnswer& a : answers) impl_->scripts[method].push_back(std::move(a));
}

void GrpcParticipant::SetDefault(const std::string& method, GrpcAnswer answer) {
  std::lock_guard lock(impl_->mu);
  impl_->defaults[method] = std::move(answer);
}

std::vector<GrpcCall> GrpcParticipant::CallsTo(const std::string& method) const {
  std::lock_guard lock(impl_->mu);
  std::vector<GrpcCall> out;
  for (const GrpcCall& c : impl_->calls) {
    if (c.method == method) out.push_back(c);
  }
  return out;
}

std::size_t GrpcParticipant::CountCalls(const std::string& method) const {
  return CallsTo(method).size();
}

bool GrpcParticipant::WaitForCalls(const std::string& method, std::size_t count) const {
  return Eventually([&] { return CountCalls(method) >= count; }, std::chrono::seconds(15));
}

}  // namespace settle::testing
