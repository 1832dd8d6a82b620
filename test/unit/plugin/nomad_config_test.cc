// The Nomad plugin's config: go-cty msgpack decoding (good, wrong types
// naming the key, unknown keys, garbage) and Go duration parsing.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "nomad_config.h"
#include "slot_ids.h"

using ocid::DecodeNomadConfig;
using ocid::NomadConfig;
using ocid::ParseGoDuration;

namespace {

// A tiny msgpack writer for the test cases (fixmap, fixstr/str8, bool,
// nil, ints), written by hand so the test does not trust the decoder's
// library to produce its own input.
struct Pack {
  std::string b;
  Pack& Map(size_t n) {
    b += static_cast<char>(0x80 | n);
    return *this;
  }
  Pack& Str(const std::string& s) {
    if (s.size() < 32) {
      b += static_cast<char>(0xa0 | s.size());
    } else {
      b += '\xd9';
      b += static_cast<char>(s.size());
    }
    b += s;
    return *this;
  }
  Pack& Bool(bool v) {
    b += v ? '\xc3' : '\xc2';
    return *this;
  }
  Pack& Nil() {
    b += '\xc0';
    return *this;
  }
  Pack& Int(int v) {  // 0..127 as a positive fixint, else int32
    if (v >= 0 && v < 128) {
      b += static_cast<char>(v);
    } else {
      b += '\xd2';
      for (int s = 24; s >= 0; s -= 8)
        b += static_cast<char>((static_cast<unsigned>(v) >> s) & 0xff);
    }
    return *this;
  }
  Pack& F64(double d) {
    b += '\xcb';
    uint64_t u;
    static_assert(sizeof u == sizeof d);
    std::memcpy(&u, &d, sizeof u);
    for (int s = 56; s >= 0; s -= 8) b += static_cast<char>((u >> s) & 0xff);
    return *this;
  }
};

NomadConfig Defaults() {
  NomadConfig c;
  c.config_dir = "/etc/oci-decorator/oci-decorator.d";
  c.host_root = "/";
  c.host_path_root = "/";
  return c;
}

std::string Decode(const std::string& bytes, NomadConfig* cfg) {
  std::string err;
  bool ok = DecodeNomadConfig(bytes, cfg, &err);
  CHECK(ok == err.empty());
  return err;
}

}  // namespace

TEST_CASE("nomad config: every key, as go-cty encodes the whole object") {
  NomadConfig c = Defaults();
  Pack p;
  p.Map(7)
      .Str("config_dir")
      .Str("/opt/inv")
      .Str("fingerprint_period")
      .Str("30s")
      .Str("host_path_root")
      .Nil()
      .Str("host_root")
      .Str("/host")
      .Str("mount_onload")
      .Bool(false)
      .Str("set_preload")
      .Bool(false)
      .Str("slots")
      .Int(8);
  CHECK(Decode(p.b, &c) == "");
  CHECK(c.config_dir == "/opt/inv");
  CHECK(c.host_root == "/host");
  CHECK(c.host_path_root == "/host");  // follows host_root when not given
  CHECK_FALSE(c.mount_onload);
  CHECK_FALSE(c.set_preload);
  CHECK(c.fingerprint_period == std::chrono::seconds(30));
  CHECK(c.slots == 8);
}

TEST_CASE("nomad config: nulls, an empty message and nil keep the defaults") {
  NomadConfig c = Defaults();
  Pack p;
  p.Map(3).Str("slots").Nil().Str("set_preload").Nil().Str("host_root").Nil();
  CHECK(Decode(p.b, &c) == "");
  CHECK(c.slots == 64);
  CHECK(c.set_preload);
  CHECK(c.mount_onload);
  CHECK(c.fingerprint_period == std::chrono::seconds(60));
  CHECK(Decode("", &c) == "");
  CHECK(Decode(std::string(1, '\xc0'), &c) == "");
  // go-cty's unknown value (fixext1, type 0) is treated as null.
  Pack u;
  u.Map(1).Str("slots");
  u.b += std::string("\xd4\x00\x00", 3);
  CHECK(Decode(u.b, &c) == "");
  CHECK(c.slots == 64);
  // ... and a refined unknown (ext 0x0c with a map: {1: false}, "not null").
  Pack r;
  r.Map(1).Str("config_dir");
  r.b += std::string("\xc7\x03\x0c\x81\x01\xc2", 6);
  CHECK(Decode(r.b, &c) == "");
  CHECK(c.config_dir == "/etc/oci-decorator/oci-decorator.d");
  // Another extension is not a value of ours.
  Pack x;
  x.Map(1).Str("slots");
  x.b += std::string("\xd5\x05\x00\x00", 4);
  CHECK(Decode(x.b, &c) == "config key \"slots\": expected a number, got an extension value");
}

