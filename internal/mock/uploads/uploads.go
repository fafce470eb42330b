// Package uploads is the mock's upload flow: reserving an upload (POST /uploads), judging what the
// signed PUT left behind and inspecting the bytes at finalize (POST /uploads/{assetId}/finalize),
// importing a file from a public link (POST /uploads/from-url), the per-workspace pending-upload
// cap, and the lookup that lets estimates and submits see uploads (catalog.AssetLookup).
//
// Bytes and links live in package blob, asset records in package assets; this package owns the
// state of each upload (reserved, being finalized, finalized) and writes both. Every refusal is an
// *apierr.Error. A *Service is safe for concurrent use.
package uploads

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/assets"
	"github.com/mediaspec/mediaspec/internal/mock/blob"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/ids"
	"github.com/mediaspec/mediaspec/internal/mock/media"
	"github.com/mediaspec/mediaspec/internal/mock/retention"
)

// Limits of the interface spec ("Limits").
const (
	// PutLifetime is how long a signed upload link accepts its one PUT.
	PutLifetime = contract.PutLifetime
	// PendingCap is the most pending uploads a workspace may hold.
	PendingCap = contract.PendingUploads
	// PendingWindow is how long an unfinalized reservation counts toward PendingCap. It is also
	// when an upload never finalized is forgotten, bytes included: the slot's PutLifetime plus a
	// grace of PendingWindow - PutLifetime (10 minutes) to finalize what arrived. A finalize after
	// that answers 404 not_found, as for any unknown upload.
	PendingWindow = contract.PendingWindow
	// FinalizeHold is the longest one finalize holds a file against a concurrent finalize; a hold
	// older than this (a finalize that never returned) no longer blocks.
	FinalizeHold = 2 * time.Minute
	// MaxFileName is the longest filename, in characters.
	MaxFileName = contract.MaxFilename
	// MaxURL is the longest from-url link, in characters.
	MaxURL = 2048
	// IDPrefix prefixes asset ids.
	IDPrefix = "ast_"
	// DefaultPendingBytes is the default Deps.PendingBytesLimit (1 GiB).
	DefaultPendingBytes int64 = 1 << 30
)

// Scan statuses.
const (
	ScanClean   = "clean"
	ScanFlagged = "flagged"
	ScanPending = "pending"
)

// Deps are what a Service works with. Clock, IDs, Blob and Assets are required.
type Deps struct {
	Clock  clock.Clock
	IDs    *ids.Source
	Blob   *blob.Store
	Assets *assets.Registry
	// Faults, when set, is consulted for provider_unavailable (unscoped faults only) before a
	// finalize inspects the bytes and before a from-url fetch, and for slow_scan once a finalize's
	// bytes passed every check (New enables that kind).
	Faults *faults.Store
	Logger *slog.Logger

	// Inspect judges uploaded bytes (nil: media.Inspect). Tests replace it to hold a finalize.
	Inspect func(declared string, b []byte) (media.Result, error)

	// AllowLoopbackFetch lets from-url fetch from loopback addresses (127.0.0.0/8, ::1, localhost)
	// so local test servers work. No other private or local address is ever admitted.
	AllowLoopbackFetch bool
	// Resolver resolves from-url hosts, both for the up-front check and for every dial (nil:
	// net.DefaultResolver).
	Resolver Resolver
	// Retain forgets a finalized upload this long after its last use (finalize, or an estimate,
	// submit or invoke naming it), on the service clock (0: kept until reset); see retain.go.
	Retain time.Duration
	// Retire is handed a forgotten upload's asset id to delete its bytes once the links already
	// handed out to it expired (nil: they are deleted at once). UseRetire sets it once the store
	// that keeps the links (package jobs) exists.
	Retire func(assetID string, at time.Time)
	// PendingBytesLimit bounds the bytes of every pending upload of every workspace together (the
	// declared size_bytes of reservations made in the last PendingWindow and not finalized): a
	// reservation that would pass it is refused with 429 quota_exceeded (0: DefaultPendingBytes).
	PendingBytesLimit int64
	// FetchTimeout bounds a whole from-url fetch, redirects included (0: 10 s). It is wall time:
	// it bounds real network I/O, which the service clock does not drive.
	FetchTimeout time.Duration
}

