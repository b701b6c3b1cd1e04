// ReadTlsFiles: all three files or none, each a readable PEM file of
// bounded size, with errors naming what is wrong; and the credentials each
// setting gives.
#include "distflow/distributed_runtime/rpc/grpc_tls.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace distflow {
namespace {

using ::testing::HasSubstr;

constexpr char kPem[] = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";

class GrpcTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/grpc_tls_", getpid());
    mkdir(dir_.c_str(), 0700);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string File(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << content;
    return path;
  }
  std::string dir_;
};

TEST_F(GrpcTlsTest, NoFilesIsTlsOff) {
  auto config = ReadTlsFiles({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->enabled());
}

TEST_F(GrpcTlsTest, ThreeGoodFilesAreRead) {
  auto config = ReadTlsFiles({File("c.pem", kPem), File("k.pem", kPem), File("ca.pem", kPem)});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->enabled());
  EXPECT_EQ(config->ca_pem, kPem);
  EXPECT_NE(ChannelCredentials(*config), nullptr);
  EXPECT_NE(ServerCredentials(*config), nullptr);
}

TEST_F(GrpcTlsTest, MissingPartsAndBadFilesAreNamed) {
  const std::string good = File("good.pem", kPem);
  auto s = ReadTlsFiles({good, "", good}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("--tls-key"));
  s = ReadTlsFiles({"", good, good}).status();
  EXPECT_THAT(s.message(), HasSubstr("--tls-cert"));
  s = ReadTlsFiles({good, good, ""}).status();
  EXPECT_THAT(s.message(), HasSubstr("--tls-ca"));

  const std::string empty = File("empty.pem", "");
  s = ReadTlsFiles({empty, good, good}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("TLS certificate '", empty, "' is empty")));

  const std::string text = File("text.pem", "not a certificate");
  s = ReadTlsFiles({good, text, good}).status();
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("TLS private key '", text, "' holds no PEM")));

  const std::string huge = File("huge.pem", std::string(kPem) + std::string(2 << 20, 'A'));
  s = ReadTlsFiles({good, good, huge}).status();
  EXPECT_THAT(s.message(), HasSubstr("holds more than 1048576 bytes"));

  s = ReadTlsFiles({good, good, dir_ + "/absent.pem"}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(s.message(), HasSubstr("absent.pem"));
}

TEST_F(GrpcTlsTest, SetProcessTlsIsWhatChannelsUse) {
  TlsConfig config;
  config.ca_pem = kPem;
  SetProcessTls(config);
  auto process = ProcessTls();
  ASSERT_TRUE(process.ok());
  EXPECT_EQ(process->ca_pem, kPem);
  SetProcessTls(TlsConfig());
  process = ProcessTls();
  ASSERT_TRUE(process.ok());
  EXPECT_FALSE(process->enabled());
}

}  // namespace
}  // namespace distflow
