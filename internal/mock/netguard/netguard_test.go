package netguard

import (
	"net/netip"
	"testing"
)

func TestRefusal(t *testing.T) {
	for _, c := range []struct {
		ip   string
		want string // "" when public
	}{
		{"0.0.0.0", `a "this network" address`}, {"0.1.2.3", `a "this network" address`},
		{"10.0.0.1", "a private address"}, {"172.16.0.1", "a private address"}, {"192.168.1.1", "a private address"},
		{"100.64.0.1", "a shared (carrier-grade NAT) address"}, {"100.127.255.255", "a shared (carrier-grade NAT) address"},
		{"127.0.0.1", "a loopback address"}, {"127.255.0.9", "a loopback address"}, {"::1", "a loopback address"},
		{"::ffff:127.0.0.1", "a loopback address"}, {"::ffff:10.0.0.1", "a private address"},
		{"169.254.169.254", "a link-local address"}, {"fe80::1", "a link-local address"},
		{"192.0.0.8", "an IETF protocol assignment"}, {"2001:2::1", "an IETF protocol assignment"},
		{"192.0.2.10", "a documentation address (TEST-NET-1)"}, {"198.51.100.7", "a documentation address (TEST-NET-2)"},
		{"203.0.113.9", "a documentation address (TEST-NET-3)"}, {"2001:db8::1", "a documentation address"},
		{"3fff::1", "a documentation address"},
		{"192.88.99.1", "a 6to4 relay anycast address"}, {"2002:a00:1::", "a 6to4 address"},
		{"198.18.0.1", "a benchmarking address"}, {"198.19.255.255", "a benchmarking address"},
		{"224.0.0.1", "a multicast address"}, {"239.255.255.250", "a multicast address"}, {"ff02::1", "a multicast address"},
		{"255.255.255.255", "the broadcast address"}, {"240.0.0.1", "a reserved address"},
		{"::", "an unspecified address"}, {"::a00:1", "an IPv4-compatible address"},
		{"64:ff9b::a00:1", "a NAT64 address"}, {"64:ff9b:1::1", "a local-use NAT64 address"},
		{"100::1", "a discard-only address"}, {"2001::1", "a Teredo address"},
		{"fc00::1", "a unique local address"}, {"fd12::1", "a unique local address"},
		{"fec0::1", "a site-local address"}, {"5f00::1", "a segment routing (SRv6) address"},
		// Public, including the neighbours of refused ranges.
		{"8.8.8.8", ""}, {"1.1.1.1", ""}, {"100.128.0.1", ""}, {"100.63.255.255", ""}, {"172.32.0.1", ""},
		{"172.15.255.255", ""}, {"192.0.1.1", ""}, {"192.0.3.1", ""}, {"192.88.98.1", ""}, {"198.17.255.255", ""},
		{"198.20.0.1", ""}, {"223.255.255.255", ""}, {"93.184.216.34", ""}, {"::ffff:8.8.8.8", ""},
		{"2606:4700::1111", ""}, {"2001:4860:4860::8888", ""}, {"2003::1", ""},
	} {
		if got := Refusal(netip.MustParseAddr(c.ip)); got != c.want {
			t.Errorf("Refusal(%s) = %q, want %q", c.ip, got, c.want)
		}
		if Public(netip.MustParseAddr(c.ip)) != (c.want == "") {
			t.Errorf("Public(%s) disagrees with Refusal", c.ip)
		}
	}
	if Refusal(netip.Addr{}) != "not an IP address" {
		t.Error("the zero address is not refused")
	}
}

func TestNames(t *testing.T) {
	for host, want := range map[string]bool{"localhost": true, "a.localhost": true, "localhost.example.com": false, "example.com": false} {
		if LocalName(host) != want {
			t.Errorf("LocalName(%q) != %v", host, want)
		}
	}
	for host, want := range map[string]bool{"invalid": true, "x.invalid": true, "invalid.example.com": false} {
		if InvalidName(host) != want {
			t.Errorf("InvalidName(%q) != %v", host, want)
		}
	}
}
