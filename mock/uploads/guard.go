package uploads

import (
	"fmt"
	"net/netip"
)

// blockedPrefixes are address ranges a from-url fetch never reaches (besides what the netip
// predicates catch): shared address space, "this network", protocol assignments, benchmarking,
// documentation, reserved and broadcast, and IPv6 translation, documentation and 6to4 ranges that
// can embed or reach a private IPv4 address.
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // this network
		"100.64.0.0/10",   // shared address space (CGNAT)
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // TEST-NET-1
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // TEST-NET-2
		"203.0.113.0/24",  // TEST-NET-3
		"240.0.0.0/4",     // reserved, and 255.255.255.255 broadcast
		"64:ff9b::/96",    // NAT64
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard-only
		"2001::/23",       // IETF protocol assignments (Teredo, ORCHIDv2, ...)
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4
		"fec0::/10",       // deprecated site-local
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// addrRefusal says why a from-url fetch may not reach ip, or "" when it may. With allowLoopback,
// loopback addresses (127.0.0.0/8, ::1) are admitted and nothing else private.
func addrRefusal(ip netip.Addr, allowLoopback bool) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "not an IP address"
	case ip.IsLoopback():
		if allowLoopback {
			return ""
		}
		return "a loopback address"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return fmt.Sprintf("a reserved or special-purpose address (%s)", p)
		}
	}
	return ""
}

// addrError is a from-url refusal of an address; it surfaces through the HTTP client's errors.
type addrError struct {
	host, addr, why string
}

func (e *addrError) Error() string {
	if e.host != "" && e.host != e.addr {
		return fmt.Sprintf("%s resolves to %s, %s", e.host, e.addr, e.why)
	}
	return fmt.Sprintf("%s is %s", e.addr, e.why)
}