// Resolver resolves a host name to addresses (net.Resolver satisfies it).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// state is where an upload is in its life.
type state int

const (
	stateReserved  state = iota // reserved, bytes not judged yet
	stateScanning               // finalize answered pending: the content scan ends at scanDone
	stateFinalized              // inspected and scanned; answers from its stored result
)

// upload is one upload's record. Guarded by Service.mu.
type upload struct {
	id, workspaceID string
	fileName        string
	contentType     string // as declared, cleaned (aliases kept): what the reservation echoes
	size            int64
	checksum        []byte // nil when none was given
	createdAt       time.Time
	state           state
	// finalizingSince is when a running finalize took the file (zero when none runs).
	finalizingSince time.Time
	result          media.Result // set once inspected (scanning or finalized)
	// scanDone is when the content scan of a scanning upload ends (a slow_scan fault).
	scanDone time.Time
	fromURL  bool
	// lastUsed is when it was last finalized or named by an estimate, submit or invoke.
	lastUsed time.Time
}

// Service runs uploads.
type Service struct {
	d Deps

	sweep *retention.Sweeper // forgets unused finalized uploads (nil without a retention)

	mu      sync.Mutex // guards uploads, fetching
	uploads map[string]*upload
	// fetching is the bytes from-url fetches running now may hold (each its ceiling).
	fetching int64
}

// New returns a Service over d. It panics when a required dependency is missing.
func New(d Deps) *Service {
	if d.Clock == nil || d.IDs == nil || d.Blob == nil || d.Assets == nil {
		panic("uploads: Deps.Clock, IDs, Blob and Assets are required")
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Inspect == nil {
		d.Inspect = media.Inspect
	}
	if d.FetchTimeout <= 0 {
		d.FetchTimeout = 10 * time.Second
	}
	if d.PendingBytesLimit <= 0 {
		d.PendingBytesLimit = DefaultPendingBytes
	}
	if d.Faults != nil {
		d.Faults.Enable(faults.SlowScan, faults.ScanFlag)
	}
	s := &Service{d: d, uploads: map[string]*upload{}}
	s.sweep = retention.New(d.Clock, d.Retain, s.forgetDue)
	return s
}

// Reset forgets every upload (the blob store and the asset registry are reset by their owner).
func (s *Service) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uploads = map[string]*upload{}
	s.sweep.Reset()
}

// ReserveRequest is the strict POST /uploads body. Pointers tell absent from empty.
type ReserveRequest struct {
	FileName       *string `json:"filename"`
	ContentType    *string `json:"content_type"`
	SizeBytes      *int64  `json:"size_bytes"`
	ChecksumSHA256 *string `json:"checksum_sha256"`
}

// Reservation is the answer of POST /uploads (without ok).
type Reservation struct {
	AssetID                string `json:"asset_id"`
	UploadURL              string `json:"upload_url"`
	UploadExpiresAt        string `json:"upload_expires_at"`
	UploadExpiresInSeconds int    `json:"upload_expires_in_seconds"`
	Kind                   string `json:"kind"`
	ContentType            string `json:"content_type"`
	SizeBytes              int64  `json:"size_bytes"`
	MaxBytesForKind        int64  `json:"max_bytes_for_kind"`
	ContentChecked         bool   `json:"content_checked"`
	NextAction             string `json:"next_action"`
}

// Finalized is the answer of POST /uploads/{assetId}/finalize (without ok).
type Finalized struct {
	AssetID    string `json:"asset_id"`
	ScanStatus string `json:"scan_status"`
	Usable     bool   `json:"usable"`
	Kind       string `json:"kind"`
	DurationMS *int64 `json:"duration_ms"`
	NextAction string `json:"next_action"`
}

