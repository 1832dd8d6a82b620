// hookbench: times fork+exec+wait of several commands ("candidates"), each
// with a file piped to its stdin, interleaved round-robin so that machine
// drift hits every candidate alike. The first candidate is the baseline: every
// median is also reported as a ratio to the baseline's median, with a
// bootstrap 95% interval.
//
// What the timer covers, per run: fork, the child's dup2 of stdin/stdout/
// stderr, exec, the command's whole life, and wait4 returning in the parent.
// What it does not cover: the optional per-run --setup and --teardown shell
// commands, reading the stdin file, filling the pipe (the data is written into
// the pipe and the write end closed before the clock starts, so the child
// reads the whole state and then EOF, as from a runtime).
//
// Placeholders in a candidate's arguments, --stdin, --setup and --teardown:
//   {n}  a number unique to this invocation across the whole run (use it for
//        container ids), {i} the candidate's run index (warmups included),
//   {c}  the candidate's index (0 = baseline).
//
// No dependencies beyond libc and libstdc++.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char kUsage[] =
    "usage: hookbench [OPTIONS] CANDIDATE [:: CANDIDATE]...\n"
    "  CANDIDATE := [--name NAME] [--stdin FILE] [--setup SH] [--teardown SH]\n"
    "               [--] CMD [ARG]...\n"
    "OPTIONS (before the first candidate):\n"
    "  --runs N         timed runs per candidate (default 100)\n"
    "  --warmup N       untimed runs per candidate first (default 5)\n"
    "  --order MODE     rotate (default: round-robin, starting candidate\n"
    "                   rotates each round), fixed, or shuffle\n"
    "  --seed N         seed for --order shuffle and the bootstrap (default 1)\n"
    "  --timeout SEC    kill a run after SEC seconds, an error (default 60)\n"
    "  --show-output    children keep hookbench's stdout/stderr (default:\n"
    "                   stdout to /dev/null, stderr captured, shown on error)\n"
    "  --keep-going     record failed runs and go on (default: stop at the\n"
    "                   first failure, exit 1)\n"
    "  --json           machine-readable results on stdout\n"
    "  --raw FILE       write every timed sample as TSV (cand, run, ms)\n"
    "  --tsv FILE       write the summary as TSV (one line per candidate)\n"
    "Candidate options:\n"
    "  --name NAME      label (default: the command's basename)\n"
    "  --stdin FILE     piped to the command's stdin on every run (default\n"
    "                   /dev/null); read after --setup, so setup may write it\n"
    "  --setup SH       /bin/sh -c SH before each run, untimed, must succeed\n"
    "  --teardown SH    /bin/sh -c SH after each run, untimed\n"
    "Placeholders {n} (unique per invocation), {i} (run index of the\n"
    "candidate), {c} (candidate index) are substituted in ARGs and options.\n";

struct Candidate {
  std::string name;
  std::string stdin_file;
  std::string setup;
  std::string teardown;
  std::vector<std::string> argv;
  std::vector<double> wall_ms;  // timed runs only
  std::vector<double> cpu_ms;   // user+sys of the child, timed runs only
  int failures = 0;
};

struct Config {
  int runs = 100;
  int warmup = 5;
  std::string order = "rotate";
  unsigned seed = 1;
  int timeout_s = 60;
  bool show_output = false;
  bool keep_going = false;
  bool json = false;
  std::string raw_file;
  std::string tsv_file;
};

[[noreturn]] void Usage(const std::string& msg) {
  if (!msg.empty()) std::fprintf(stderr, "hookbench: %s\n", msg.c_str());
  std::fputs(kUsage, stderr);
  std::exit(2);
}

int ParseInt(const std::string& s, const char* what) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0' || v < 0 || v > 1000000)
    Usage(std::string("bad number for ") + what + ": " + s);
  return static_cast<int>(v);
}

