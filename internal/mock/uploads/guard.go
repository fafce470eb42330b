package uploads

import (
	"fmt"
	"net/netip"

	"github.com/mediaspec/mediaspec/internal/mock/netguard"
)

// addrRefusal says why a from-url fetch may not reach ip, or "" when it may: the address policy
// of package netguard, with loopback addresses (127.0.0.0/8, ::1) admitted when allowLoopback.
func addrRefusal(ip netip.Addr, allowLoopback bool) string {
	if allowLoopback && netguard.Loopback(ip) {
		return ""
	}
	return netguard.Refusal(ip)
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