// checkFileName enforces 1..MaxFileName characters on field, and that the name can name a stored
// object (the text: "used for the stored object name only"): not blank, not . or .., no path
// separator (/ or \), no control character (NUL included) and no bidirectional control (a
// right-to-left override disguises an extension). Each refusal is 400 invalid_config naming field.
// The text bounds the length only; spec/rules.yaml UPLOAD-047 records the reading.
func checkFileName(field, name string) error {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > MaxFileName {
		return apierr.InvalidConfig(field, fmt.Sprintf("%s must be 1 to %d characters; it has %d.", field, MaxFileName, n))
	}
	if why := fileNameFault(name); why != "" {
		return apierr.InvalidConfig(field, fmt.Sprintf("%s cannot name a stored file: %s. Send the file's own name, such as cat.png.", field, why))
	}
	return nil
}

// fileNameFault says why name cannot name a stored object ("" when it can).
func fileNameFault(name string) string {
	if strings.TrimSpace(name) == "" {
		return "it is only whitespace"
	}
	if name == "." || name == ".." {
		return "it is " + name
	}
	for _, r := range name {
		switch {
		case r == '/' || r == '\\':
			return "it holds a path separator (" + string(r) + "); send the name without a directory"
		case unicode.IsControl(r):
			return fmt.Sprintf("it holds the control character U+%04X", r)
		case unicode.Is(unicode.Bidi_Control, r):
			return fmt.Sprintf("it holds the bidirectional control U+%04X, which disguises the name", r)
		}
	}
	return ""
}

// acceptedType cleans contentType and returns it with its kind, or a 400 invalid_config naming
// field and listing the accepted types.
func acceptedType(field, contentType string) (clean, kind string, err error) {
	clean = media.Clean(contentType)
	kind = media.KindOf(clean)
	if kind == "" {
		return "", "", notAccepted(field, fmt.Sprintf("%s %q is not an accepted upload type", field, contentType))
	}
	return clean, kind, nil
}

func notAccepted(field, what string) *apierr.Error {
	list := media.Accepted()
	e := apierr.InvalidConfig(field, what+"; accepted: "+strings.Join(list, ", ")+".")
	e.AcceptedContentTypes = list
	return e
}

// parseChecksum decodes a base64 SHA-256 (standard or URL alphabet, padded or not).
func parseChecksum(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == sha256.Size {
			return b, true
		}
	}
	return nil, false
}

// checkPendingLocked refuses with 429 quota_exceeded when the workspace holds PendingCap pending
// uploads (reservations made in the last PendingWindow that are not finalized), or when size more
// bytes would take the pending uploads of all workspaces, with the from-url fetches running, past
// Deps.PendingBytesLimit. s.mu must be held.
func (s *Service) checkPendingLocked(workspaceID string, size int64, now time.Time) error {
	n := 0
	held := s.fetching
	for _, u := range s.uploads {
		if u.state == stateReserved && now.Sub(u.createdAt) < PendingWindow {
			held += u.size
			if u.workspaceID == workspaceID {
				n++
			}
		}
	}
	if n >= PendingCap {
		return apierr.QuotaExceeded(fmt.Sprintf("This workspace has %d pending uploads (reserved in the last 15 minutes and not finalized); finalize them, or wait until abandoned reservations stop counting after 15 minutes.", n))
	}
	if held+size > s.d.PendingBytesLimit {
		return apierr.QuotaExceeded(fmt.Sprintf("The service holds %d bytes of pending uploads and takes at most %d; finalize pending uploads, or wait until abandoned reservations stop counting after 15 minutes.", held, s.d.PendingBytesLimit))
	}
	return nil
}

