// The Stats answer on the wire, as Nomad's published stats.proto declares
// it (hashicorp/nomad plugins/shared/structs/proto/stats.proto, lines
// 23-47): every value of StatValue is a google.protobuf wrapper message, so
// string_val (field 5) and bool_val (field 6) arrive as length-delimited
// fields whose payload parses as StringValue / BoolValue. A bare `bool` or
// `string` in their place (our old edited copy) is another wire format:
// Nomad's client fails on it with "Exception deserializing response".
#include <doctest/doctest.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <google/protobuf/wrappers.pb.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "nomad_service.h"
#include "slot_ids.h"

using google::protobuf::internal::WireFormatLite;
using ocid::ClusterResource;
using ocid::ClusterView;
using ocid::NomadConfig;
namespace dev = hashicorp::nomad::plugins::device;
namespace structs = hashicorp::nomad::plugins::shared::structs;

namespace {

ClusterView View() {
  ClusterResource ok;
  ok.inventory = "/etc/oci-decorator/oci-decorator.d/onload.json";
  ok.features = {"onload"};
  ok.nomad_vendor = "amd";
  ok.nomad_type = "onload";
  ok.healthy = true;
  ClusterResource bad = ok;
  bad.nomad_type = "zf";
  bad.healthy = false;
  bad.why = "required device not found on the host: /dev/sfc_char";
  ClusterView v;
  v.resources = {ok, bad};
  return v;
}

// One field of a serialized message: its wire type and, for a
// length-delimited one, the payload.
struct Field {
  int wire_type = -1;
  std::string payload;
};

// The fields of `bytes` by number (the last one wins, as for a message).
std::map<int, Field> Fields(const std::string& bytes) {
  std::map<int, Field> out;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (uint32_t tag = in.ReadTag()) {
    Field f;
    f.wire_type = WireFormatLite::GetTagWireType(tag);
    uint32_t len = 0;
    uint64_t skip = 0;
    if (f.wire_type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      REQUIRE(in.ReadVarint32(&len));
      REQUIRE(in.ReadString(&f.payload, static_cast<int>(len)));
    } else if (f.wire_type == WireFormatLite::WIRETYPE_VARINT) {
      REQUIRE(in.ReadVarint64(&skip));
    } else {
      REQUIRE(in.Skip(f.wire_type == WireFormatLite::WIRETYPE_FIXED64 ? 8 : 4));
    }
    out[WireFormatLite::GetTagFieldNumber(tag)] = f;
  }
  return out;
}

dev::StatsResponse Answer() {
  NomadConfig cfg;
  cfg.slots = 2;
  dev::StatsResponse resp;
  ocid::FillNomadStats(
      View(), cfg, std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)), &resp);
  // What Nomad receives: the bytes, parsed with the verbatim stats.proto.
  dev::StatsResponse back;
  REQUIRE(back.ParseFromString(resp.SerializeAsString()));
  return back;
}

// The statistics of device `id` in group `type` (null if none).
const dev::DeviceStats* Device(const dev::StatsResponse& r, const std::string& type,
                               const std::string& id) {
  for (const auto& g : r.groups())
    if (g.type() == type && g.instance_stats().count(id)) return &g.instance_stats().at(id);
  return nullptr;
}

}  // namespace

TEST_CASE("nomad stats: one entry per device ID, stamped with the given time") {
  dev::StatsResponse r = Answer();
  REQUIRE(r.groups_size() == 2);
  CHECK(r.groups(0).vendor() == "amd");
  CHECK(r.groups(0).type() == "onload");
  CHECK(r.groups(0).name() == "oci-decorator");
  CHECK(r.groups(0).instance_stats().size() == 2);
  const dev::DeviceStats* d = Device(r, "onload", "amd-onload-1");
  REQUIRE(d);
  CHECK(d->timestamp().seconds() == 1700000000);
  CHECK(d->timestamp().nanos() == 0);
}