// Parses the command line into cfg and the candidates.
std::vector<Candidate> ParseArgs(int argc, char** argv, Config* cfg) {
  std::vector<std::string> a(argv + 1, argv + argc);
  size_t k = 0;
  auto need = [&](const std::string& opt) -> std::string {
    if (k + 1 >= a.size()) Usage(opt + " needs a value");
    return a[++k];
  };
  for (; k < a.size(); ++k) {
    const std::string& o = a[k];
    if (o == "--runs")
      cfg->runs = ParseInt(need(o), "--runs");
    else if (o == "--warmup")
      cfg->warmup = ParseInt(need(o), "--warmup");
    else if (o == "--order")
      cfg->order = need(o);
    else if (o == "--seed")
      cfg->seed = static_cast<unsigned>(ParseInt(need(o), "--seed"));
    else if (o == "--timeout")
      cfg->timeout_s = ParseInt(need(o), "--timeout");
    else if (o == "--show-output")
      cfg->show_output = true;
    else if (o == "--keep-going")
      cfg->keep_going = true;
    else if (o == "--json")
      cfg->json = true;
    else if (o == "--raw")
      cfg->raw_file = need(o);
    else if (o == "--tsv")
      cfg->tsv_file = need(o);
    else if (o == "-h" || o == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else
      break;
  }
  if (cfg->order != "rotate" && cfg->order != "fixed" && cfg->order != "shuffle")
    Usage("--order must be rotate, fixed or shuffle");
  if (cfg->runs < 1) Usage("--runs must be at least 1");

  std::vector<Candidate> cands;
  while (k < a.size()) {
    Candidate c;
    bool in_cmd = false;
    for (; k < a.size(); ++k) {
      const std::string& o = a[k];
      if (o == "::") {
        ++k;
        break;
      }
      if (in_cmd) {
        c.argv.push_back(o);
        continue;
      }
      if (o == "--name")
        c.name = need(o);
      else if (o == "--stdin")
        c.stdin_file = need(o);
      else if (o == "--setup")
        c.setup = need(o);
      else if (o == "--teardown")
        c.teardown = need(o);
      else if (o == "--")
        in_cmd = true;
      else if (o.size() > 1 && o[0] == '-' && c.argv.empty())
        Usage("unknown option " + o);
      else {
        in_cmd = true;
        c.argv.push_back(o);
      }
    }
    if (c.argv.empty()) Usage("candidate " + std::to_string(cands.size()) + " has no command");
    if (c.name.empty()) {
      const std::string& p = c.argv[0];
      c.name = p.substr(p.find_last_of('/') == std::string::npos ? 0 : p.find_last_of('/') + 1);
    }
    cands.push_back(std::move(c));
  }
  if (cands.empty()) Usage("no candidate given");
  return cands;
}

std::string Substitute(const std::string& s, long n, int i, size_t c) {
  std::string out;
  for (size_t p = 0; p < s.size(); ++p) {
    if (s[p] == '{' && p + 2 < s.size() && s[p + 2] == '}') {
      char t = s[p + 1];
      if (t == 'n' || t == 'i' || t == 'c') {
        out += std::to_string(t == 'n'   ? n
                              : t == 'i' ? static_cast<long>(i)
                                         : static_cast<long>(c));
        p += 2;
        continue;
      }
    }
    out += s[p];
  }
  return out;
}

bool ReadFile(const std::string& path, std::string* out, std::string* err) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *err = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

// A readable fd positioned at the start of `data` that ends in EOF: a pipe
// already filled and with its write end closed, or a memfd when the data is
// larger than a pipe can hold.
int MakeStdinFd(const std::string& data, std::string* err) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    *err = std::string("pipe2: ") + std::strerror(errno);
    return -1;
  }
  if (data.size() > 65536) fcntl(p[1], F_SETPIPE_SZ, static_cast<int>(data.size()));
  int cap = fcntl(p[1], F_GETPIPE_SZ);
  if (cap >= 0 && data.size() <= static_cast<size_t>(cap)) {
    size_t off = 0;
    while (off < data.size()) {
      ssize_t w = write(p[1], data.data() + off, data.size() - off);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        *err = std::string("write pipe: ") + std::strerror(errno);
        close(p[0]);
        close(p[1]);
        return -1;
      }
      off += static_cast<size_t>(w);
    }
    close(p[1]);
    return p[0];
  }
  close(p[0]);
  close(p[1]);
  int fd = memfd_create("hookbench-stdin", MFD_CLOEXEC);
  if (fd < 0 || write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size()) ||
      lseek(fd, 0, SEEK_SET) != 0) {
    *err = std::string("memfd: ") + std::strerror(errno);
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

volatile sig_atomic_t g_alarm = 0;
void OnAlarm(int) { g_alarm = 1; }

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// Runs /bin/sh -c cmd (untimed); true on exit 0.
bool RunShell(const std::string& cmd, std::string* err) {
  pid_t pid = fork();
  if (pid < 0) {
    *err = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  *err = "`" + cmd + "` failed: " + DescribeStatus(status);
  return false;
}

struct RunResult {
  bool ok = false;
  double wall_ms = 0;
  double cpu_ms = 0;
  std::string error;
};

double Ms(const timespec& a, const timespec& b) {
  return static_cast<double>(b.tv_sec - a.tv_sec) * 1e3 +
         static_cast<double>(b.tv_nsec - a.tv_nsec) / 1e6;
}

std::string TailOf(int fd, size_t max) {
  off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0) return "";
  off_t start = size > static_cast<off_t>(max) ? size - static_cast<off_t>(max) : 0;
  std::string buf(static_cast<size_t>(size - start), '\0');
  ssize_t r = pread(fd, &buf[0], buf.size(), start);
  buf.resize(r > 0 ? static_cast<size_t>(r) : 0);
  return buf;
}

// One timed invocation: everything that can be prepared is prepared before
// the clock starts; the clock covers fork, exec, the command, and wait4.
RunResult RunOnce(const Config& cfg, const std::vector<std::string>& args, bool has_stdin,
                  const std::string& data, int devnull, int errfd) {
  RunResult r;
  std::vector<char*> cargv;
  for (const auto& s : args) cargv.push_back(const_cast<char*>(s.c_str()));
  cargv.push_back(nullptr);

  int in = devnull;
  if (has_stdin) {
    in = MakeStdinFd(data, &r.error);
    if (in < 0) return r;
  }
  if (errfd >= 0 && (ftruncate(errfd, 0) != 0 || lseek(errfd, 0, SEEK_SET) != 0)) {
    r.error = std::string("reset stderr capture: ") + std::strerror(errno);
    if (in != devnull) close(in);
    return r;
  }
  int out = cfg.show_output ? -1 : devnull;

  g_alarm = 0;
  if (cfg.timeout_s > 0) alarm(static_cast<unsigned>(cfg.timeout_s));
  timespec t0{}, t1{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid == 0) {
    if (dup2(in, 0) < 0) _exit(126);
    if (out >= 0 && dup2(out, 1) < 0) _exit(126);
    if (errfd >= 0 && dup2(errfd, 2) < 0) _exit(126);
    signal(SIGALRM, SIG_DFL);
    execvp(cargv[0], cargv.data());
    dprintf(2, "hookbench: exec %s: %s\n", cargv[0], std::strerror(errno));
    _exit(127);
  }
  if (pid < 0) {
    alarm(0);
    r.error = std::string("fork: ") + std::strerror(errno);
    if (in != devnull) close(in);
    return r;
  }
  int status = 0;
  rusage ru{};
  bool timed_out = false;
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) break;
    if (g_alarm && !timed_out) {
      timed_out = true;
      kill(pid, SIGKILL);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  alarm(0);
  if (in != devnull) close(in);

  r.wall_ms = Ms(t0, t1);
  r.cpu_ms = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
             static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  if (timed_out) {
    r.error = "timed out after " + std::to_string(cfg.timeout_s) + " s";
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    r.error = DescribeStatus(status);
  } else {
    r.ok = true;
  }
  if (!r.ok && errfd >= 0) {
    std::string tail = TailOf(errfd, 4096);
    if (!tail.empty()) r.error += "; stderr:\n" + tail;
  }
  return r;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += ' ';
    bool plain = !x.empty() && x.find_first_of(" \t\n'\"\\$`{}();&|<>*?") == std::string::npos;
    s += plain ? x : "'" + x + "'";
  }
  return s;
}