TEST_CASE("nomad config: host_path_root given apart from host_root") {
  NomadConfig c = Defaults();
  Pack p;
  p.Map(2).Str("host_root").Str("/host").Str("host_path_root").Str("/");
  CHECK(Decode(p.b, &c) == "");
  CHECK(c.host_root == "/host");
  CHECK(c.host_path_root == "/");
}

TEST_CASE("nomad config: a wrong type names the key and changes nothing") {
  NomadConfig c = Defaults();
  Pack p;
  p.Map(2).Str("slots").Int(4).Str("set_preload").Str("yes");
  std::string err = Decode(p.b, &c);
  CHECK(err == "config key \"set_preload\": expected a bool, got a string");
  CHECK(c.slots == 64);  // all or nothing
  Pack q;
  q.Map(1).Str("slots").Str("8");
  CHECK(Decode(q.b, &c) == "config key \"slots\": expected a number, got a string");
  Pack r;
  r.Map(1).Str("config_dir").Bool(true);
  CHECK(Decode(r.b, &c) == "config key \"config_dir\": expected a string, got a bool");
  Pack s;
  s.Map(1).Str("fingerprint_period").Int(60);
  CHECK(Decode(s.b, &c) == "config key \"fingerprint_period\": expected a string, got a number");
}

// Issue 20: slots above 1024 are refused with one line naming the key, the
// value and the limit (slot_ids.h: what a node can use; Stats and memory
// grow with it). 100000 was accepted before.
TEST_CASE("nomad config: slots is bounded at 1024") {
  NomadConfig c = Defaults();
  Pack top;
  top.Map(1).Str("slots").Int(1024);
  CHECK(Decode(top.b, &c) == "");
  CHECK(c.slots == 1024);
  for (int n : {1025, 100000}) {
    NomadConfig d = Defaults();
    Pack q;
    q.Map(1).Str("slots").Int(n);
    CHECK(Decode(q.b, &d) == "config key \"slots\": " + std::to_string(n) +
                                 " slots is above the limit of 1024 per resource (a slot counts a "
                                 "container; see oci-decorator-device-plugin(8), Slots)");
    CHECK(d.slots == 64);
  }
  Pack huge;
  huge.Map(1).Str("slots").F64(1e300);
  CHECK(Decode(huge.b, &c)
            .find("config key \"slots\": out of range slots is above the limit of 1024") == 0);
  CHECK(ocid::SlotsRefusal(64) == "");
  CHECK(ocid::SlotsRefusal(ocid::kMaxSlots) == "");
  CHECK(ocid::SlotsRefusal(ocid::kMaxSlots + 1) != "");
}

TEST_CASE("nomad config: values out of range name the key") {
  NomadConfig c = Defaults();
  Pack p;
  p.Map(1).Str("slots").Int(0);
  CHECK(Decode(p.b, &c) == "config key \"slots\": 0 slots is below the minimum of 1");
  Pack f;
  f.Map(1).Str("slots").F64(2.5);
  CHECK(Decode(f.b, &c) == "config key \"slots\": expected a whole number");
  Pack g;
  g.Map(1).Str("slots").F64(16.0);
  CHECK(Decode(g.b, &c) == "");
  CHECK(c.slots == 16);
  Pack n;
  n.Map(1).Str("slots").Int(-3);
  CHECK(Decode(n.b, &c) == "config key \"slots\": -3 slots is below the minimum of 1");
  Pack d;
  d.Map(1).Str("fingerprint_period").Str("500ms");
  CHECK(Decode(d.b, &c) ==
        "config key \"fingerprint_period\": \"500ms\" must be between 1s and 24h");
  Pack e;
  e.Map(1).Str("fingerprint_period").Str("soon");
  CHECK(Decode(e.b, &c).find("config key \"fingerprint_period\": invalid duration \"soon\"") == 0);
  Pack rel;
  rel.Map(1).Str("host_root").Str("host");
  CHECK(Decode(rel.b, &c) == "config key \"host_root\": expected an absolute path, got \"host\"");
}

