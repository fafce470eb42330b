package uploads

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/media"
	"github.com/mediaspec/mediaspec/internal/mock/netguard"
)

// MaxRedirects is how many redirects a from-url fetch follows; each hop is checked like the link.
const MaxRedirects = 3

// FromURLRequest is the strict POST /uploads/from-url body. Pointers tell absent from empty.
type FromURLRequest struct {
	URL         *string `json:"url"`
	FileName    *string `json:"filename"`
	ContentType *string `json:"content_type"`
}

// Imported is the answer of POST /uploads/from-url (without ok).
type Imported struct {
	AssetID     string `json:"asset_id"`
	SourceURL   string `json:"source_url"`
	Kind        string `json:"kind"`
	ContentType string `json:"content_type"`
	SizeBytes   int64  `json:"size_bytes"`
	ScanStatus  string `json:"scan_status"`
	Usable      bool   `json:"usable"`
	DurationMS  *int64 `json:"duration_ms"`
	NextAction  string `json:"next_action"`
}

// FromURL serves POST /uploads/from-url for workspaceID. Checks, first failing wins:
//
//   - 400 invalid_config: url missing, empty or over 2048 characters; filename not 1..255
//     characters; content_type not accepted (accepted_content_types); url not http(s), carrying
//     userinfo, or naming a private or local address (every resolved address is checked; with
//     Deps.AllowLoopbackFetch loopback alone is admitted);
//   - 429 quota_exceeded: the workspace's pending-upload cap is full;
//   - 502 provider_unavailable: a queued provider_unavailable fault;
//   - the fetch (Deps.FetchTimeout in all, at most MaxRedirects redirects, each hop re-checked,
//     every dial re-checked against the address policy so a DNS rebinding cannot pass): 400 for a
//     disallowed address on any hop, a web page (text/html), a served type not accepted, a
//     content_type that differs from the served type, a size over the kind's ceiling (enforced
//     while reading); 502 when the host does not resolve, the connection fails, the link answers
//     a non-2XX status, there are too many redirects, or the fetch times out;
//   - the finalize inspection (400 invalid_config naming the reason).
//
// On success the file is stored, its asset listed, and the upload recorded as finalized.
func (s *Service) FromURL(ctx context.Context, workspaceID string, req FromURLRequest) (Imported, error) {
	if req.URL == nil {
		return Imported{}, apierr.InvalidConfig("url", "url is required: a direct http(s) link to the media file.")
	}
	raw := *req.URL
	if n := utf8.RuneCountInString(raw); n < 1 || n > MaxURL {
		return Imported{}, apierr.InvalidConfig("url", fmt.Sprintf("url must be 1 to %d characters; it has %d.", MaxURL, n))
	}
	if req.FileName != nil {
		if err := checkFileName("filename", *req.FileName); err != nil {
			return Imported{}, err
		}
	}
	var given string
	if req.ContentType != nil {
		ct, _, err := acceptedType("content_type", *req.ContentType)
		if err != nil {
			return Imported{}, err
		}
		given = ct
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Imported{}, apierr.InvalidConfig("url", "url is not a valid link: "+err.Error()+".")
	}
	if err := s.checkLink(u); err != nil {
		return Imported{}, err
	}

	// A fetch holds up to the largest ceiling it may read in memory: it counts toward the pending
	// bytes while it runs.
	reading := media.MaxBytes(media.KindVideo)
	if given != "" {
		reading = media.MaxBytes(media.KindOf(given))
	}
	s.mu.Lock()
	err = s.checkPendingLocked(workspaceID, reading, s.d.Clock.Now())
	if err == nil {
		s.fetching += reading
	}
	s.mu.Unlock()
	if err != nil {
		return Imported{}, err
	}
	defer func() {
		s.mu.Lock()
		s.fetching -= reading
		s.mu.Unlock()
	}()
	if err := s.providerFault(ctx, workspaceID); err != nil {
		return Imported{}, err
	}

	body, served, err := s.fetch(ctx, u, given)
	if err != nil {
		return Imported{}, err
	}
	declared := given
	if media.KindOf(served) != "" {
		if given != "" && media.Normalize(given) != media.Normalize(served) {
			return Imported{}, apierr.InvalidConfig("content_type", fmt.Sprintf("content_type is %s but the link serves %s; send the served type or leave content_type out.", given, served))
		}
		declared = served
	}
	res, err := s.d.Inspect(declared, body)
	if err != nil {
		why, ok := refusalText(err)
		if !ok {
			return Imported{}, apierr.ProviderUnavailable("Inspecting the file failed on the service side; try again.")
		}
		e := apierr.InvalidConfig("url", "The linked file was refused: "+why+". Nothing was stored; link a valid file.")
		if media.CodeOf(err) == media.CodeNotAccepted {
			e.AcceptedContentTypes = media.Accepted()
		}
		return Imported{}, e
	}
	if ceiling := media.MaxBytes(res.Kind); int64(len(body)) > ceiling {
		return Imported{}, apierr.InvalidConfig("url", fmt.Sprintf("The linked %s file has %d bytes, over the %d byte ceiling.", res.Kind, len(body), ceiling))
	}
	ct := served
	switch {
	case media.KindOf(ct) != "":
	case given != "":
		ct = given
	default:
		ct = res.ContentType
	}
	name := defaultFileName(u)
	if req.FileName != nil {
		name = *req.FileName
	}

	now := s.d.Clock.Now()
	s.mu.Lock()
	id := s.d.IDs.ID(IDPrefix)
	up := &upload{id: id, workspaceID: workspaceID, fileName: name, contentType: ct, size: int64(len(body)),
		createdAt: now, state: stateFinalized, result: res, fromURL: true}
	s.uploads[id] = up
	s.d.Blob.Put(blob.Object{AssetID: id, WorkspaceID: workspaceID, ContentType: ct, FileName: name, Bytes: body, StoredAt: now})
	s.d.Assets.Put(assets.Asset{ID: id, WorkspaceID: workspaceID, Kind: res.Kind, Source: assets.SourceUpload,
		FileName: name, ContentType: ct, SizeBytes: int64(len(body)), CreatedAt: now})
	s.list(up)
	f := finalizedAnswer(up)
	s.mu.Unlock()
	return Imported{AssetID: id, SourceURL: raw, Kind: res.Kind, ContentType: ct, SizeBytes: int64(len(body)),
		ScanStatus: f.ScanStatus, Usable: f.Usable, DurationMS: res.DurationMS, NextAction: f.NextAction}, nil
}