TEST_CASE("nomad stats: summary is a StringValue message in field 5, not a bare string") {
  dev::StatsResponse r = Answer();
  const dev::DeviceStats* d = Device(r, "onload", "amd-onload-0");
  const dev::DeviceStats* z = Device(r, "zf", "amd-zf-0");
  REQUIRE((d && z));
  const structs::StatValue& s = d->summary();
  REQUIRE(s.has_string_val());
  CHECK(s.string_val().value() == "healthy");
  CHECK_FALSE(s.has_bool_val());
  CHECK_FALSE(s.has_float_numerator_val());
  CHECK_FALSE(s.has_int_numerator_val());

  std::map<int, Field> f = Fields(s.SerializeAsString());
  REQUIRE(f.count(5) == 1);
  CHECK(f[5].wire_type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  google::protobuf::StringValue sv;
  REQUIRE(sv.ParseFromString(f[5].payload));
  CHECK(sv.value() == "healthy");
  // StringValue's own field 1 holds the text: one more level than a bare string.
  CHECK(Fields(f[5].payload)[1].payload == "healthy");
  CHECK(Fields(s.SerializeAsString())[8].payload == "health of the group's plan on this host");

  const structs::StatValue& u = z->summary();
  google::protobuf::StringValue uv;
  REQUIRE(uv.ParseFromString(Fields(u.SerializeAsString())[5].payload));
  CHECK(uv.value() == "unhealthy");
}

TEST_CASE(
    "nomad stats: the healthy attribute is a BoolValue message in field 6, present when false") {
  dev::StatsResponse r = Answer();
  const dev::DeviceStats* d = Device(r, "onload", "amd-onload-0");
  const dev::DeviceStats* z = Device(r, "zf", "amd-zf-1");
  REQUIRE((d && z));
  REQUIRE(d->stats().attributes().count("healthy") == 1);
  REQUIRE(z->stats().attributes().count("healthy") == 1);
  const structs::StatValue& h = d->stats().attributes().at("healthy");
  REQUIRE(h.has_bool_val());
  CHECK(h.bool_val().value());
  std::map<int, Field> f = Fields(h.SerializeAsString());
  REQUIRE(f.count(6) == 1);
  CHECK(f[6].wire_type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  google::protobuf::BoolValue bv;
  REQUIRE(bv.ParseFromString(f[6].payload));
  CHECK(bv.value());

  // false: an empty BoolValue is still sent (a bare bool false would be
  // absent, and Nomad could not tell false from "not a bool").
  const structs::StatValue& n = z->stats().attributes().at("healthy");
  REQUIRE(n.has_bool_val());
  CHECK_FALSE(n.bool_val().value());
  f = Fields(n.SerializeAsString());
  REQUIRE(f.count(6) == 1);
  CHECK(f[6].wire_type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  CHECK(f[6].payload.empty());
  CHECK(n.desc() == "required device not found on the host: /dev/sfc_char");
}

// When Stats sends (nomad_service.h): Nomad's client keeps the last
// message's groups until the next replaces them (hashicorp/nomad
// client/devicemanager/instance.go lines 512-516) and reads with no
// deadline (plugins/device/client.go lines 124-153), so the stream sends on
// a change of this state and otherwise at the slow refresh.
TEST_CASE("nomad stats: the state that triggers a message is health, not the rest of the view") {
  NomadConfig cfg;
  ClusterView v = View();
  const std::string base = ocid::NomadStatsState(v, cfg);
  ClusterView same = View();
  same.resources[0].delivery.env.push_back({"EF_POLL_USEC", "100000"});  // a delivery change only
  same.warnings.push_back("a warning");
  CHECK(ocid::NomadStatsState(same, cfg) == base);
  ClusterView down = View();
  down.resources[0].healthy = false;
  down.resources[0].why = "required device not found on the host: /dev/onload";
  CHECK(ocid::NomadStatsState(down, cfg) != base);
  ClusterView other_why = View();
  other_why.resources[1].why = "another reason";
  CHECK(ocid::NomadStatsState(other_why, cfg) != base);
  ClusterView gone = View();
  gone.resources.pop_back();
  CHECK(ocid::NomadStatsState(gone, cfg) != base);
  NomadConfig more = cfg;
  more.slots = 128;
  CHECK(ocid::NomadStatsState(v, more) != base);

  using std::chrono::milliseconds;
  CHECK(ocid::NomadStatsRefresh(milliseconds(1000)) == std::chrono::seconds(60));
  CHECK(ocid::NomadStatsRefresh(milliseconds(300000)) == milliseconds(300000));
}

// At the slots bound, one message for four groups (the Onload inventory's
// three and another) stays far below gRPC's default 4 MiB receive limit,
// which a Nomad client built with defaults applies.
TEST_CASE("nomad stats: a message at 1024 slots fits gRPC's default limit") {
  NomadConfig cfg;
  cfg.slots = ocid::kMaxSlots;
  ClusterView v = View();
  ClusterResource a = v.resources[0], b = v.resources[0];
  a.nomad_type = "onloadzf";
  b.nomad_vendor = "example";
  b.nomad_type = "tool";
  v.resources.push_back(a);
  v.resources.push_back(b);
  dev::StatsResponse resp;
  ocid::FillNomadStats(v, cfg, std::chrono::system_clock::now(), &resp);
  size_t bytes = resp.ByteSizeLong();
  MESSAGE("Stats message, 4 groups x 1024 slots: "
          << bytes << " bytes, " << bytes / (4 * ocid::kMaxSlots) << " per instance");
  CHECK(resp.groups_size() == 4);
  CHECK(bytes < 4u * 1024 * 1024 / 4);
}
