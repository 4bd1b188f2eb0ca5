#include "support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace onnxc {

ProcessResult run_process(const std::vector<std::string>& argv, int timeout_s) {
  ProcessResult r;
  char tmpl[] = "/tmp/onnxc-out-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) {
    r.output = "cannot create a temporary file";
    return r;
  }
  unlink(tmpl);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd);
    r.output = "fork failed";
    return r;
  }
  if (pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s\n", args[0]);
    _exit(127);
  }
  int status = 0;
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    pid_t w = waitpid(pid, &status, timeout_s > 0 ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0) break;
    if (timeout_s > 0 && std::chrono::steady_clock::now() - start > std::chrono::seconds(timeout_s)) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) r.output.append(buf, static_cast<std::size_t>(n));
  close(fd);
  return r;
}

}  // namespace onnxc