// Reserve serves POST /uploads for workspaceID: body checks (400 invalid_config naming the
// field: filename 1..255 characters; content_type accepted after cleaning, with
// accepted_content_types; size_bytes above zero and within the kind's ceiling; checksum_sha256
// base64 of 32 bytes), then the pending cap (429 quota_exceeded). It records an unlisted upload
// asset (scan_status pending) and a 300 s upload slot.
func (s *Service) Reserve(workspaceID string, req ReserveRequest) (Reservation, error) {
	if req.FileName == nil {
		return Reservation{}, apierr.InvalidConfig("filename", "filename is required: the name of the file, 1 to 255 characters.")
	}
	if err := checkFileName("filename", *req.FileName); err != nil {
		return Reservation{}, err
	}
	if req.ContentType == nil {
		return Reservation{}, notAccepted("content_type", "content_type is required")
	}
	ct, kind, err := acceptedType("content_type", *req.ContentType)
	if err != nil {
		return Reservation{}, err
	}
	if req.SizeBytes == nil {
		return Reservation{}, apierr.InvalidConfig("size_bytes", "size_bytes is required: the exact byte length of the file you will PUT.")
	}
	ceiling := media.MaxBytes(kind)
	if size := *req.SizeBytes; size <= 0 || size > ceiling {
		return Reservation{}, apierr.InvalidConfig("size_bytes", fmt.Sprintf("size_bytes must be above 0 and at most %d for %s files; it is %d.", ceiling, kind, size))
	}
	var sum []byte
	if req.ChecksumSHA256 != nil {
		var ok bool
		if sum, ok = parseChecksum(*req.ChecksumSHA256); !ok {
			return Reservation{}, apierr.InvalidConfig("checksum_sha256", "checksum_sha256 must be the base64 of the file's 32-byte SHA-256 digest.")
		}
	}

	now := s.d.Clock.Now()
	s.mu.Lock()
	if err := s.checkPendingLocked(workspaceID, *req.SizeBytes, now); err != nil {
		s.mu.Unlock()
		return Reservation{}, err
	}
	id := s.d.IDs.ID(IDPrefix)
	u := &upload{id: id, workspaceID: workspaceID, fileName: *req.FileName, contentType: ct,
		size: *req.SizeBytes, checksum: sum, createdAt: now, state: stateReserved}
	s.uploads[id] = u
	s.mu.Unlock()
	s.d.Clock.AfterFunc(PendingWindow, func() { s.forgetUnfinalized(u) })

	expires := now.Add(PutLifetime).Truncate(time.Second)
	link := s.d.Blob.ReserveUpload(blob.Slot{AssetID: id, WorkspaceID: workspaceID, ContentType: ct,
		FileName: u.fileName, Size: u.size, ExpiresAt: expires})
	size := u.size
	s.d.Assets.Put(assets.Asset{ID: id, WorkspaceID: workspaceID, Kind: kind, Source: assets.SourceUpload,
		FileName: u.fileName, ContentType: ct, SizeBytes: size, ScanStatus: ScanPending, CreatedAt: now})
	return Reservation{
		AssetID: id, UploadURL: link, UploadExpiresAt: clock.Format(expires),
		UploadExpiresInSeconds: int(PutLifetime / time.Second), Kind: kind, ContentType: ct,
		SizeBytes: size, MaxBytesForKind: ceiling, ContentChecked: kind == media.KindImage,
		NextAction: fmt.Sprintf("PUT exactly %d bytes to upload_url with Content-Type %s and no key within %d seconds, then call POST /uploads/%s/finalize.",
			size, ct, int(PutLifetime/time.Second), id),
	}, nil
}

// forgetUnfinalized drops u with its bytes and asset record when it was never finalized (and no
// finalize is running for it), so an abandoned upload does not stay resident.
func (s *Service) forgetUnfinalized(u *upload) {
	s.mu.Lock()
	cur, ok := s.uploads[u.id]
	if !ok || cur != u || u.state != stateReserved || !u.finalizingSince.IsZero() {
		s.mu.Unlock()
		return
	}
	delete(s.uploads, u.id)
	s.mu.Unlock()
	s.d.Blob.Delete(u.id)
	s.d.Assets.Delete(u.workspaceID, u.id)
}