// defaultFileName is the last segment of the link's path, or "download" when it has none.
func defaultFileName(u *url.URL) string {
	name := path.Base(u.Path)
	if utf8.RuneCountInString(name) > MaxFileName {
		name = string([]rune(name)[:MaxFileName])
	}
	if name == "/" || fileNameFault(name) != "" {
		name = "download"
	}
	return name
}

// checkLink is the static check of a link (the first one and every redirect): http(s), no
// userinfo, a host, and no disallowed literal address or loopback name.
func (s *Service) checkLink(u *url.URL) error {
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return apierr.InvalidConfig("url", "url must be an http or https link; "+orNone(u.Scheme)+" is not fetched.")
	case u.User != nil:
		return apierr.InvalidConfig("url", "url must not carry a username or password.")
	case u.Hostname() == "":
		return apierr.InvalidConfig("url", "url has no host.")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return apierr.InvalidConfig("url", "url has an invalid port.")
		}
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := addrRefusal(ip, s.d.AllowLoopbackFetch); why != "" {
			return privateRefusal(&addrError{addr: host, why: why})
		}
	} else if netguard.LocalName(host) && !s.d.AllowLoopbackFetch {
		return privateRefusal(&addrError{addr: host, why: "a loopback name"})
	}
	return nil
}

func orNone(scheme string) string {
	if scheme == "" {
		return "a link without a scheme"
	}
	return scheme + ":"
}

func privateRefusal(e *addrError) *apierr.Error {
	return apierr.InvalidConfig("url", "url must not point at a private or local address: "+e.Error()+".")
}

// resolve returns the addresses of host (a literal address is itself).
func (s *Service) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	r := s.d.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err == nil && len(ips) == 0 {
		err = fmt.Errorf("%s has no address", host)
	}
	return ips, err
}

// checkAddrs resolves the link's host and refuses when any address is disallowed.
func (s *Service) checkAddrs(ctx context.Context, u *url.URL) error {
	host := u.Hostname()
	ips, err := s.resolve(ctx, host)
	if err != nil {
		return apierr.ProviderUnavailable("Fetching the link failed: its host " + host + " does not resolve.")
	}
	for _, ip := range ips {
		if why := addrRefusal(ip, s.d.AllowLoopbackFetch); why != "" {
			return privateRefusal(&addrError{host: host, addr: ip.Unmap().String(), why: why})
		}
	}
	return nil
}

