// Mutual TLS on every master and worker RPC. A server started with a
// certificate, its key and a CA (`distflow server --tls-cert F --tls-key F
// --tls-ca F`, or DISTFLOW_TLS_CERT/KEY/CA) speaks only TLS, requires every
// caller to present a certificate and accepts it only when the CA signed
// it; the process's own channels — to other tasks, and a client session's
// to its master — present the same certificate and trust only servers the
// CA signed whose certificate names the address dialled (subjectAltName IP
// or DNS). Without TLS settings everything is plaintext. TLS and the shared
// token (grpc_auth.h) are independent and may be combined. Thread-safe.
#ifndef DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_TLS_H_
#define DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace distflow {

// Paths of the PEM files: this process's certificate (chain), its private
// key, and the CA certificates that sign the cluster's members.
struct TlsFiles {
  std::string cert;
  std::string key;
  std::string ca;
};

// PEM contents. A server needs all three; a channel with only `ca` dials
// TLS without a certificate of its own (which a distflow server refuses).
struct TlsConfig {
  std::string cert_pem;
  std::string key_pem;
  std::string ca_pem;
  bool enabled() const { return !ca_pem.empty() || !cert_pem.empty() || !key_pem.empty(); }
};

// Reads the files. All three paths empty: TLS off. InvalidArgument naming
// the missing one when only some are given, and naming the file when it is
// empty, larger than 1 MiB or holds no PEM block; the read error otherwise.
absl::StatusOr<TlsConfig> ReadTlsFiles(const TlsFiles& files);

// The TLS settings this process's channels use: the ones set with
// SetProcessTls, else the files named by DISTFLOW_TLS_CERT, DISTFLOW_TLS_KEY
// and DISTFLOW_TLS_CA (read once; a bad setting is returned to every
// caller), else TLS off.
absl::StatusOr<TlsConfig> ProcessTls();
void SetProcessTls(TlsConfig config);

// Credentials for a channel under `config` (plaintext when it is off).
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const TlsConfig& config);
// Credentials for a server under `config`: TLS requiring a client
// certificate the CA signed, or plaintext when TLS is off.
// REQUIRES: config is off, or has all three parts.
std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const TlsConfig& config);

}  // namespace distflow

#endif  // DISTFLOW_DISTRIBUTED_RUNTIME_RPC_GRPC_TLS_H_
