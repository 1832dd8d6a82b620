// go-plugin's handshake pieces: the protocol version list and the line.
#include <doctest/doctest.h>

#include "go_plugin.h"

TEST_CASE("go-plugin: PLUGIN_PROTOCOL_VERSIONS must include 2") {
  CHECK(ocid::ProtocolVersionsInclude2("2"));
  CHECK(ocid::ProtocolVersionsInclude2("1,2,3"));
  CHECK(ocid::ProtocolVersionsInclude2(" 3, 2"));
  CHECK(ocid::ProtocolVersionsInclude2(""));  // an old client that does not say
  CHECK_FALSE(ocid::ProtocolVersionsInclude2("1"));
  CHECK_FALSE(ocid::ProtocolVersionsInclude2("12,20"));
  CHECK_FALSE(ocid::ProtocolVersionsInclude2("1,3"));
}

TEST_CASE("go-plugin: the handshake line") {
  CHECK(ocid::HandshakeLine("/tmp/oci-decorator-nomad.abc/plugin.sock") ==
        "1|2|unix|/tmp/oci-decorator-nomad.abc/plugin.sock|grpc\n");
}
