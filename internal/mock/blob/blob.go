// Package blob keeps the bytes of the mock's files — finished outputs and uploaded media — and the
// links to them: HMAC-signed, expiring download links (GET) and single-use upload links (PUT), both
// served by the mock itself outside /api/v1 (DESIGN.md: Links).
//
// A download link is {public}/files/{asset_id}/{file_name}?expires={unix}&sig={hmac}; appending
// download=1 makes it answer with Content-Disposition: attachment. An upload link is
// {public}/upload-slots/{asset_id}?expires={unix}&sig={hmac}. Signatures cover the path and the
// expiry, so a link cannot be re-pointed or extended. Expiry is judged on the injected clock.
//
// A Store is safe for concurrent use.
package blob

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"hash/maphash"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/spec/judge"
)

// Path prefixes the Store's handler serves: the reference's link routes, named once in package
// judge for the proxy and the audit that watch them.
const (
	FilesPath  = judge.FilesPath
	UploadPath = judge.UploadPath
)

// Object is one stored file. Its bytes are kept in a spool file (File: uploads and imports, so a
// large file is never resident in the heap), kept in memory (Bytes: small files put by Put), or
// made again on every download (Render, with Size their length: generated outputs, which are
// deterministic from seed and request, so a resident output costs its metadata only).
type Object struct {
	AssetID     string
	WorkspaceID string
	ContentType string
	FileName    string
	Bytes       []byte
	File        string                 // the spool file holding the bytes ("" when none)
	Size        int64                  // len(Bytes), of the spool file, or of what Render makes
	Render      func() ([]byte, error) // makes the bytes when Bytes is nil and there is no File
	StoredAt    time.Time
}

// Content returns the object's bytes: Bytes, the spool file read whole, or what Render makes.
// For a spooled object prefer Open, which does not hold the file in memory.
func (o Object) Content() ([]byte, error) {
	if o.File != "" {
		return os.ReadFile(o.File)
	}
	if o.Bytes != nil || o.Render == nil {
		return o.Bytes, nil
	}
	return o.Render()
}

// Open returns a reader of the object's bytes; the caller closes it. A spooled object is read
// from its file (a file deleted meanwhile is an error).
func (o Object) Open() (io.ReadCloser, error) {
	if o.File != "" {
		return os.Open(o.File)
	}
	b, err := o.Content()
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// spoolAbove is the size above which Put keeps an object's bytes in a spool file, not the heap.
const spoolAbove = 64 << 10

// Slot is an upload link's contract: one PUT of exactly Size bytes of ContentType before ExpiresAt.
type Slot struct {
	AssetID     string
	WorkspaceID string
	ContentType string
	FileName    string
	Size        int64
	ExpiresAt   time.Time
}

// SlotState is what became of an upload slot, for finalize to judge. A PUT that broke a rule of
// the slot is recorded (Violation) and its bytes are not stored as the file.
type SlotState struct {
	Slot
	Used      bool      // a PUT was accepted for this slot (the link is spent)
	Received  bool      // the bytes are stored as the slot's object
	Violation string    // why the accepted PUT did not store the file ("" when it did)
	PutAt     time.Time // when the PUT arrived
	Expired   bool      // the slot's lifetime has passed (at the time of the query)
}

// Store holds objects and upload slots in memory.
type Store struct {
	clock     clock.Clock
	key       []byte
	publicURL func() string
	signers   sync.Pool // of *signer over key: every read of a finished generation signs links
	sigSeed   maphash.Seed
	sigs      [sigCacheSize]atomic.Pointer[cachedSig] // recent signatures, by a hash of path and expiry

	mu    sync.Mutex // guards objs, slots, dir
	objs  map[string]*Object
	slots map[string]*SlotState
	dir   string // the spool directory, made at the first spooled file ("" before)
}

// New makes a Store whose links are signed with key and start with publicURL() (scheme and host,
// read at each link so a late-bound listener address works).
func New(clk clock.Clock, key []byte, publicURL func() string) *Store {
	if len(key) == 0 {
		panic("blob: empty signing key")
	}
	s := &Store{clock: clk, key: append([]byte(nil), key...), publicURL: publicURL,
		objs: map[string]*Object{}, slots: map[string]*SlotState{}, sigSeed: maphash.MakeSeed()}
	s.signers.New = func() any { return &signer{mac: hmac.New(sha256.New, s.key)} }
	return s
}

// Put stores (or replaces) an object under its asset id. Bytes above 64 KiB go to a spool file
// (when the spool cannot be written they stay in memory).
func (s *Store) Put(o Object) {
	if o.File == "" && (o.Bytes != nil || o.Render == nil) {
		o.Size = int64(len(o.Bytes))
		if len(o.Bytes) > spoolAbove {
			if f, err := s.spoolFile(); err == nil {
				_, werr := f.Write(o.Bytes)
				if cerr := f.Close(); werr == nil && cerr == nil {
					o.File, o.Bytes = f.Name(), nil
				} else {
					_ = os.Remove(f.Name())
				}
			}
		}
		if o.File == "" {
			o.Bytes = append([]byte(nil), o.Bytes...)
		}
	}
	if o.StoredAt.IsZero() {
		o.StoredAt = s.clock.Now()
	}
	s.mu.Lock()
	old := s.objs[o.AssetID]
	s.objs[o.AssetID] = &o
	s.mu.Unlock()
	removeSpool(old)
}

// spoolFile creates a new file in the spool directory (made at the first call, under the
// system's temporary directory); Close removes the directory.
func (s *Store) spoolFile() (*os.File, error) {
	s.mu.Lock()
	dir := s.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "mediaspec-blob-")
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.dir, dir = d, d
	}
	s.mu.Unlock()
	return os.CreateTemp(dir, "upload-")
}

