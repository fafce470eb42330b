package netguard

import (
	"net/netip"
	"testing"
)

// FuzzRefusal: every address gets a verdict without panicking; an IPv4-mapped IPv6 address gets
// the same verdict as its IPv4 form; loopback and unspecified addresses are never public.
func FuzzRefusal(f *testing.F) {
	for _, s := range []string{"8.8.8.8", "127.0.0.1", "::ffff:10.0.0.1", "192.0.2.10", "192.88.99.1", "::1", "::", "2001:db8::1", "fe80::1%eth0", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return
		}
		why := Refusal(ip)
		if ip.Is4() {
			if mapped := netip.AddrFrom16(ip.As16()); Refusal(mapped) != why {
				t.Fatalf("%s: %q, mapped %q", ip, why, Refusal(mapped))
			}
		}
		if (Loopback(ip) || ip.Unmap().IsUnspecified()) && Public(ip) {
			t.Fatalf("%s is loopback or unspecified yet public", ip)
		}
	})
}