// finalizedAnswer renders a finalized upload's stored result, or pending while its scan runs.
func finalizedAnswer(u *upload) Finalized {
	f := Finalized{AssetID: u.id, ScanStatus: u.result.ScanStatus(), Usable: u.result.Usable(),
		Kind: u.result.Kind, DurationMS: u.result.DurationMS}
	switch {
	case u.state == stateScanning:
		f.ScanStatus, f.Usable = ScanPending, false
		f.NextAction = "The content scan of " + u.id + " is still running; it is not usable yet. Call POST /uploads/" + u.id + "/finalize again shortly."
	case f.Usable:
		f.NextAction = "Use asset_id " + u.id + " in config; keep the id, not a link."
	default:
		f.NextAction = "The content check refused this file; it is never usable. Upload another file."
	}
	return f
}

// Finalize serves POST /uploads/{assetId}/finalize for workspaceID. It answers, first match wins:
//
//   - 404 not_found: no upload assetID in this workspace (unknown, wrong prefix, another
//     workspace's, or deleted by a failed finalize);
//   - 200 with the stored result when the file was already scanned (safe to repeat), or with
//     scan_status pending while a slow scan (a slow_scan fault) still runs;
//   - 429 rate_limited (retryable): another finalize is running for this file;
//   - 409 input_not_ready (retryable): the bytes are not stored yet and the link is live;
//   - 400 invalid_config: the bytes never arrived and the link expired, the PUT broke its
//     reservation (the reason is named), the bytes do not match checksum_sha256, or an inspection
//     check failed (signature, decoded type, pixel bounds, truncated) — each of these deletes the
//     file and spends the reservation, so a later finalize answers 404;
//   - 502 provider_unavailable (retryable): a queued provider_unavailable fault; nothing changes;
//   - 200 with scan_status clean (usable) or flagged (not usable); the asset becomes listed with
//     the measured kind, size and duration.
//
// A slow_scan fault of the workspace, taken once the bytes passed every check, makes the content
// scan last its seconds of service time: the finalize holds the file (a concurrent finalize
// answers 429) until the scan ends or FinalizeHold passes. In the second case it answers 200
// scan_status pending, usable false, and the asset is listed as pending; later finalizes answer
// pending at once until the scan ends, then the stored result.
func (s *Service) Finalize(ctx context.Context, workspaceID, assetID string) (Finalized, error) {
	now := s.d.Clock.Now()
	s.mu.Lock()
	u, ok := s.uploads[assetID]
	if !ok || u.workspaceID != workspaceID {
		s.mu.Unlock()
		return Finalized{}, apierr.NotFound("No upload " + assetID + " in this workspace (unknown, another workspace's, or deleted by a failed finalize); reserve again with POST /uploads.")
	}
	if u.state == stateScanning && !now.Before(u.scanDone) {
		s.scanEndedLocked(u)
	}
	if u.state != stateReserved {
		f := finalizedAnswer(u)
		s.mu.Unlock()
		return f, nil
	}
	if !u.finalizingSince.IsZero() && now.Sub(u.finalizingSince) < FinalizeHold {
		s.mu.Unlock()
		return Finalized{}, apierr.RateLimited(0, "Another finalize is running for upload "+assetID+"; call finalize again shortly.")
	}
	u.finalizingSince = now
	snap := *u
	s.mu.Unlock()

	res, err := s.finalize(ctx, &snap)
	scanDone := now
	if err == nil {
		scanDone = s.slowScan(ctx, workspaceID, now)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	cur, still := s.uploads[assetID]
	if !still || cur != u {
		// A reset (or a refusal below) dropped it meanwhile.
		if err != nil {
			return Finalized{}, err
		}
		return Finalized{}, apierr.NotFound("No upload " + assetID + " in this workspace.")
	}
	u.finalizingSince = time.Time{}
	var refusal *refused
	switch {
	case errors.As(err, &refusal):
		delete(s.uploads, assetID)
		s.d.Blob.Delete(assetID)
		s.d.Assets.Delete(workspaceID, assetID)
		s.d.Logger.Info("upload refused at finalize", "asset_id", assetID, "reason", refusal.reason)
		return Finalized{}, refusal.err
	case err != nil:
		return Finalized{}, err
	}
	u.state, u.result = stateFinalized, res
	if s.d.Clock.Now().Before(scanDone) {
		u.state, u.scanDone = stateScanning, scanDone
		s.d.Clock.AfterFunc(scanDone.Sub(s.d.Clock.Now()), func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if cur, ok := s.uploads[u.id]; ok && cur == u && u.state == stateScanning {
				s.scanEndedLocked(u)
			}
		})
	}
	s.list(u)
	return finalizedAnswer(u), nil
}

