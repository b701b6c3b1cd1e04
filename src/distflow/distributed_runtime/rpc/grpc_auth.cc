#include "distflow/distributed_runtime/rpc/grpc_auth.h"

#include <cstdlib>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/constant_time.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

constexpr size_t kMaxTokenBytes = 4096;

absl::Mutex token_mu;
bool token_loaded ABSL_GUARDED_BY(token_mu) = false;
std::string* process_token ABSL_GUARDED_BY(token_mu) = nullptr;

class TokenInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(std::string token) : token_(std::move(token)) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace(kTokenMetadataKey, token_);
    }
    methods->Proceed();
  }

 private:
  const std::string token_;
};

class TokenInterceptorFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    std::string token = ProcessToken();
    return token.empty() ? nullptr : new TokenInterceptor(std::move(token));
  }
};

}  // namespace

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  DF_ASSIGN_OR_RETURN(std::string content, ReadFileToString(path));
  std::string token(absl::StripAsciiWhitespace(content));
  if (token.empty()) return errors::InvalidArgument("token file '", path, "' is empty");
  if (token.size() > kMaxTokenBytes) {
    return errors::InvalidArgument("token file '", path, "' holds more than ", kMaxTokenBytes,
                                   " bytes");
  }
  for (char c : token) {
    if (c < 0x21 || c > 0x7e) {
      return errors::InvalidArgument("token file '", path,
                                     "' holds a character other than printable ASCII");
    }
  }
  return token;
}

std::string ProcessToken() {
  absl::MutexLock lock(&token_mu);
  if (!token_loaded) {
    token_loaded = true;
    const char* path = std::getenv("DISTFLOW_TOKEN_FILE");
    if (path != nullptr && *path != '\0') {
      absl::StatusOr<std::string> token = ReadTokenFile(path);
      if (token.ok()) {
        process_token = new std::string(*std::move(token));
      } else {
        std::cerr << "DISTFLOW_TOKEN_FILE: " << token.status().message() << std::endl;
      }
    }
  }
  return process_token == nullptr ? std::string() : *process_token;
}

void SetProcessToken(std::string token) {
  absl::MutexLock lock(&token_mu);
  token_loaded = true;
  delete process_token;
  process_token = new std::string(std::move(token));
}

grpc::Status CheckToken(const grpc::ServerContextBase* ctx, const std::string& expected) {
  if (expected.empty()) return grpc::Status::OK;
  const auto& metadata = ctx->client_metadata();
  auto it = metadata.find(kTokenMetadataKey);
  if (it != metadata.end() &&
      ConstantTimeEquals(absl::string_view(it->second.data(), it->second.size()), expected)) {
    return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                      it == metadata.end()
                          ? "this distflow cluster requires a token; the call carried none "
                            "(pass the server's token file with --token-file FILE, or set "
                            "DISTFLOW_TOKEN_FILE=FILE)"
                          : "the call's cluster token is wrong (--token-file or "
                            "DISTFLOW_TOKEN_FILE must name the file the servers were started "
                            "with)");
}

grpc::ServerUnaryReactor* RejectUnauthenticated(grpc::CallbackServerContext* ctx,
                                                const std::string& expected) {
  grpc::Status status = CheckToken(ctx, expected);
  if (status.ok()) return nullptr;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
TokenInterceptors() {
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> out;
  out.push_back(std::make_unique<TokenInterceptorFactory>());
  return out;
}

}  // namespace distflow
