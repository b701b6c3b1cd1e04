// NetnsHosts: test hosts on one machine for integration tests — one Linux
// network namespace per host, each with its own address on a bridge that
// lives in the test's own namespaces (scripts/netns_cluster.sh makes them;
// nothing is routed outside). Processes started on a host see only that
// host's network; partitions and packet loss are nftables rules on the
// hosts, and Heal removes them.
//
// Create returns null with a reason when namespaces cannot be made here (not
// root, no iproute2 or nftables); tests then skip saying why. The destructor
// kills every process still running on the hosts and removes them, so a
// failed test leaves nothing behind; ProcessesLeft() lets a test assert that
// its own processes ended by themselves first. Not thread-safe.
#ifndef DISTFLOW_TESTS_INTEGRATION_NETNS_HOSTS_H_
#define DISTFLOW_TESTS_INTEGRATION_NETNS_HOSTS_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "command_line.h"

namespace distflow {
namespace test {

class NetnsHosts {
 public:
  // Makes `n` hosts named after `name` (a test's name and pid keep
  // concurrent tests apart). Null, with `*why` set, when this machine cannot.
  static std::unique_ptr<NetnsHosts> Create(const std::string& name, int n, std::string* why) {
    if (geteuid() != 0) {
      *why = "network namespaces need root (ip netns add)";
      return nullptr;
    }
    if (access("/usr/sbin/ip", X_OK) != 0 && access("/sbin/ip", X_OK) != 0) {
      *why = "iproute2's ip is not installed";
      return nullptr;
    }
    if (access("/usr/sbin/nft", X_OK) != 0 && access("/sbin/nft", X_OK) != 0) {
      *why = "nftables' nft is not installed (scripts/setup.sh installs it)";
      return nullptr;
    }
    std::unique_ptr<NetnsHosts> hosts(new NetnsHosts(name, n));
    const CommandOutput up = hosts->Script(absl::StrCat("up ", name, " ", n));
    if (up.exit_code != 0) {
      *why = absl::StrCat("scripts/netns_cluster.sh could not make namespaces here: ", up.out);
      hosts->created_ = false;
      return nullptr;
    }
    return hosts;
  }
  ~NetnsHosts() {
    for (const pid_t pid : pids_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (created_) Script(absl::StrCat("down ", name_));
  }
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  int size() const { return n_; }
  // Host i's address (192.0.2.(i+1)).
  static std::string Address(int i) { return absl::StrCat("192.0.2.", i + 1); }

  // Starts `binary args` on host `host` with `env` ("K=V") added, stdout and
  // stderr to the files given; returns its pid (-1 when fork fails).
  pid_t Spawn(int host, const std::string& binary, const std::vector<std::string>& args,
              const std::string& out_path, const std::string& err_path,
              const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {"ip", "netns", "exec", absl::StrCat(name_, "-", host), binary};
    argv.insert(argv.end(), args.begin(), args.end());
    const pid_t pid = fork();
    if (pid == 0) {
      const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (out >= 0) dup2(out, STDOUT_FILENO);
      if (err >= 0) dup2(err, STDERR_FILENO);
      for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> v;
      for (std::string& a : argv) v.push_back(a.data());
      v.push_back(nullptr);
      execvp("ip", v.data());
      _exit(127);
    }
    if (pid > 0) pids_.push_back(pid);
    return pid;
  }

  // Waits up to `timeout` for `path` to hold `text`.
  static bool WaitForText(const std::string& path, const std::string& text,
                          std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (absl::StrContains(Slurp(path), text)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // Sends `sig` to a process Spawn started and, unless it was only stopped,
  // reaps it. Returns its wait status (0 when it was not running).
  int Kill(pid_t pid, int sig) {
    int status = 0;
    for (auto it = pids_.begin(); it != pids_.end(); ++it) {
      if (*it != pid) continue;
      kill(pid, sig);
      waitpid(pid, &status, 0);
      pids_.erase(it);
      break;
    }
    return status;
  }
  // Forgets a process that the caller reaped itself.
  void Forget(pid_t pid) {
    for (auto it = pids_.begin(); it != pids_.end(); ++it) {
      if (*it == pid) {
        pids_.erase(it);
        return;
      }
    }
  }

  // Drops all traffic between hosts a and b until Heal.
  bool Partition(int a, int b) {
    return Script(absl::StrCat("partition ", name_, " ", a, " ", b)).exit_code == 0;
  }
  // Drops `percent` % of the packets every host receives until Heal.
  bool Loss(int percent) {
    return Script(absl::StrCat("loss ", name_, " ", percent)).exit_code == 0;
  }
  bool Heal() { return Script(absl::StrCat("heal ", name_)).exit_code == 0; }

  // The pids of processes running on the hosts, one per line (empty: none).
  std::string ProcessesLeft() { return Script(absl::StrCat("pids ", name_)).out; }

  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  NetnsHosts(std::string name, int n) : name_(std::move(name)), n_(n) {}
  CommandOutput Script(const std::string& args) {
    return RunCommandLine(
        absl::StrCat("bash " DISTFLOW_SOURCE_DIR "/scripts/netns_cluster.sh ", args, " 2>&1"));
  }

  const std::string name_;
  const int n_;
  bool created_ = true;
  std::vector<pid_t> pids_;
};

}  // namespace test
}  // namespace distflow

#endif  // DISTFLOW_TESTS_INTEGRATION_NETNS_HOSTS_H_
