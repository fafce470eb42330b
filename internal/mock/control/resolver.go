package control

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/netguard"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// RegisterResolver adds the resolver override over hosts: PUT /resolver/{host} (the name now
// resolves to the body's addresses, at registration and at every later attempt or fetch) and
// DELETE /resolver/{host}. A reset drops every override (the caller wires hosts.Reset).
func (h *Handler) RegisterResolver(hosts *netguard.Hosts) {
	h.Handle("PUT /resolver/{host}", func(w http.ResponseWriter, r *http.Request) error {
		host, ok := netguard.NormalizeHost(r.PathValue("host"))
		if !ok {
			return apierr.InvalidConfig("host", "The path names no host name: use a DNS name such as hooks.conformance.test, not an address.")
		}
		var b struct {
			Addresses *[]string `json:"addresses"`
		}
		if err := wire.DecodeStrict(r, &b, 0); err != nil {
			return err
		}
		if b.Addresses == nil || len(*b.Addresses) > netguard.MaxHostAddresses {
			return apierr.InvalidConfig("addresses", fmt.Sprintf("addresses is required: up to %d IP addresses (none: the name does not resolve).", netguard.MaxHostAddresses))
		}
		addrs := make([]netip.Addr, 0, len(*b.Addresses))
		for _, s := range *b.Addresses {
			a, err := netip.ParseAddr(s)
			if err != nil || a.Zone() != "" {
				return apierr.InvalidConfig("addresses", fmt.Sprintf("%q is not an IP address.", s))
			}
			addrs = append(addrs, a)
		}
		if err := hosts.Set(host, addrs); err != nil {
			if errors.Is(err, netguard.ErrPublicOverride) {
				return apierr.InvalidConfig("addresses", "An override may name only loopback or other non-public addresses: it tests the address guard and never sends traffic to a real host.")
			}
			return apierr.InvalidConfig("addresses", err.Error()+".")
		}
		out := make([]string, len(addrs))
		for i, a := range addrs {
			out[i] = a.String()
		}
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "host": host, "addresses": out})
	})
	h.Handle("DELETE /resolver/{host}", func(w http.ResponseWriter, r *http.Request) error {
		host, _ := netguard.NormalizeHost(r.PathValue("host"))
		if host == "" || !hosts.Delete(host) {
			return apierr.NotFound("No resolver override for " + r.PathValue("host") + ".")
		}
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "host": host, "deleted": true})
	})
}
