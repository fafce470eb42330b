// Package netguard is the address policy of every outbound fetch the mock makes (webhook
// deliveries and registrations, uploads from a link): the one table of address ranges that are
// never a public destination, and the questions asked of it. It decides on addresses and names
// only; it never dials. Hosts is the resolver callers inject: the control API's overrides in front
// of the system resolver.
package netguard

import (
	"net/netip"
	"strings"
)

// Range is one row of the table: a prefix and what it is, as a refusal names it.
type Range struct {
	Prefix netip.Prefix
	What   string
}

func r(prefix, what string) Range { return Range{netip.MustParsePrefix(prefix), what} }

// NonPublic is the table of ranges that are never a public destination: every row of the IANA
// IPv4 and IPv6 special-purpose address registries that is not globally reachable, plus the
// ranges outside those registries that are local by design (private, multicast) and the IPv6
// ranges that embed or reach an IPv4 address (compatible, NAT64, 6to4, Teredo). An IPv4-mapped
// address (::ffff:0:0/96) is judged by the IPv4 address it carries. The first match names the
// range, so narrower rows come before wider ones.
var NonPublic = []Range{
	// IPv4.
	r("0.0.0.0/8", "a \"this network\" address"),
	r("10.0.0.0/8", "a private address"),
	r("100.64.0.0/10", "a shared (carrier-grade NAT) address"),
	r("127.0.0.0/8", "a loopback address"),
	r("169.254.0.0/16", "a link-local address"),
	r("172.16.0.0/12", "a private address"),
	r("192.0.0.0/24", "an IETF protocol assignment"),
	r("192.0.2.0/24", "a documentation address (TEST-NET-1)"),
	r("192.88.99.0/24", "a 6to4 relay anycast address"),
	r("192.168.0.0/16", "a private address"),
	r("198.18.0.0/15", "a benchmarking address"),
	r("198.51.100.0/24", "a documentation address (TEST-NET-2)"),
	r("203.0.113.0/24", "a documentation address (TEST-NET-3)"),
	r("224.0.0.0/4", "a multicast address"),
	r("255.255.255.255/32", "the broadcast address"),
	r("240.0.0.0/4", "a reserved address"),
	// IPv6.
	r("::/128", "an unspecified address"),
	r("::1/128", "a loopback address"),
	r("::/96", "an IPv4-compatible address"),
	r("64:ff9b::/96", "a NAT64 address"),
	r("64:ff9b:1::/48", "a local-use NAT64 address"),
	r("100::/64", "a discard-only address"),
	r("100:0:0:1::/64", "a dummy address"),
	r("2001::/32", "a Teredo address"),
	r("2001:db8::/32", "a documentation address"),
	r("2001::/23", "an IETF protocol assignment"),
	r("2002::/16", "a 6to4 address"),
	r("3fff::/20", "a documentation address"),
	r("5f00::/16", "a segment routing (SRv6) address"),
	r("fc00::/7", "a unique local address"),
	r("fe80::/10", "a link-local address"),
	r("fec0::/10", "a site-local address"),
	r("ff00::/8", "a multicast address"),
}

// Refusal says why ip is not a public destination ("a private address", "a documentation
// address (TEST-NET-1)", ...), or "" when it is public. An invalid address is "not an IP address".
func Refusal(ip netip.Addr) string {
	// A zone (fe80::1%eth0, ::1%0) makes Prefix.Contains false for every row: judge the address
	// without it (found by FuzzRefusal).
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return "not an IP address"
	}
	for _, row := range NonPublic {
		if row.Prefix.Contains(ip) {
			return row.What
		}
	}
	return ""
}

// Public reports whether ip may be reached by an outbound fetch.
func Public(ip netip.Addr) bool { return Refusal(ip) == "" }

// Loopback reports whether ip is a loopback address (127.0.0.0/8 or ::1, mapped or not).
func Loopback(ip netip.Addr) bool { return ip.Unmap().IsLoopback() }

// LocalName reports whether host (lowercase, without a trailing dot) is a loopback name:
// localhost or a name under .localhost (RFC 6761), which is never looked up.
func LocalName(host string) bool { return host == "localhost" || strings.HasSuffix(host, ".localhost") }

// InvalidName reports whether host is invalid or under .invalid (RFC 6761): it never resolves.
func InvalidName(host string) bool { return host == "invalid" || strings.HasSuffix(host, ".invalid") }
