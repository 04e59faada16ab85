#include "tests/conformance/isolation.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace onyx::conformance {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kStderrTail = 4096;

struct Child {
  size_t index = 0;
  pid_t pid = -1;
  int result_fd = -1;  // the child's encoded Status
  int stderr_fd = -1;  // the child's stdout and stderr; -1 when passed through
  Clock::time_point deadline;
  std::string result;
  std::string output_tail;
};

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += n;
  }
}

[[noreturn]] void ChildMain(size_t index, const std::function<absl::Status(size_t)>& task,
                            const IsolationOptions& options, int result_fd, int output_fd) {
  if (output_fd >= 0) {
    dup2(output_fd, STDOUT_FILENO);
    dup2(output_fd, STDERR_FILENO);
  }
  // A crash ends the child by its signal, also under a sanitizer, whose
  // handler would otherwise report it and exit with a status of its own.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE}) signal(sig, SIG_DFL);
  if (kAddressSpaceLimitApplies && options.memory_limit_mb > 0) {
    const rlim_t bytes = static_cast<rlim_t>(options.memory_limit_mb) << 20;
    rlimit limit{bytes, bytes};
    setrlimit(RLIMIT_AS, &limit);
  }
  absl::Status status;
  try {
    status = task(index);
  } catch (const std::exception& e) {
    status = absl::InternalError(absl::StrCat("threw ", e.what()));
  } catch (...) {
    status = absl::InternalError("threw a non-standard exception");
  }
  WriteAll(result_fd, absl::StrCat(static_cast<int>(status.code()), "\n", status.message()));
  // _exit: no static destructors or stdio flushes of state copied from the parent.
  _exit(0);
}

std::optional<Child> Spawn(size_t index, const std::function<absl::Status(size_t)>& task,
                           const IsolationOptions& options) {
  int result_pipe[2];
  int output_pipe[2] = {-1, -1};
  if (pipe2(result_pipe, O_CLOEXEC) != 0) return std::nullopt;
  if (!options.show_child_output && pipe2(output_pipe, O_CLOEXEC) != 0) {
    close(result_pipe[0]);
    close(result_pipe[1]);
    return std::nullopt;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(result_pipe[0]);
    if (output_pipe[0] >= 0) close(output_pipe[0]);
    ChildMain(index, task, options, result_pipe[1], output_pipe[1]);
  }
  close(result_pipe[1]);
  if (output_pipe[1] >= 0) close(output_pipe[1]);
  if (pid < 0) {
    close(result_pipe[0]);
    if (output_pipe[0] >= 0) close(output_pipe[0]);
    return std::nullopt;
  }
  Child child;
  child.index = index;
  child.pid = pid;
  child.result_fd = result_pipe[0];
  child.stderr_fd = output_pipe[0];
  child.deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(options.timeout_seconds * 1000));
  return child;
}

// Reads what is available; returns false at end of file or on error.
bool Drain(int fd, std::string& into, size_t keep_tail) {
  char buffer[4096];
  ssize_t n = read(fd, buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  into.append(buffer, n);
  if (keep_tail > 0 && into.size() > keep_tail) into.erase(0, into.size() - keep_tail);
  return true;
}

// Last non-empty line of the child's output, for crash reasons.
std::string LastLine(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  const size_t pos = text.rfind('\n');
  return std::string(pos == std::string_view::npos ? text : text.substr(pos + 1));
}

absl::Status Decode(const Child& child, int wait_status) {
  const size_t newline = child.result.find('\n');
  int code = 0;
  if (newline != std::string::npos && absl::SimpleAtoi(child.result.substr(0, newline), &code)) {
    return absl::Status(static_cast<absl::StatusCode>(code), child.result.substr(newline + 1));
  }
  const std::string tail = LastLine(child.output_tail);
  const std::string suffix = tail.empty() ? "" : absl::StrCat(": ", tail);
  if (WIFSIGNALED(wait_status)) {
    return absl::InternalError(absl::StrCat("crashed (signal ", WTERMSIG(wait_status), ")", suffix));
  }
  return absl::InternalError(absl::StrCat("exited with status ", WEXITSTATUS(wait_status), suffix));
}

void CloseFds(Child& child) {
  if (child.result_fd >= 0) close(child.result_fd);
  if (child.stderr_fd >= 0) close(child.stderr_fd);
  child.result_fd = child.stderr_fd = -1;
}

}  // namespace

void RunIsolated(size_t count, const std::function<absl::Status(size_t)>& task, const IsolationOptions& options,
                 const std::function<void(size_t, const absl::Status&)>& on_done) {
  std::vector<std::optional<absl::Status>> results(count);
  std::vector<Child> running;
  size_t next_start = 0;
  size_t next_report = 0;
  const size_t jobs = options.jobs < 1 ? 1 : options.jobs;

  auto finish = [&](size_t index, absl::Status status) {
    results[index] = std::move(status);
    while (next_report < count && results[next_report].has_value()) {
      on_done(next_report, *results[next_report]);
      ++next_report;
    }
  };

  while (next_report < count) {
    while (running.size() < jobs && next_start < count) {
      std::optional<Child> child = Spawn(next_start, task, options);
      if (!child) {
        finish(next_start++, absl::InternalError(absl::StrCat("could not fork: ", std::strerror(errno))));
        continue;
      }
      running.push_back(std::move(*child));
      ++next_start;
    }
    if (running.empty()) continue;

    std::vector<pollfd> fds;
    auto now = Clock::now();
    int timeout_ms = -1;
    for (const Child& child : running) {
      fds.push_back({child.result_fd, POLLIN, 0});
      if (child.stderr_fd >= 0) fds.push_back({child.stderr_fd, POLLIN, 0});
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(child.deadline - now).count();
      const int left_ms = left < 0 ? 0 : static_cast<int>(left) + 1;
      timeout_ms = timeout_ms < 0 ? left_ms : std::min(timeout_ms, left_ms);
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) break;

    size_t f = 0;
    now = Clock::now();
    for (size_t c = 0; c < running.size();) {
      Child& child = running[c];
      const pollfd result_poll = fds[f++];
      const pollfd output_poll = child.stderr_fd >= 0 ? fds[f++] : pollfd{-1, 0, 0};
      if (output_poll.revents != 0 && !Drain(child.stderr_fd, child.output_tail, kStderrTail)) {
        close(child.stderr_fd);
        child.stderr_fd = -1;
      }
      bool done = result_poll.revents != 0 && !Drain(child.result_fd, child.result, 0);
      int wait_status = 0;
      absl::Status status;
      if (done) {
        // The result pipe closes when the child exits (or closes it by dying).
        if (child.stderr_fd >= 0) {
          while (Drain(child.stderr_fd, child.output_tail, kStderrTail)) {
          }
        }
        CloseFds(child);
        waitpid(child.pid, &wait_status, 0);
        status = Decode(child, wait_status);
      } else if (now >= child.deadline) {
        kill(child.pid, SIGKILL);
        CloseFds(child);
        waitpid(child.pid, &wait_status, 0);
        done = true;
        status = absl::DeadlineExceededError(absl::StrCat("timed out after ", options.timeout_seconds, " s"));
      }
      if (!done) {
        ++c;
        continue;
      }
      const size_t index = child.index;
      running.erase(running.begin() + c);
      finish(index, std::move(status));
    }
  }
}

}  // namespace onyx::conformance