// client builds the fetching client: no proxy, no automatic redirects, and a dialer that resolves
// through Deps.Resolver and refuses any disallowed address at connect time.
func (s *Service) client() *http.Client {
	guard := func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &addrError{addr: address, why: "not an IP address"}
		}
		if why := addrRefusal(ap.Addr(), s.d.AllowLoopbackFetch); why != "" {
			return &addrError{addr: ap.Addr().Unmap().String(), why: why}
		}
		return nil
	}
	dialer := &net.Dialer{Timeout: s.d.FetchTimeout, Control: guard}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			ips, err := s.resolve(ctx, host)
			if err != nil {
				return nil, err
			}
			var first error
			for _, ip := range ips {
				c, err := dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
				if err == nil {
					return c, nil
				}
				if first == nil {
					first = err
				}
			}
			return nil, first
		},
		DisableKeepAlives:     true,
		TLSHandshakeTimeout:   s.d.FetchTimeout,
		ResponseHeaderTimeout: s.d.FetchTimeout,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// fetch downloads u, following at most MaxRedirects redirects, and returns the body and the
// served content type (cleaned). want is the caller's content_type ("" when none).
func (s *Service) fetch(ctx context.Context, u *url.URL, want string) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.d.FetchTimeout)
	defer cancel()
	hc := s.client()
	defer hc.CloseIdleConnections()
	cur := u
	for hop := 0; ; hop++ {
		if err := s.checkAddrs(ctx, cur); err != nil {
			return nil, "", err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cur.String(), nil)
		if err != nil {
			return nil, "", apierr.InvalidConfig("url", "url is not a valid link.")
		}
		req.Header.Set("User-Agent", "Mediaspec-Fetch/1.0")
		req.Header.Set("Accept", "image/*, video/*, audio/*")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, "", fetchError(ctx, err)
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			resp.Body.Close()
			if hop >= MaxRedirects {
				return nil, "", apierr.ProviderUnavailable(fmt.Sprintf("Fetching the link failed: more than %d redirects.", MaxRedirects))
			}
			next, err := cur.Parse(loc)
			if err != nil {
				return nil, "", apierr.ProviderUnavailable("Fetching the link failed: a redirect named an unreadable location.")
			}
			if err := s.checkLink(next); err != nil {
				return nil, "", err
			}
			cur = next
			continue
		}
		body, served, err := s.readBody(resp, want)
		resp.Body.Close()
		if err != nil && ctx.Err() != nil {
			return nil, "", fetchError(ctx, err)
		}
		return body, served, err
	}
}

// readBody checks the answer of the last hop and reads it within the size ceiling.
func (s *Service) readBody(resp *http.Response, want string) ([]byte, string, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, "", apierr.ProviderUnavailable(fmt.Sprintf("Fetching the link failed: it answered HTTP %d.", resp.StatusCode))
	}
	served := media.Clean(resp.Header.Get("Content-Type"))
	switch {
	case served == "text/html" || served == "application/xhtml+xml":
		return nil, "", notAccepted("url", "The link answers a web page ("+served+"), not a media file; link the file itself")
	case media.KindOf(served) != "", served == "", served == "application/octet-stream", served == "binary/octet-stream":
	default:
		return nil, "", notAccepted("url", "The link serves "+served+", not an accepted upload type")
	}
	ceiling := media.MaxVideoBytes // the largest; the measured kind's ceiling is checked after inspection
	switch {
	case media.KindOf(served) != "":
		ceiling = media.MaxBytes(media.KindOf(served))
	case want != "":
		ceiling = media.MaxBytes(media.KindOf(want))
	}
	if resp.ContentLength > ceiling {
		return nil, "", apierr.InvalidConfig("url", fmt.Sprintf("The linked file has %d bytes, over the %d byte ceiling.", resp.ContentLength, ceiling))
	}
	// A declared length sizes the buffer once (io.ReadAll would double it up to the file's size,
	// clearing and copying each step: tens of megabytes for a file near a ceiling).
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, ceiling+1)); err != nil {
		return nil, "", apierr.ProviderUnavailable("Fetching the link failed while reading the file: " + err.Error() + ".")
	}
	body := buf.Bytes()
	if int64(len(body)) > ceiling {
		return nil, "", apierr.InvalidConfig("url", fmt.Sprintf("The linked file is over the %d byte ceiling.", ceiling))
	}
	return body, served, nil
}

// fetchError maps a transport error: a refused address is 400, anything else (time-out
// included) 502.
func fetchError(ctx context.Context, err error) error {
	var ae *addrError
	if errors.As(err, &ae) {
		return privateRefusal(ae)
	}
	var te interface{ Timeout() bool }
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &te) && te.Timeout()) {
		return apierr.ProviderUnavailable("Fetching the link timed out.")
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return apierr.ProviderUnavailable("Fetching the link failed: its host does not resolve.")
	}
	return apierr.ProviderUnavailable("Fetching the link failed: the connection could not be made or broke.")
}