// removeSpool deletes o's spool file, if any. A download streaming from it keeps reading (an
// open file outlives its name).
func removeSpool(o *Object) {
	if o != nil && o.File != "" {
		_ = os.Remove(o.File)
	}
}

// Close deletes every spool file and the spool directory. The Store must not be used after.
func (s *Store) Close() {
	s.mu.Lock()
	dir := s.dir
	s.dir = ""
	s.objs = map[string]*Object{}
	s.slots = map[string]*SlotState{}
	s.mu.Unlock()
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// Get returns a copy of the object's metadata and its bytes (shared; callers must not modify them).
func (s *Store) Get(assetID string) (Object, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[assetID]
	if !ok {
		return Object{}, false
	}
	return *o, true
}

// Delete forgets an object and its upload slot; links to it then answer 404.
func (s *Store) Delete(assetID string) {
	s.mu.Lock()
	old := s.objs[assetID]
	delete(s.objs, assetID)
	delete(s.slots, assetID)
	s.mu.Unlock()
	removeSpool(old)
}

// Reset forgets everything, spool files included.
func (s *Store) Reset() {
	s.mu.Lock()
	old := s.objs
	s.objs = map[string]*Object{}
	s.slots = map[string]*SlotState{}
	s.mu.Unlock()
	for _, o := range old {
		removeSpool(o)
	}
}

// DownloadURL signs a link to the object lasting ttl from now. It does not check that the object
// exists: a link to a deleted object answers 404.
func (s *Store) DownloadURL(assetID, fileName string, ttl time.Duration) (link string, expiresAt time.Time) {
	expiresAt = s.clock.Now().Add(ttl).Truncate(time.Second)
	p := FilesPath + assetID + "/" + url.PathEscape(fileName)
	return s.sign(p, expiresAt), expiresAt
}

// LinkStamp is what every link DownloadURL signs now with ttl depends on besides the object: the
// public URL and the expiry (Unix seconds). Equal stamps sign equal links to one object.
func (s *Store) LinkStamp(ttl time.Duration) (publicURL string, expires int64) {
	return s.publicURL(), s.clock.Now().Add(ttl).Truncate(time.Second).Unix()
}

// ReserveUpload records an upload slot and returns its single-use PUT link.
func (s *Store) ReserveUpload(slot Slot) string {
	slot.ExpiresAt = slot.ExpiresAt.Truncate(time.Second)
	s.mu.Lock()
	s.slots[slot.AssetID] = &SlotState{Slot: slot}
	s.mu.Unlock()
	return s.sign(UploadPath+slot.AssetID, slot.ExpiresAt)
}

// SlotState reports what became of the upload slot of assetID.
func (s *Store) SlotState(assetID string) (SlotState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.slots[assetID]
	if !ok {
		return SlotState{}, false
	}
	out := *st
	out.Expired = !s.clock.Now().Before(st.ExpiresAt)
	return out, true
}

// sign returns {public}{path}?expires={unix}&sig={hmac}: the query url.Values would encode (keys
// sorted; digits, a minus and hex need no escaping), built in one piece.
func (s *Store) sign(path string, expiresAt time.Time) string {
	var exp [20]byte
	e := strconv.AppendInt(exp[:0], expiresAt.Unix(), 10)
	pub := s.publicURL()
	var b strings.Builder
	b.Grow(len(pub) + len(path) + len("?expires=&sig=") + len(e) + 2*sha256.Size)
	b.WriteString(pub)
	b.WriteString(path)
	b.WriteString("?expires=")
	b.Write(e)
	b.WriteString("&sig=")
	var sum [2 * sha256.Size]byte
	b.Write(s.appendMAC(sum[:0], path, e))
	return b.String()
}

// mac is the hex HMAC of a link's path and expiry as written in its query.
func (s *Store) mac(path, exp string) string {
	var sum [2 * sha256.Size]byte
	return string(s.appendMAC(sum[:0], path, []byte(exp)))
}

// signer is a reusable HMAC over the Store's key and the scratch space of one signature.
type signer struct {
	mac hash.Hash
	msg []byte
	sum []byte
}

// sigCacheSize is how many recent signatures a Store keeps (a direct-mapped cache), and
// sigCacheMax the longest path and expiry it keeps one for.
const (
	sigCacheSize = 512
	sigCacheMax  = 512
)

// cachedSig is a signature as appendMAC computed it, for the path and expiry it covers.
type cachedSig struct {
	path, exp string
	hex       [2 * sha256.Size]byte
}

// appendMAC appends to dst the hex HMAC-SHA256 of "{path}\n{exp}". A link's expiry is whole
// seconds, so reads of the same asset within a second sign the same text: the last signatures are
// kept and reused.
func (s *Store) appendMAC(dst []byte, path string, exp []byte) []byte {
	var slot *atomic.Pointer[cachedSig]
	if len(path)+len(exp) <= sigCacheMax {
		h := maphash.String(s.sigSeed, path) ^ maphash.Bytes(s.sigSeed, exp)*0x9e3779b97f4a7c15
		slot = &s.sigs[h%sigCacheSize]
		if c := slot.Load(); c != nil && c.path == path && c.exp == string(exp) {
			return append(dst, c.hex[:]...)
		}
	}
	sg := s.signers.Get().(*signer)
	defer s.signers.Put(sg)
	sg.msg = append(append(append(sg.msg[:0], path...), '\n'), exp...)
	sg.mac.Reset()
	sg.mac.Write(sg.msg)
	sg.sum = sg.mac.Sum(sg.sum[:0])
	if cap(sg.msg) > 4<<10 { // a long path from a client's link: not kept
		sg.msg = nil
	}
	if slot != nil {
		c := &cachedSig{path: path, exp: string(exp)}
		hex.Encode(c.hex[:], sg.sum)
		slot.Store(c)
	}
	return hex.AppendEncode(dst, sg.sum)
}

// Link errors, as the handler reports them.
var (
	ErrBadSignature = errors.New("the link's signature does not match: use the link exactly as given")
	ErrExpired      = errors.New("the link has expired: read the resource again for a fresh link")
)

// verify checks a link's signature and expiry for path.
func (s *Store) verify(path string, q url.Values) error {
	exp, sig := q.Get("expires"), q.Get("sig")
	if exp == "" || sig == "" || !hmac.Equal([]byte(sig), []byte(s.mac(path, exp))) {
		return ErrBadSignature
	}
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return ErrBadSignature
	}
	if !s.clock.Now().Before(time.Unix(n, 0)) {
		return ErrExpired
	}
	return nil
}
