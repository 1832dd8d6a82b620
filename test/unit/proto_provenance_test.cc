// Vendored protocol files are verbatim: every PROVENANCE file of the tree
// (src/plugin/proto/PROVENANCE; test/cri/proto/PROVENANCE where it exists)
// lists, one line per file, "<sha256>  <path>  <owner/repo>  <upstream path>
// <commit>", and each listed file must hash to its sha256, and every .proto
// under the PROVENANCE's directory must be listed. A failure names the file
// and both hashes. SHA-256 (FIPS 180-4) is implemented here, so the test
// needs no library the hook would not link anyway.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_tree.h"

namespace fs = std::filesystem;

namespace {

// --- SHA-256 ---------------------------------------------------------------------------------

constexpr std::array<uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void Block(std::array<uint32_t, 8>& h, const unsigned char* p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 |
           p[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 =
        k + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
    uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

// Lower-case hex, as sha256sum prints it.
std::string Sha256(const std::string& data) {
  std::array<uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string m = data;
  uint64_t bits = uint64_t(data.size()) * 8;
  m += '\x80';
  while (m.size() % 64 != 56) m += '\0';
  for (int i = 7; i >= 0; --i) m += char((bits >> (8 * i)) & 0xff);
  for (size_t i = 0; i < m.size(); i += 64)
    Block(h, reinterpret_cast<const unsigned char*>(m.data() + i));
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h)
    for (int s = 28; s >= 0; s -= 4) out += hex[(v >> s) & 0xf];
  return out;
}

// --- PROVENANCE ------------------------------------------------------------------------------

bool ReadFile(const fs::path& p, std::string* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

bool IsHex(const std::string& s, size_t n) {
  return s.size() == n && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Every problem of the PROVENANCE text `prov` for directory `dir`, one line
// each, prefixed with `name` (how the PROVENANCE is named to the reader).
std::vector<std::string> ProvenanceProblems(const std::string& name, const fs::path& dir,
                                            const std::string& prov) {
  std::vector<std::string> problems;
  std::set<std::string> listed;
  std::istringstream lines(prov);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string sha, path, repo, upstream, commit, extra;
    fields >> sha >> path >> repo >> upstream >> commit;
    const std::string where = name + ":" + std::to_string(n) + ": ";
    if (!IsHex(sha, 64) || path.empty() || repo.find('/') == std::string::npos ||
        upstream.empty() || !IsHex(commit, 40) || (fields >> extra)) {
      problems.push_back(
          where + "not \"<sha256>  <path>  <owner/repo>  <upstream path>  <commit>\": " + line);
      continue;
    }
    if (path[0] == '/' || path.find("..") != std::string::npos) {
      problems.push_back(where + path + ": not a path inside " + dir.string());
      continue;
    }
    listed.insert(path);
    std::string text;
    if (!ReadFile(dir / path, &text)) {
      problems.push_back(where + path + ": listed but cannot be read");
      continue;
    }
    std::string got = Sha256(text);
    if (got != sha)
      problems.push_back(where + path + ": sha256 is " + got + ", PROVENANCE lists " + sha + " (" +
                         repo + " " + upstream + " at " + commit +
                         "); vendored files must be byte-identical");
  }
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".proto") continue;
    std::string rel = fs::relative(e.path(), dir).generic_string();
    if (!listed.count(rel))
      problems.push_back(name + ": " + rel + " is not listed (every .proto needs its upstream)");
  }
  return problems;
}

// The PROVENANCE files of the source tree, relative to it.
std::vector<std::string> ProvenanceFiles() {
  std::vector<std::string> out = {"src/plugin/proto/PROVENANCE"};
  if (fs::exists(fs::path(OCID_SOURCE_DIR) / "test/cri/proto/PROVENANCE"))
    out.push_back("test/cri/proto/PROVENANCE");
  return out;
}

}  // namespace

TEST_CASE("Sha256 gives FIPS 180-4's example digests") {
  CHECK(Sha256("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the padding spills into a second block.
  CHECK(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Sha256(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("every vendored protocol file is byte-identical to the upstream its PROVENANCE names") {
  for (const std::string& name : ProvenanceFiles()) {
    fs::path prov = fs::path(OCID_SOURCE_DIR) / name;
    std::string text;
    REQUIRE_MESSAGE(ReadFile(prov, &text), (name + ": cannot be read"));
    std::vector<std::string> problems = ProvenanceProblems(name, prov.parent_path(), text);
    for (const std::string& p : problems) FAIL_CHECK(p);
    CHECK_MESSAGE(problems.empty(), name);
    // Not vacuous: the plugin's list holds the files the build compiles.
    if (name == "src/plugin/proto/PROVENANCE")
      for (const char* f : {"plugins/shared/structs/proto/stats.proto",
                            "deviceplugin/v1beta1/api.proto", "go-plugin/grpc_controller.proto"})
        CHECK_MESSAGE(text.find(std::string("  ") + f + "  ") != std::string::npos,
                      (name + " lists " + f));
  }
}

TEST_CASE("the PROVENANCE check names a changed file with both hashes, and an unlisted .proto") {
  ocid::test::TempTree d;
  REQUIRE(!d.path().empty());
  const std::string orig = "syntax = \"proto3\";\n";
  d.File("a/x.proto", orig + "// edited\n");
  d.File("b/y.proto", orig);
  d.File("b/notes.txt", "not a proto");
  const std::string commit(40, 'a');
  std::string prov =
      "# header\n" + Sha256(orig) + "  a/x.proto  owner/repo  up/x.proto  " + commit + "\n";
  std::vector<std::string> p = ProvenanceProblems("PROVENANCE", d.path(), prov);
  REQUIRE(p.size() == 2);
  CHECK(p[0] == "PROVENANCE:2: a/x.proto: sha256 is " + Sha256(orig + "// edited\n") +
                    ", PROVENANCE lists " + Sha256(orig) + " (owner/repo up/x.proto at " + commit +
                    "); vendored files must be byte-identical");
  CHECK(p[1] == "PROVENANCE: b/y.proto is not listed (every .proto needs its upstream)");

  // A listed file that is missing, a malformed line, a path out of the directory.
  prov = Sha256(orig) + "  gone.proto  o/r  gone.proto  " + commit + "\n" +
         "deadbeef  b/y.proto\n" + Sha256(orig) + "  ../y.proto  o/r  y.proto  " + commit + "\n";
  p = ProvenanceProblems("P", d.path(), prov);
  REQUIRE(p.size() == 5);
  CHECK(p[0] == "P:1: gone.proto: listed but cannot be read");
  CHECK(p[1].rfind("P:2: not \"<sha256>", 0) == 0);
  CHECK(p[2].rfind("P:3: ../y.proto: not a path inside ", 0) == 0);
  // Neither file is listed now (sorted order is not promised by the walk).
  CHECK(((p[3] == "P: a/x.proto is not listed (every .proto needs its upstream)" &&
          p[4] == "P: b/y.proto is not listed (every .proto needs its upstream)") ||
         (p[4] == "P: a/x.proto is not listed (every .proto needs its upstream)" &&
          p[3] == "P: b/y.proto is not listed (every .proto needs its upstream)")));
}
