package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
)

// MaxHostAddresses is the most addresses one override may hold.
const MaxHostAddresses = 8

// ErrPublicOverride refuses an override to a public address: overrides exist to test the guard
// (rebinding a name to a loopback or private address), never to send traffic to a real host.
var ErrPublicOverride = errors.New("an override may name only loopback or other non-public addresses")

// Hosts is a resolver with a table of overrides in front of another resolver: a name in the table
// resolves to its addresses, any other name goes to the next resolver. It is the control API's
// resolver override (PUT /_control/v1/resolver/{host}); the guard still judges every address it
// answers, at registration and at each dial. It is safe for concurrent use.
type Hosts struct {
	next interface {
		LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
	}

	mu    sync.Mutex // guards table
	table map[string][]netip.Addr
}

// NewHosts returns an empty table in front of next (nil: net.DefaultResolver).
func NewHosts(next interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}) *Hosts {
	if next == nil {
		next = net.DefaultResolver
	}
	return &Hosts{next: next, table: map[string][]netip.Addr{}}
}

// NormalizeHost lowercases host and drops a trailing dot; ok is false when it is not a DNS name
// (empty, an IP literal, over 253 characters, or a label that is empty, over 63 characters or
// holds anything but letters, digits and hyphens).
func NormalizeHost(host string) (string, bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || len(host) > 253 {
		return "", false
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return "", false
	}
	for label := range strings.SplitSeq(host, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return "", false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", false
			}
		}
	}
	return host, true
}

// Set makes host (a name NormalizeHost admits) resolve to addrs (at most MaxHostAddresses, none
// public; see ErrPublicOverride; none at all: the name does not resolve), replacing any earlier
// override of it.
func (h *Hosts) Set(host string, addrs []netip.Addr) error {
	name, ok := NormalizeHost(host)
	if !ok {
		return fmt.Errorf("%q is not a host name", host)
	}
	if len(addrs) > MaxHostAddresses {
		return fmt.Errorf("an override holds at most %d addresses", MaxHostAddresses)
	}
	for _, a := range addrs {
		if Public(a) {
			return fmt.Errorf("%s is public: %w", a, ErrPublicOverride)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.table[name] = append([]netip.Addr{}, addrs...)
	return nil
}

// Delete drops the override of host and reports whether there was one.
func (h *Hosts) Delete(host string) bool {
	name, _ := NormalizeHost(host)
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.table[name]
	delete(h.table, name)
	return ok
}

// Reset drops every override.
func (h *Hosts) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.table = map[string][]netip.Addr{}
}

func (h *Hosts) lookup(host string) ([]netip.Addr, bool) {
	name, ok := NormalizeHost(host)
	if !ok {
		return nil, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	addrs, ok := h.table[name]
	return slices.Clone(addrs), ok
}

// LookupIPAddr answers an overridden host from the table (an override without addresses does
// not resolve) and any other from the next resolver.
func (h *Hosts) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	if addrs, ok := h.lookup(host); ok {
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		out := make([]net.IPAddr, len(addrs))
		for i, a := range addrs {
			out[i] = net.IPAddr{IP: a.AsSlice(), Zone: a.Zone()}
		}
		return out, nil
	}
	return h.next.LookupIPAddr(ctx, host)
}

// LookupNetIP answers like LookupIPAddr in the form package uploads asks for (network "ip",
// "ip4" or "ip6" filters the overridden addresses).
func (h *Hosts) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	addrs, ok := h.lookup(host)
	if !ok {
		res, err := h.next.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, a := range res {
			if ip, ok := netip.AddrFromSlice(a.IP); ok {
				addrs = append(addrs, ip.Unmap())
			}
		}
	}
	out := addrs[:0:0]
	for _, a := range addrs {
		if network == "ip" || (network == "ip4") == a.Unmap().Is4() {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}
