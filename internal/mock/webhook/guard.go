package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/netguard"
)

// Resolver looks up a hostname's addresses. *net.Resolver satisfies it; tests inject a fake so
// that nothing leaves loopback.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// MaxURLLength is the longest endpoint URL accepted, in characters.
const MaxURLLength = contract.MaxWebhookURL

// Reasons an address check fails. They are the `error` values of a refused delivery attempt and
// the causes of a refused registration.
var (
	// ErrPrivateAddress: the host is, or resolves to, a private, local or otherwise non-public
	// address.
	ErrPrivateAddress = errors.New("private_address")
	// ErrUnresolvable: the hostname does not resolve.
	ErrUnresolvable = errors.New("unresolvable")
)

// guard applies the address policy (package netguard) to webhooks: which URLs may be registered and which addresses may be dialled.
// Its methods are safe for concurrent use (it holds no mutable state).
type guard struct {
	resolver      Resolver
	allowLoopback bool
	lookupTimeout time.Duration
}

// loopbackHost reports whether host is one of the two loopback hosts --allow-loopback-webhooks
// admits: 127.0.0.1 and localhost (nothing else private: not ::1, not 127.0.0.2).
func loopbackHost(host string) bool { return host == "127.0.0.1" || host == "localhost" }

// loopbackAddr reports whether ip is one of the two loopback addresses --allow-loopback-webhooks
// admits for a name that resolves to it (the addresses of its loopback hosts): 127.0.0.1 and ::1.
func loopbackAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip == netip.AddrFrom4([4]byte{127, 0, 0, 1}) || ip == netip.IPv6Loopback()
}

// normalize parses and checks an endpoint URL without resolving it, and returns its stored form:
// scheme and host lowercased, the default port (443 for https, 80 for http) dropped, the fragment
// dropped; path and query kept as sent. The error says what is wrong in a sentence.
func (g guard) normalize(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, errors.New("url is empty; send the https URL of your receiver")
	}
	if n := len([]rune(raw)); n > MaxURLLength {
		return nil, fmt.Errorf("url is %d characters; at most %d are accepted", n, MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Host == "" {
		return nil, errors.New("url must be an absolute https URL such as https://hooks.example.com/mediaspec")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.User != nil {
		return nil, errors.New("url must not carry a username or password")
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return nil, errors.New("url has no host")
	}
	port := u.Port()
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("url port %q is not a port number", port)
		}
	}
	loop := g.allowLoopback && loopbackHost(host)
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && loop:
	default:
		return nil, errors.New("url must use https (public https only)")
	}
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	hostPort := host
	if strings.Contains(host, ":") {
		hostPort = "[" + host + "]"
	}
	if port != "" {
		hostPort += ":" + port
	}
	u.Host = hostPort
	u.Fragment, u.RawFragment = "", ""
	if !loop {
		if ip, err := netip.ParseAddr(host); err == nil && !netguard.Public(ip) {
			return nil, fmt.Errorf("url names %s, a private or local address: %w", host, ErrPrivateAddress)
		}
		if netguard.LocalName(host) {
			return nil, fmt.Errorf("url names %s, a local address: %w", host, ErrPrivateAddress)
		}
	}
	return u, nil
}

// resolve returns the addresses host may be dialled at, applying the policy: a loopback host
// admitted by allowLoopback maps to its fixed loopback addresses; an IP literal must be public; a
// name must resolve and every address it resolves to must be public, or with allowLoopback
// 127.0.0.1 or ::1 (one other answer refuses the whole name, so a mixed answer cannot reach
// inside). Names under .invalid never resolve and
// names under .localhost are local (RFC 6761); neither is looked up.
func (g guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if g.allowLoopback && loopbackHost(host) {
		if host == "localhost" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if !netguard.Public(ip) {
			return nil, fmt.Errorf("%s: %w", host, ErrPrivateAddress)
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	if netguard.LocalName(host) {
		return nil, fmt.Errorf("%s: %w", host, ErrPrivateAddress)
	}
	if netguard.InvalidName(host) {
		return nil, fmt.Errorf("%s: %w", host, ErrUnresolvable)
	}
	lctx, cancel := context.WithTimeout(ctx, g.lookupTimeout)
	defer cancel()
	addrs, err := g.resolver.LookupIPAddr(lctx, host)
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("%s: %w", host, ErrUnresolvable)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if ok && g.allowLoopback && loopbackAddr(ip) {
			out = append(out, ip.Unmap())
			continue
		}
		if !ok || !netguard.Public(ip) {
			return nil, fmt.Errorf("%s resolves to %s: %w", host, a.IP, ErrPrivateAddress)
		}
		out = append(out, ip.Unmap())
	}
	return out, nil
}

// dialContext is the delivery transport's dialer: it resolves the host through the policy at
// each dial (so an address check and the connection use the same answer) and dials the checked
// addresses in turn.
func (g guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var first error
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// dialTLSContext is the delivery transport's TLS dialer: dialContext (so the address is checked
// at this dial), then a TLS handshake naming the URL's host. With allowLoopback a loopback peer's
// certificate is not verified (a test receiver on 127.0.0.1 serves a self-signed one); every
// other peer is verified as usual.
func (g guard) dialTLSContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	conn, err := g.dialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if ap, err := netip.ParseAddrPort(conn.RemoteAddr().String()); err == nil && g.allowLoopback && netguard.Loopback(ap.Addr()) {
		cfg.InsecureSkipVerify = true //nolint:gosec // loopback test receivers only, under --allow-loopback-webhooks
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return tc, nil
}