TEST_CASE("nomad config: unknown keys are refused, with or without a value") {
  NomadConfig c = Defaults();
  Pack p;
  p.Map(1).Str("need_nic").Bool(true);
  CHECK(Decode(p.b, &c) == "unknown config key \"need_nic\"");
  Pack q;
  q.Map(1).Str("ignored_interfaces").Nil();
  CHECK(Decode(q.b, &c) == "unknown config key \"ignored_interfaces\"");
}

TEST_CASE("nomad config: garbage is a clear error, never a crash") {
  NomadConfig c = Defaults();
  CHECK(Decode("\xc1", &c).find("msgpack_config is not valid msgpack") == 0);  // reserved byte
  CHECK(Decode("\x81\xa5slots", &c).find("msgpack_config is not valid msgpack") == 0);  // truncated
  CHECK(Decode("\x92\x01\x02", &c) == "msgpack_config: expected a map of config keys, got a list");
  CHECK(Decode("\x81\x01\x02", &c) == "msgpack_config: a key is a number, not a string");
  CHECK(Decode(std::string("\x80\x00", 2), &c) ==
        "msgpack_config: 1 bytes of garbage after the config map");
  // A header claiming 4 billion entries fails on the limits, fast.
  CHECK(Decode("\xdf\xff\xff\xff\xff", &c).find("msgpack_config is not valid msgpack") == 0);
  CHECK(Decode("\xdd\xff\xff\xff\xff", &c).find("msgpack_config is not valid msgpack") == 0);
  // Nested too deep.
  CHECK(Decode(std::string(100, '\x91') + "\xc0", &c).find("msgpack_config is not valid msgpack") ==
        0);
  // Every prefix and one-byte corruption of a good config: no crash.
  Pack good;
  good.Map(2).Str("slots").Int(300).Str("config_dir").Str("/x");
  for (size_t n = 0; n < good.b.size(); ++n) {
    NomadConfig d = Defaults();
    std::string e;
    DecodeNomadConfig(good.b.substr(0, n), &d, &e);
    for (int v : {0x00, 0xff, 0xc1, 0xdf}) {
      std::string bad = good.b;
      bad[n] = static_cast<char>(v);
      DecodeNomadConfig(bad, &d, &e);
    }
  }
  CHECK(c.slots == 64);
}

TEST_CASE("go durations") {
  std::chrono::nanoseconds d{};
  std::string err;
  CHECK(ParseGoDuration("1m", &d, &err));
  CHECK(d == std::chrono::minutes(1));
  CHECK(ParseGoDuration("30s", &d, &err));
  CHECK(d == std::chrono::seconds(30));
  CHECK(ParseGoDuration("1h30m", &d, &err));
  CHECK(d == std::chrono::minutes(90));
  CHECK(ParseGoDuration("1.5s", &d, &err));
  CHECK(d == std::chrono::milliseconds(1500));
  CHECK(ParseGoDuration("250ms", &d, &err));
  CHECK(d == std::chrono::milliseconds(250));
  CHECK(ParseGoDuration("2us", &d, &err));
  CHECK(d == std::chrono::microseconds(2));
  CHECK(ParseGoDuration("0", &d, &err));
  CHECK(d.count() == 0);
  for (const char* bad :
       {"", "1", "m", "1x", "-1s", "1..5s", "1s ", " 1s", "1d", "99999999999999h"}) {
    INFO(bad);
    CHECK_FALSE(ParseGoDuration(bad, &d, &err));
    CHECK(err.find("invalid duration") == 0);
  }
}

TEST_CASE("nomad config: profile names a profile, or none") {
  NomadConfig c = Defaults();
  Pack p;
  p.Map(1).Str("profile").Str("latency");
  CHECK(Decode(p.b, &c) == "");
  CHECK(c.profile == "latency");
  CHECK(ocid::WatchOptions(c, ocid::PluginOptions{}).profile == "latency");
  Pack bad;
  bad.Map(1).Str("profile").Str("../x");
  CHECK(Decode(bad.b, &c) ==
        "config key \"profile\": \"../x\" is not a profile name ([A-Za-z0-9_.-], 1 to 64)");
  CHECK(c.profile == "latency");
  Pack none;
  none.Map(1).Str("profile").Str("");
  CHECK(Decode(none.b, &c) == "");
  CHECK(c.profile.empty());
}