// Percentile by linear interpolation between closest ranks; v must be sorted.
double Percentile(const std::vector<double>& v, double q) {
  if (v.empty()) return NAN;
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return Percentile(v, 0.5);
}

struct Stats {
  size_t n = 0;
  double median = NAN, p10 = NAN, p90 = NAN, mean = NAN, min = NAN, max = NAN, stdev = NAN;
  double cpu_median = NAN;
  double ratio = NAN, ratio_lo = NAN, ratio_hi = NAN;
};

Stats Summarize(const Candidate& c) {
  Stats s;
  std::vector<double> v = c.wall_ms;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.median = Percentile(v, 0.5);
  s.p10 = Percentile(v, 0.1);
  s.p90 = Percentile(v, 0.9);
  s.min = v.front();
  s.max = v.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stdev = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  s.cpu_median = Median(c.cpu_ms);
  return s;
}

// Bootstrap 95% interval of median(x)/median(base).
void RatioInterval(const std::vector<double>& x, const std::vector<double>& base, unsigned seed,
                   double* lo, double* hi) {
  if (x.empty() || base.empty()) return;
  std::mt19937 rng(seed);
  const int kResamples = 2000;
  std::vector<double> ratios;
  ratios.reserve(kResamples);
  std::vector<double> a(x.size()), b(base.size());
  auto med = [](std::vector<double>& v) {
    size_t m = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(m), v.end());
    double hi_v = v[m];
    if (v.size() % 2 == 1) return hi_v;
    double lo_v = *std::max_element(v.begin(), v.begin() + static_cast<long>(m));
    return (lo_v + hi_v) / 2;
  };
  std::uniform_int_distribution<size_t> dx(0, x.size() - 1), db(0, base.size() - 1);
  for (int r = 0; r < kResamples; ++r) {
    for (auto& e : a) e = x[dx(rng)];
    for (auto& e : b) e = base[db(rng)];
    ratios.push_back(med(a) / med(b));
  }
  std::sort(ratios.begin(), ratios.end());
  *lo = Percentile(ratios, 0.025);
  *hi = Percentile(ratios, 0.975);
}

