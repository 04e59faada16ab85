// Standalone driver for the targets of tests/fuzz, built with any compiler
// (CI's gcc build has no libFuzzer): replays every file under the given paths,
// then, with --mutations N, runs N inputs made by randomly mutating them (bit
// flips, interesting values, inserted, deleted, duplicated and spliced ranges),
// seeded by --seed so that a run is reproducible. A crash writes the input
// that caused it to ./crash-<target>-<iteration> before the process dies.
// Files under a path given as --accepted PATH must each be accepted by the
// target (it calls Accepted()): a seed corpus that no longer gets past the
// first check fuzzes nothing, and fails the run.
//
//   fuzz_replay_request [--mutations 2000] [--seed 1] --accepted tests/fuzz/corpus/request
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.h"

namespace {

// What the crash handler writes out: the input being run.
const uint8_t* g_input = nullptr;
size_t g_input_size = 0;
char g_crash_path[256] = "";
// The driver's own process: a child the code under test forks (onyx runs
// ONNX shape inference in one, where a crash is expected and handled) must
// die of its signal without writing a crash file.
pid_t g_driver_pid = 0;

void OnCrash(int sig) {
  if (getpid() == g_driver_pid && g_input != nullptr && g_crash_path[0] != '\0') {
    const int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      size_t done = 0;
      while (done < g_input_size) {
        const ssize_t n = write(fd, g_input + done, g_input_size - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      close(fd);
    }
    const char msg[] = "fuzz_replay: crash; the input is in ";
    (void)!write(2, msg, sizeof(msg) - 1);
    (void)!write(2, g_crash_path, strlen(g_crash_path));
    (void)!write(2, "\n", 1);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void Run(const std::string& input, const std::string& crash_name) {
  std::snprintf(g_crash_path, sizeof(g_crash_path), "%s", crash_name.c_str());
  g_input = reinterpret_cast<const uint8_t*>(input.data());
  g_input_size = input.size();
  LLVMFuzzerTestOneInput(g_input, g_input_size);
  g_input = nullptr;
}

std::string Mutate(const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  auto pick = [&](uint64_t n) { return n == 0 ? uint64_t{0} : rng() % n; };
  std::string s = corpus[pick(corpus.size())];
  const int edits = 1 + static_cast<int>(pick(4));
  for (int e = 0; e < edits; ++e) {
    switch (pick(7)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1: {  // an interesting value
        static const uint8_t kValues[] = {0, 1, 0x7f, 0x80, 0xff, 0xfe, 0x40, 0x10};
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(kValues[pick(sizeof(kValues))]);
        break;
      }
      case 2: {  // insert random bytes
        std::string bytes(1 + pick(8), '\0');
        for (char& c : bytes) c = static_cast<char>(rng());
        s.insert(pick(s.size() + 1), bytes);
        break;
      }
      case 3:  // delete a range
        if (!s.empty()) {
          const uint64_t at = pick(s.size());
          s.erase(at, 1 + pick(std::min<uint64_t>(16, s.size() - at)));
        }
        break;
      case 4:  // duplicate a range
        if (!s.empty()) {
          const uint64_t at = pick(s.size());
          s.insert(pick(s.size() + 1), s.substr(at, 1 + pick(16)));
        }
        break;
      case 5:  // truncate
        s.resize(pick(s.size() + 1));
        break;
      default: {  // splice with another entry
        const std::string& other = corpus[pick(corpus.size())];
        const uint64_t cut = pick(s.size() + 1);
        s = s.substr(0, cut) + other.substr(pick(other.size() + 1));
        break;
      }
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 0;
  unsigned long long seed = 1;
  std::vector<std::pair<std::filesystem::path, bool>> files;  // (file, must be accepted)
  bool must_accept = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--accepted") {
      must_accept = true;
      continue;
    }
    if (arg == "--mutations" && i + 1 < argc) {
      mutations = std::atol(argv[++i]);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file()) files.emplace_back(entry.path(), must_accept);
      }
    } else if (std::filesystem::is_regular_file(arg)) {
      files.emplace_back(arg, must_accept);
    } else {
      std::fprintf(stderr, "fuzz_replay: '%s' is neither a file, a directory nor a flag\n", arg.c_str());
      return 2;
    }
    must_accept = false;
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "fuzz_replay: no input files\n");
    return 2;
  }
  g_driver_pid = getpid();
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) signal(sig, OnCrash);
  const std::string target = std::filesystem::path(argv[0]).filename().string();

  std::vector<std::string> corpus;
  int refused_seeds = 0;
  for (const auto& [path, must_be_accepted] : files) {
    std::ifstream in(path, std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    const int64_t before = onyx::fuzz::AcceptedCount();
    Run(corpus.back(), "crash-" + target + "-" + path.filename().string());
    if (must_be_accepted && onyx::fuzz::AcceptedCount() == before) {
      std::fprintf(stderr, "fuzz_replay: %s: the target refused this seed\n", path.c_str());
      ++refused_seeds;
    }
  }
  const int64_t accepted_before = onyx::fuzz::AcceptedCount();
  std::mt19937_64 rng(seed);
  for (long i = 0; i < mutations; ++i) {
    Run(Mutate(corpus, rng), "crash-" + target + "-" + std::to_string(i));
  }
  std::printf(
      "%s: replayed %zu files (%d seeds refused), ran %ld mutated inputs (seed %llu, %lld accepted): "
      "no crash\n",
      target.c_str(), files.size(), refused_seeds, mutations, seed,
      static_cast<long long>(onyx::fuzz::AcceptedCount() - accepted_before));
  return refused_seeds == 0 ? 0 : 1;
}
