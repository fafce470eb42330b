package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

type noDNS struct{ asked []string }

func (n *noDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	n.asked = append(n.asked, host)
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestHostsOverrides(t *testing.T) {
	next := &noDNS{}
	h := NewHosts(next)
	ctx := context.Background()
	if err := h.Set("Rebind.Test.", []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("fd00::1")}); err != nil {
		t.Fatal(err)
	}
	if got, err := h.LookupIPAddr(ctx, "rebind.test"); err != nil || len(got) != 2 || got[0].IP.String() != "127.0.0.1" {
		t.Fatalf("LookupIPAddr: %v %v", got, err)
	}
	if got, err := h.LookupNetIP(ctx, "ip6", "REBIND.test"); err != nil || len(got) != 1 || got[0] != netip.MustParseAddr("fd00::1") {
		t.Fatalf("LookupNetIP ip6: %v %v", got, err)
	}
	if len(next.asked) != 0 {
		t.Fatalf("an overridden name reached the next resolver: %v", next.asked)
	}
	if _, err := h.LookupIPAddr(ctx, "other.test"); err == nil || len(next.asked) != 1 {
		t.Fatalf("another name: %v %v", err, next.asked)
	}
	for _, c := range []struct {
		host  string
		addrs []string
	}{
		{"rebind.test", []string{"93.184.216.34"}},
		{"rebind.test", []string{"127.0.0.1", "2606:4700::1"}},
		{"10.0.0.1", []string{"127.0.0.1"}},
		{"under_score.test", []string{"127.0.0.1"}},
		{"", []string{"127.0.0.1"}},
	} {
		var addrs []netip.Addr
		for _, a := range c.addrs {
			addrs = append(addrs, netip.MustParseAddr(a))
		}
		if err := h.Set(c.host, addrs); err == nil {
			t.Errorf("Set(%q, %v) accepted", c.host, c.addrs)
		} else if len(c.addrs) > 0 && c.host == "rebind.test" && !errors.Is(err, ErrPublicOverride) {
			t.Errorf("Set(%q, %v): %v, want ErrPublicOverride", c.host, c.addrs, err)
		}
	}
	if err := h.Set("rebind.test", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.LookupIPAddr(ctx, "rebind.test"); err == nil || len(next.asked) != 1 {
		t.Fatalf("an override without addresses resolved (or asked the next resolver): %v", err)
	}
	if !h.Delete("REBIND.TEST") || h.Delete("rebind.test") {
		t.Fatal("Delete")
	}
	_ = h.Set("a.test", []netip.Addr{netip.MustParseAddr("::1")})
	h.Reset()
	if _, err := h.LookupNetIP(ctx, "ip", "a.test"); err == nil {
		t.Fatal("an override survived Reset")
	}
}