std::string JsonString(const std::string& s) {
  std::string o = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (ch < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", ch);
          o += b;
        } else
          o += static_cast<char>(ch);
    }
  }
  return o + "\"";
}

std::string JsonNum(double d) {
  if (std::isnan(d)) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.4f", d);
  return b;
}

void PrintTable(const std::vector<Candidate>& cands, const std::vector<Stats>& st) {
  size_t w = 9;
  for (const auto& c : cands) w = std::max(w, c.name.size());
  std::printf("%-*s %5s %9s %9s %9s %9s %9s %8s  %s\n", static_cast<int>(w), "candidate", "runs",
              "median_ms", "p90_ms", "mean_ms", "min_ms", "cpu_ms", "ratio", "ratio 95% CI");
  for (size_t i = 0; i < cands.size(); ++i) {
    const Stats& s = st[i];
    std::printf("%-*s %5zu %9.3f %9.3f %9.3f %9.3f %9.3f %8.3f", static_cast<int>(w),
                cands[i].name.c_str(), s.n, s.median, s.p90, s.mean, s.min, s.cpu_median, s.ratio);
    if (i == 0)
      std::printf("  (baseline)");
    else
      std::printf("  [%.3f, %.3f]", s.ratio_lo, s.ratio_hi);
    if (cands[i].failures) std::printf("  %d FAILED", cands[i].failures);
    std::printf("\n");
  }
}

void PrintJson(const Config& cfg, const std::vector<Candidate>& cands,
               const std::vector<Stats>& st) {
  std::printf("{\"runs\": %d, \"warmup\": %d, \"order\": %s, \"candidates\": [", cfg.runs,
              cfg.warmup, JsonString(cfg.order).c_str());
  for (size_t i = 0; i < cands.size(); ++i) {
    const Stats& s = st[i];
    std::printf(
        "%s\n  {\"name\": %s, \"command\": %s, \"runs\": %zu, \"failures\": %d, \"median_ms\": %s, "
        "\"p10_ms\": %s, \"p90_ms\": %s, \"mean_ms\": %s, \"stdev_ms\": %s, \"min_ms\": %s, "
        "\"max_ms\": %s, \"cpu_median_ms\": %s, \"ratio\": %s, \"ratio_ci95\": [%s, %s]}",
        i ? "," : "", JsonString(cands[i].name).c_str(), JsonString(Join(cands[i].argv)).c_str(),
        s.n, cands[i].failures, JsonNum(s.median).c_str(), JsonNum(s.p10).c_str(),
        JsonNum(s.p90).c_str(), JsonNum(s.mean).c_str(), JsonNum(s.stdev).c_str(),
        JsonNum(s.min).c_str(), JsonNum(s.max).c_str(), JsonNum(s.cpu_median).c_str(),
        JsonNum(s.ratio).c_str(), JsonNum(s.ratio_lo).c_str(), JsonNum(s.ratio_hi).c_str());
  }
  std::printf("\n]}\n");
}