// slowScan takes a slow_scan fault of workspaceID for a finalize that took its file at start and
// returns when that scan ends (start itself without a fault). With a fault it holds the calling
// finalize until the scan ends, FinalizeHold has passed, or ctx ends, whichever comes first.
func (s *Service) slowScan(ctx context.Context, workspaceID string, start time.Time) time.Time {
	if s.d.Faults == nil {
		return start
	}
	f, ok := s.d.Faults.TakeIn(faults.SlowScan, faults.RequestOf(ctx), workspaceID, "")
	if !ok {
		return start
	}
	done := start.Add(f.Duration())
	clock.WaitUntil(ctx, s.d.Clock, minTime(done, start.Add(FinalizeHold)), nil)
	return done
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// scanEndedLocked ends u's slow scan: it answers its stored result from now on. s.mu must be held.
func (s *Service) scanEndedLocked(u *upload) {
	u.state = stateFinalized
	s.list(u)
}

// refused is a finalize refusal that deletes the file and spends the reservation.
type refused struct {
	reason string
	err    *apierr.Error
}

func (r *refused) Error() string { return r.err.Error() }

func refuse(reason, message string) error {
	return &refused{reason: reason, err: apierr.InvalidConfig("", message)}
}

// finalize judges the slot and inspects the bytes of u (a snapshot), without s.mu held.
func (s *Service) finalize(ctx context.Context, u *upload) (media.Result, error) {
	st, ok := s.d.Blob.SlotState(u.id)
	if !ok {
		return media.Result{}, refuse("gone", "The upload's bytes are gone; reserve again with POST /uploads.")
	}
	switch {
	case st.Violation != "":
		return media.Result{}, refuse("put_violation", "The PUT broke its reservation: "+st.Violation+". The reservation is spent; reserve again.")
	case !st.Used && st.Expired:
		return media.Result{}, refuse("never_arrived", "The bytes never arrived and the upload link expired; reserve again with POST /uploads.")
	case !st.Received:
		// Not PUT yet, or the PUT is still streaming.
		return media.Result{}, apierr.InputNotReady([]string{u.id}, "The bytes of upload "+u.id+" are not in storage yet; PUT them to upload_url, then finalize again.")
	}
	obj, ok := s.d.Blob.Get(u.id)
	if !ok {
		return media.Result{}, refuse("gone", "The upload's bytes are gone; reserve again with POST /uploads.")
	}
	// Read for the check only (a spooled upload is not resident otherwise); the bytes read at once
	// are bounded by Deps.PendingBytesLimit, since only pending uploads are finalized.
	content, err := obj.Content()
	if err != nil {
		return media.Result{}, refuse("gone", "The upload's bytes are gone; reserve again with POST /uploads.")
	}
	if u.checksum != nil {
		got := sha256.Sum256(content)
		if !bytes.Equal(got[:], u.checksum) {
			return media.Result{}, refuse("checksum_mismatch", "The bytes do not match checksum_sha256 of the reservation; the file was deleted. Reserve again.")
		}
	}
	if err := s.providerFault(ctx, u.workspaceID); err != nil {
		return media.Result{}, err
	}
	res, err := s.d.Inspect(u.contentType, content)
	if err != nil {
		return media.Result{}, inspectRefusal(err)
	}
	if res.Kind == media.KindImage && !res.Flagged && s.d.Faults != nil {
		// A scan_flag fault: the content scan flags this image as it flags a marked one.
		_, res.Flagged = s.d.Faults.TakeIn(faults.ScanFlag, faults.RequestOf(ctx), u.workspaceID, "")
	}
	return res, nil
}

// inspectRefusal turns a media inspection error into a refusal naming the reason.
func inspectRefusal(err error) error {
	why, ok := refusalText(err)
	if !ok {
		return apierr.ProviderUnavailable("Inspecting the file failed on the service side; try finalize again.")
	}
	return refuse(string(media.CodeOf(err)), "The file was refused: "+why+". It was deleted; reserve again with a valid file.")
}

// refusalText renders a media inspection error as "<code>: <why> (<detail>)"; ok is false for an
// error that is not an inspection verdict (a failure of the inspector itself).
func refusalText(err error) (string, bool) {
	code := media.CodeOf(err)
	if code == "" {
		return "", false
	}
	var me *media.Error
	detail := ""
	if errors.As(err, &me) && me.Detail != "" {
		detail = " (" + me.Detail + ")"
	}
	return reasonText(code) + detail, true
}

func reasonText(c media.Code) string {
	switch c {
	case media.CodeEmpty:
		return "empty: there are no bytes"
	case media.CodeNotAccepted:
		return "not_accepted: the bytes are not an accepted media type"
	case media.CodeSignatureMismatch:
		return "signature_mismatch: the real file type does not match the declared type"
	case media.CodePixelBounds:
		return fmt.Sprintf("pixel_bounds: images may have at most %d px per side and %d px in total", media.MaxImageSide, media.MaxImagePixels)
	case media.CodeTruncated:
		return "truncated: the file ends early"
	}
	return string(c) + ": the file is malformed"
}

// providerFault consumes a queued provider_unavailable fault that is not
// scoped to a capability and matches workspaceID: 502.
func (s *Service) providerFault(ctx context.Context, workspaceID string) error {
	if s.d.Faults == nil {
		return nil
	}
	if _, ok := s.d.Faults.TakeIn(faults.ProviderUnavailable, faults.RequestOf(ctx), workspaceID, ""); ok {
		return apierr.ProviderUnavailable("A dependency failed while handling the file; nothing changed. Try again.")
	}
	return nil
}

// list marks u's asset listed with its measured metadata (scan_status pending while its scan
// runs). s.mu must be held.
func (s *Service) list(u *upload) {
	if u.state == stateFinalized {
		u.lastUsed = s.d.Clock.Now()
		s.sweep.Ended(u.id, u.lastUsed)
	}
	r := u.result
	s.d.Assets.Update(u.workspaceID, u.id, func(a *assets.Asset) {
		a.Kind = r.Kind
		a.ScanStatus = r.ScanStatus()
		a.Usable = r.Usable()
		if u.state == stateScanning {
			a.ScanStatus, a.Usable = ScanPending, false
		}
		a.DurationMS = r.DurationMS
		a.Width, a.Height = nil, nil
		if r.Width > 0 && r.Height > 0 {
			w, h := r.Width, r.Height
			a.Width, a.Height = &w, &h
		}
		a.Listed = true
	})
}

// UseRetire sets Deps.Retire. The jobs store keeps the links and is built after the uploads (the
// catalogue it needs looks uploads up), so it is named here once it exists; call it before
// serving (it is not safe concurrently with the retention sweep).
func (s *Service) UseRetire(f func(assetID string, at time.Time)) { s.d.Retire = f }

// LookupUpload implements catalog.AssetLookup: the upload assetID of workspaceID, ok false when
// it does not exist or is another workspace's. Ready is true only for a finalized clean file;
// Flagged marks a file the content check refused; a reserved one, or one whose scan still runs,
// is neither (input_not_ready).
func (s *Service) LookupUpload(workspaceID, assetID string) (catalog.Upload, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.uploads[assetID]
	if !ok || u.workspaceID != workspaceID {
		return catalog.Upload{}, false
	}
	out := catalog.Upload{AssetID: u.id, Kind: media.KindOf(u.contentType)}
	if u.state == stateFinalized {
		u.lastUsed = s.d.Clock.Now() // a use: the retention counts from here
		out.Kind = u.result.Kind
		out.Ready = u.result.Usable()
		out.Flagged = u.result.Flagged
		if d := u.result.DurationMS; d != nil {
			v := *d
			out.DurationMS = &v
		}
	}
	return out, true
}

var _ catalog.AssetLookup = (*Service)(nil)
