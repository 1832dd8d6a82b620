// Device cgroup rules: v1 rendering and parsing, coverage checks.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "device_rule.h"

using ocid::DeviceRule;
using ocid::DeviceRuleToV1;
using ocid::ListAllows;
using ocid::ParseV1DevicesList;
using ocid::RuleCovers;

namespace {

DeviceRule R(char type, int64_t major, int64_t minor, const std::string& access = "rwm") {
  DeviceRule r;
  r.type = type;
  r.major = major;
  r.minor = minor;
  r.access = access;
  return r;
}

}  // namespace

TEST_SUITE("device_rule") {
  TEST_CASE("DeviceRuleToV1") {
    CHECK(DeviceRuleToV1(R('c', 240, 0)) == "c 240:0 rwm");
    CHECK(DeviceRuleToV1(R('b', 8, 16, "r")) == "b 8:16 r");
    CHECK(DeviceRuleToV1(R('c', 136, -1)) == "c 136:* rwm");
    CHECK(DeviceRuleToV1(R('c', -1, -1, "m")) == "c *:* m");
    CHECK(DeviceRuleToV1(R('b', -1, 3, "rw")) == "b *:3 rw");
    CHECK(DeviceRuleToV1(R('a', -1, -1)) == "a *:* rwm");
    CHECK(DeviceRuleToV1(R('a', 5, 6, "r")) == "a *:* r");
    CHECK(DeviceRuleToV1(R('c', 4095, 1048575)) == "c 4095:1048575 rwm");
    CHECK(DeviceRuleToV1(DeviceRule{}) == "c *:* rwm");
  }

  TEST_CASE("ParseV1DevicesList: runc's default list") {
    const std::string text =
        "c 1:3 rwm\n"
        "c 1:5 rwm\n"
        "c 1:7 rwm\n"
        "c 1:8 rwm\n"
        "c 1:9 rwm\n"
        "c 5:0 rwm\n"
        "c 5:1 rwm\n"
        "c 5:2 rwm\n"
        "c 136:* rwm\n"
        "c 10:200 rwm\n"
        "c *:* m\n"
        "b *:* m\n";
    auto list = ParseV1DevicesList(text);
    REQUIRE(list.size() == 12);
    CHECK(list[0] == R('c', 1, 3));
    CHECK(list[8] == R('c', 136, -1));
    CHECK(list[9] == R('c', 10, 200));
    CHECK(list[10] == R('c', -1, -1, "m"));
    CHECK(list[11] == R('b', -1, -1, "m"));
  }

  TEST_CASE("ParseV1DevicesList: unconfined cgroup and no trailing newline") {
    auto list = ParseV1DevicesList("a *:* rwm");
    REQUIRE(list.size() == 1);
    CHECK(list[0] == R('a', -1, -1));
    CHECK(ParseV1DevicesList("").empty());
  }

  TEST_CASE("ParseV1DevicesList: malformed lines are skipped") {
    const std::string text =
        "c 1:3 rwm\n"
        "\n"
        "garbage\n"
        "x 1:3 rwm\n"
        "cc 1:3 rwm\n"
        "c 1-3 rwm\n"
        "c 1:3\n"
        "c a:3 rwm\n"
        "c 1:b rwm\n"
        "c -1:3 rwm\n"
        "c :3 rwm\n"
        "c 12345678901:1 rwm\n"
        "   b 8:0   rw  \n";
    auto list = ParseV1DevicesList(text);
    REQUIRE(list.size() == 2);
    CHECK(list[0] == R('c', 1, 3));
    CHECK(list[1] == R('b', 8, 0, "rw"));
  }

  TEST_CASE("RuleCovers: exact, wildcards and types") {
    const DeviceRule want = R('c', 240, 0);
    CHECK(RuleCovers(R('c', 240, 0), want));
    CHECK(RuleCovers(R('c', 240, -1), want));
    CHECK(RuleCovers(R('c', -1, 0), want));
    CHECK(RuleCovers(R('c', -1, -1), want));
    CHECK(RuleCovers(R('a', -1, -1), want));
    CHECK(RuleCovers(R('a', 1, 1), want));  // 'a' ignores numbers
    CHECK(RuleCovers(R('c', 240, 0, "mwr"), want));
    CHECK_FALSE(RuleCovers(R('c', 240, 1), want));
    CHECK_FALSE(RuleCovers(R('c', 241, 0), want));
    CHECK_FALSE(RuleCovers(R('c', 241, -1), want));
    CHECK_FALSE(RuleCovers(R('b', 240, 0), want));
    CHECK_FALSE(RuleCovers(R('b', -1, -1), want));
    CHECK(RuleCovers(R('b', 8, -1), R('b', 8, 3, "r")));
  }

  TEST_CASE("RuleCovers: partial access does not cover") {
    const DeviceRule want = R('c', 240, 0, "rwm");
    CHECK_FALSE(RuleCovers(R('c', 240, 0, "rw"), want));
    CHECK_FALSE(RuleCovers(R('c', 240, 0, "m"), want));
    CHECK_FALSE(RuleCovers(R('a', -1, -1, "r"), want));
    CHECK(RuleCovers(R('c', 240, 0, "rw"), R('c', 240, 0, "r")));
    CHECK(RuleCovers(R('c', 240, 0, "rw"), R('c', 240, 0, "wr")));
  }

  TEST_CASE("ListAllows: one covering rule is enough") {
    auto list = ParseV1DevicesList("c 1:3 rwm\nc 136:* rwm\nc 10:200 rwm\n");
    CHECK(ListAllows(list, R('c', 136, 5)));
    CHECK(ListAllows(list, R('c', 10, 200)));
    CHECK(ListAllows(list, R('c', 1, 3, "r")));
    CHECK_FALSE(ListAllows(list, R('c', 10, 201)));
    CHECK_FALSE(ListAllows(list, R('b', 1, 3)));
    CHECK_FALSE(ListAllows({}, R('c', 1, 3)));
    CHECK(ListAllows(ParseV1DevicesList("a *:* rwm\n"), R('c', 4095, 1048575)));
    CHECK(ListAllows(ParseV1DevicesList("a *:* rwm\n"), R('b', 8, 0)));
  }

  TEST_CASE("ListAllows: partial access is not enough") {
    auto list = ParseV1DevicesList("c 240:0 rw\nc *:* m\n");
    // r and w from the first rule, m from the wildcard: allowed.
    CHECK(ListAllows(list, R('c', 240, 0)));
    // Another device only gets m.
    CHECK_FALSE(ListAllows(list, R('c', 241, 0)));
    CHECK(ListAllows(list, R('c', 241, 0, "m")));
    CHECK_FALSE(ListAllows(ParseV1DevicesList("c 240:0 rw\n"), R('c', 240, 0)));
  }

  TEST_CASE("ListAllows: access spread over two rules") {
    auto list = ParseV1DevicesList("c 240:0 r\nc 240:* w\nc 240:0 m\n");
    CHECK(ListAllows(list, R('c', 240, 0)));
    CHECK_FALSE(ListAllows(list, R('c', 240, 1)));  // r and m missing
    CHECK(ListAllows(list, R('c', 240, 1, "w")));
    auto list2 = ParseV1DevicesList("c 240:0 r\nc 240:0 w\n");
    CHECK_FALSE(ListAllows(list2, R('c', 240, 0)));  // m missing
    CHECK(ListAllows(list2, R('c', 240, 0, "rw")));
  }

}  // TEST_SUITE