bool WriteTsv(const std::string& path, const std::vector<Candidate>& cands,
              const std::vector<Stats>& st) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::perror(path.c_str());
    return false;
  }
  std::fprintf(f,
               "name\truns\tfailures\tmedian_ms\tp10_ms\tp90_ms\tmean_ms\tstdev_ms\tmin_ms\t"
               "max_ms\tcpu_median_ms\tratio\tratio_lo\tratio_hi\n");
  for (size_t i = 0; i < cands.size(); ++i) {
    const Stats& s = st[i];
    std::fprintf(f,
                 "%s\t%zu\t%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\n",
                 cands[i].name.c_str(), s.n, cands[i].failures, s.median, s.p10, s.p90, s.mean,
                 s.stdev, s.min, s.max, s.cpu_median, s.ratio, s.ratio_lo, s.ratio_hi);
  }
  return std::fclose(f) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  std::vector<Candidate> cands = ParseArgs(argc, argv, &cfg);

  struct sigaction sa {};
  sa.sa_handler = OnAlarm;  // no SA_RESTART: the alarm interrupts wait4
  sigaction(SIGALRM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  int errfd = cfg.show_output ? -1 : memfd_create("hookbench-stderr", MFD_CLOEXEC);
  if (devnull < 0 || (!cfg.show_output && errfd < 0)) {
    std::perror("hookbench: open /dev/null or memfd_create");
    return 1;
  }

  std::mt19937 rng(cfg.seed);
  std::vector<size_t> order(cands.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<int> next_index(cands.size(), 0);
  long invocation = 0;
  bool failed = false;
  const int rounds = cfg.warmup + cfg.runs;

  for (int round = 0; round < rounds && !failed; ++round) {
    if (cfg.order == "rotate" && round > 0)
      std::rotate(order.begin(), order.begin() + 1, order.end());
    if (cfg.order == "shuffle") std::shuffle(order.begin(), order.end(), rng);
    const bool timed = round >= cfg.warmup;
    for (size_t ci : order) {
      Candidate& c = cands[ci];
      const long n = invocation++;
      const int i = next_index[ci]++;
      std::string err;
      if (!c.setup.empty() && !RunShell(Substitute(c.setup, n, i, ci), &err)) {
        std::fprintf(stderr, "hookbench: %s: setup: %s\n", c.name.c_str(), err.c_str());
        failed = true;
        break;
      }
      std::string data;
      bool ok = true;
      if (!c.stdin_file.empty() && !ReadFile(Substitute(c.stdin_file, n, i, ci), &data, &err)) {
        std::fprintf(stderr, "hookbench: %s: %s\n", c.name.c_str(), err.c_str());
        ok = false;
      }
      std::vector<std::string> args;
      for (const auto& s : c.argv) args.push_back(Substitute(s, n, i, ci));
      if (ok) {
        RunResult r = RunOnce(cfg, args, !c.stdin_file.empty(), data, devnull, errfd);
        if (r.ok && timed) {
          c.wall_ms.push_back(r.wall_ms);
          c.cpu_ms.push_back(r.cpu_ms);
        } else if (!r.ok) {
          std::fprintf(stderr, "hookbench: %s (%s run %d): `%s` failed: %s\n", c.name.c_str(),
                       timed ? "timed" : "warmup", i, Join(args).c_str(), r.error.c_str());
          ok = false;
        }
      }
      if (!ok) {
        ++c.failures;
        if (!cfg.keep_going) failed = true;
      }
      if (!c.teardown.empty() && !RunShell(Substitute(c.teardown, n, i, ci), &err))
        std::fprintf(stderr, "hookbench: %s: teardown: %s\n", c.name.c_str(), err.c_str());
      if (failed) break;
    }
  }
  if (failed) {
    std::fprintf(stderr, "hookbench: stopped at the first failure (see above)\n");
    return 1;
  }

  if (!cfg.raw_file.empty()) {
    std::FILE* f = std::fopen(cfg.raw_file.c_str(), "w");
    if (!f) {
      std::perror(cfg.raw_file.c_str());
      return 1;
    }
    std::fprintf(f, "candidate\trun\twall_ms\tcpu_ms\n");
    for (const auto& c : cands)
      for (size_t k = 0; k < c.wall_ms.size(); ++k)
        std::fprintf(f, "%s\t%zu\t%.4f\t%.4f\n", c.name.c_str(), k, c.wall_ms[k], c.cpu_ms[k]);
    std::fclose(f);
  }

  std::vector<Stats> st;
  for (const auto& c : cands) st.push_back(Summarize(c));
  for (size_t i = 0; i < cands.size(); ++i) {
    st[i].ratio = st[i].median / st[0].median;
    if (i == 0) {
      st[i].ratio_lo = st[i].ratio_hi = 1.0;
      continue;
    }
    RatioInterval(cands[i].wall_ms, cands[0].wall_ms, cfg.seed + static_cast<unsigned>(i),
                  &st[i].ratio_lo, &st[i].ratio_hi);
  }
  if (!cfg.tsv_file.empty() && !WriteTsv(cfg.tsv_file, cands, st)) return 1;
  if (cfg.json)
    PrintJson(cfg, cands, st);
  else
    PrintTable(cands, st);
  int total_failures = 0;
  for (const auto& c : cands) total_failures += c.failures;
  return total_failures ? 1 : 0;
}
