// A tuner run in the background that a test paces by the tuner's own
// progress, never by a clock: the lines it prints (its stdout comes through a
// pipe) and the files it finishes writing in its experiment directory
// (inotify). A signal sent after the n-th such event lands where the sweep's
// work puts it, on a machine of any speed, and the test never sleeps.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace test {

class WatchedTuner {
 public:
  // Runs `binary args` (a shell word list, so quoted paths work) with stdout
  // to a pipe and stderr to `err_file`, watching `dir` (none where empty),
  // which is made first when missing (`run --out` takes an empty directory). `ignored`: a
  // signal it starts with ignored (SIGHUP: as under nohup; SIGINT: as a shell
  // script's background job); otherwise SIGHUP and SIGINT end it unless it
  // catches them, as a terminal's process, whatever the test runner's disposition.
  WatchedTuner(const std::string& binary, const std::string& args, const std::string& dir,
               const std::string& err_file, int ignored = 0) {
    inotify_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (inotify_ < 0) throw std::runtime_error("inotify_init1 failed");
    if (!dir.empty()) {
      std::filesystem::create_directories(dir);
      watch(dir);
    }
    const std::string command = "exec " + binary + " " + args;  // (made before fork: the child only execs)
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      ::close(inotify_);
      throw std::runtime_error("pipe2 failed");
    }
    pid_ = fork();
    if (pid_ < 0) {  // (no process: the destructor must not signal pid -1, every process of ours)
      for (int fd : {pipe_fds[0], pipe_fds[1], inotify_}) ::close(fd);
      throw std::runtime_error("fork failed");
    }
    if (pid_ == 0) {
      for (const int sig : {SIGHUP, SIGINT}) std::signal(sig, sig == ignored ? SIG_IGN : SIG_DFL);
      ::dup2(pipe_fds[1], STDOUT_FILENO);
      const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (err >= 0) ::dup2(err, STDERR_FILENO);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    ::close(pipe_fds[1]);
    out_ = pipe_fds[0];
  }

  WatchedTuner(const WatchedTuner&) = delete;
  WatchedTuner& operator=(const WatchedTuner&) = delete;

  ~WatchedTuner() {
    if (!status_) signal_and_wait(SIGKILL);
    ::close(out_);
    ::close(inotify_);
  }

  pid_t pid() const { return pid_; }
  const std::string& printed() const { return printed_; }

  // Waits until it has printed something and `text` at least `count` times;
  // its exit status instead where it ends first.
  std::optional<int> await_printed(const std::string& text, int count) {
    while (printed_.empty() || occurrences(text) < count) {
      if (!pump()) return status_;
    }
    return std::nullopt;
  }

  // Waits until it has finished writing `count` more files (closed after
  // writing, or renamed into place: an atomic write counts twice) anywhere
  // under its directory; its exit status instead where it ends first.
  std::optional<int> await_files(int count) {
    for (const long want = files_ + count; files_ < want;) {
      if (!pump()) return status_;
    }
    return std::nullopt;
  }

  // Sends `sig` and waits for the process to end, reading what it prints
  // meanwhile (a full pipe would stall it): its wait status.
  int signal_and_wait(int sig) {
    if (!status_) ::kill(pid_, sig);
    return wait();
  }

  // Waits for the process to end: its wait status.
  int wait() {
    while (pump()) {
    }
    return *status_;
  }

 private:
  int occurrences(const std::string& text) const {
    int n = 0;
    for (auto at = printed_.find(text); at != std::string::npos; at = printed_.find(text, at + 1)) ++n;
    return n;
  }

  // Watches `dir` and the directories already in it (a directory made before
  // its parent was watched would be missed otherwise).
  void watch(const std::string& dir) {
    const int wd = inotify_add_watch(inotify_, dir.c_str(), IN_CREATE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR);
    if (wd < 0) return;  // (gone already: the tuner renamed or removed it)
    watched_[wd] = dir;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.is_directory(ec)) watch(entry.path().string());
    }
  }

  // Blocks until something happens: output (kept), a file finished (counted),
  // or the end of its output, when it reaps the process. False once it has ended.
  bool pump() {
    if (status_) return false;
    pollfd fds[2] = {{out_, POLLIN, 0}, {inotify_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) return true;  // (EINTR: poll again)
    if (fds[1].revents & POLLIN) read_events();
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      char buffer[4096];
      const ssize_t n = ::read(out_, buffer, sizeof buffer);
      if (n > 0) {
        printed_.append(buffer, static_cast<size_t>(n));
      } else if (n == 0) {  // its stdout closed: it has ended (or is ending)
        int status = 0;
        ::waitpid(pid_, &status, 0);
        status_ = status;
        return false;
      }
    }
    return true;
  }

  void read_events() {
    alignas(inotify_event) char buffer[16384];
    for (ssize_t n; (n = ::read(inotify_, buffer, sizeof buffer)) > 0;) {
      for (char* at = buffer; at < buffer + n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(at);
        at += sizeof(inotify_event) + event->len;
        if ((event->mask & IN_ISDIR) && (event->mask & (IN_CREATE | IN_MOVED_TO))) {
          watch(watched_[event->wd] + "/" + event->name);
        } else if (event->mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_Q_OVERFLOW)) {
          ++files_;
        }
      }
    }
  }

  pid_t pid_ = -1;
  int out_ = -1;
  int inotify_ = -1;
  std::map<int, std::string> watched_;
  std::string printed_;
  long files_ = 0;
  std::optional<int> status_;
};

}  // namespace test
