#include "distflow/distributed_runtime/rpc/grpc_tls.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "distflow/core/env.h"
#include "distflow/core/status.h"

namespace distflow {
namespace {

constexpr size_t kMaxPemBytes = 1 << 20;

absl::Mutex tls_mu;
bool tls_loaded ABSL_GUARDED_BY(tls_mu) = false;
absl::StatusOr<TlsConfig>* process_tls ABSL_GUARDED_BY(tls_mu) = nullptr;

absl::StatusOr<std::string> ReadPem(const std::string& what, const std::string& path) {
  absl::StatusOr<std::string> pem = ReadFileToString(path);
  if (!pem.ok()) {
    return errors::Annotate(pem.status(), absl::StrCat(what, " '", path, "': "));
  }
  if (pem->empty()) return errors::InvalidArgument(what, " '", path, "' is empty");
  if (pem->size() > kMaxPemBytes) {
    return errors::InvalidArgument(what, " '", path, "' holds more than ", kMaxPemBytes, " bytes");
  }
  if (!absl::StrContains(*pem, "-----BEGIN ")) {
    return errors::InvalidArgument(what, " '", path, "' holds no PEM block");
  }
  return pem;
}

absl::StatusOr<TlsConfig> TlsFromEnvironment() {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? std::string() : std::string(v);
  };
  TlsFiles files{env("DISTFLOW_TLS_CERT"), env("DISTFLOW_TLS_KEY"), env("DISTFLOW_TLS_CA")};
  absl::StatusOr<TlsConfig> config = ReadTlsFiles(files);
  if (!config.ok()) {
    return errors::Annotate(config.status(), "DISTFLOW_TLS_CERT/KEY/CA: ");
  }
  return config;
}

}  // namespace

absl::StatusOr<TlsConfig> ReadTlsFiles(const TlsFiles& files) {
  TlsConfig config;
  if (files.cert.empty() && files.key.empty() && files.ca.empty()) return config;
  if (files.cert.empty())
    return errors::InvalidArgument("TLS needs a certificate (--tls-cert, DISTFLOW_TLS_CERT)");
  if (files.key.empty())
    return errors::InvalidArgument("TLS needs a private key (--tls-key, DISTFLOW_TLS_KEY)");
  if (files.ca.empty())
    return errors::InvalidArgument("TLS needs a CA certificate (--tls-ca, DISTFLOW_TLS_CA)");
  DF_ASSIGN_OR_RETURN(config.cert_pem, ReadPem("TLS certificate", files.cert));
  DF_ASSIGN_OR_RETURN(config.key_pem, ReadPem("TLS private key", files.key));
  DF_ASSIGN_OR_RETURN(config.ca_pem, ReadPem("TLS CA certificate", files.ca));
  return config;
}

absl::StatusOr<TlsConfig> ProcessTls() {
  absl::MutexLock lock(&tls_mu);
  if (!tls_loaded) {
    tls_loaded = true;
    process_tls = new absl::StatusOr<TlsConfig>(TlsFromEnvironment());
  }
  return process_tls == nullptr ? TlsConfig() : *process_tls;
}

void SetProcessTls(TlsConfig config) {
  absl::MutexLock lock(&tls_mu);
  tls_loaded = true;
  delete process_tls;
  process_tls = new absl::StatusOr<TlsConfig>(std::move(config));
}

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const TlsConfig& config) {
  if (!config.enabled()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = config.ca_pem;
  options.pem_private_key = config.key_pem;
  options.pem_cert_chain = config.cert_pem;
  return grpc::SslCredentials(options);
}

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const TlsConfig& config) {
  if (!config.enabled()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = config.ca_pem;
  options.pem_key_cert_pairs.push_back({config.key_pem, config.cert_pem});
  return grpc::SslServerCredentials(options);
}

}  // namespace distflow
