package blob

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// Handler serves download links (GET and HEAD under FilesPath) and upload links (PUT under
// UploadPath). Refusals go through the API's one error renderer with the error table's statuses,
// so clients parse one shape: 401 not_authorized for a bad, expired or spent signature (the
// signature is the link's credential), 404 not_found for a file or slot that is gone and for a
// method the link does not answer (with Allow), 400 invalid_config for a PUT that breaks its
// reservation. No key is needed: the signature is the authority.
func (s *Store) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, FilesPath) && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			s.serveFile(w, r)
		case strings.HasPrefix(r.URL.Path, UploadPath) && r.Method == http.MethodPut:
			s.receiveUpload(w, r)
		default:
			allow := "GET, HEAD"
			if strings.HasPrefix(r.URL.Path, UploadPath) {
				allow = "PUT"
			}
			w.Header().Set("Allow", allow)
			writeLinkError(w, r, apierr.CodeNotFound, "This link does not answer "+r.Method+"; it answers "+allow+".")
		}
	})
}

// writeLinkError answers a link refusal through the one error renderer, with the table's status.
func writeLinkError(w http.ResponseWriter, r *http.Request, code apierr.Code, msg string) {
	wire.Write(w, r, apierr.New(code, msg))
}

func (s *Store) serveFile(w http.ResponseWriter, r *http.Request) {
	if err := s.verify(r.URL.EscapedPath(), r.URL.Query()); err != nil {
		writeLinkError(w, r, apierr.CodeNotAuthorized, err.Error())
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, FilesPath)
	assetID, _, _ := strings.Cut(rest, "/")
	o, ok := s.Get(assetID)
	if !ok {
		writeLinkError(w, r, apierr.CodeNotFound, "The file is gone.")
		return
	}
	var body io.ReadCloser
	if r.Method != http.MethodHead {
		var err error
		if body, err = o.Open(); err != nil {
			wire.Write(w, r, apierr.Internal(err, "The file could not be made; try the link again."))
			return
		}
		defer body.Close()
	}
	h := w.Header()
	h.Set("Content-Type", o.ContentType)
	h.Set("Content-Length", strconv.FormatInt(o.Size, 10))
	h.Set("Cache-Control", "private, max-age=0")
	if r.URL.Query().Get("download") == "1" {
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": o.FileName}))
	} else {
		h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": o.FileName}))
	}
	w.WriteHeader(http.StatusOK)
	if body != nil {
		_, _ = io.Copy(w, body)
	}
}

// receiveUpload takes the one PUT an upload slot allows. The bytes are stored as the slot's file
// only when the PUT keeps every rule (declared content type, exact length); a PUT that breaks one
// spends the link and is recorded, so finalize can refuse with the reason. A late PUT, a second PUT
// and a tampered link are refused without spending anything.
func (s *Store) receiveUpload(w http.ResponseWriter, r *http.Request) {
	if err := s.verify(r.URL.EscapedPath(), r.URL.Query()); err != nil {
		writeLinkError(w, r, apierr.CodeNotAuthorized, err.Error())
		return
	}
	assetID := strings.TrimPrefix(r.URL.Path, UploadPath)
	s.mu.Lock()
	st, ok := s.slots[assetID]
	if ok && st.Used {
		s.mu.Unlock()
		writeLinkError(w, r, apierr.CodeNotAuthorized, "This upload link was already used; reserve again to upload another file.")
		return
	}
	if ok {
		st.Used = true // claim the link before reading, so a concurrent second PUT is refused
	}
	s.mu.Unlock()
	if !ok {
		writeLinkError(w, r, apierr.CodeNotFound, "No upload is reserved for this link.")
		return
	}
	// Stream the body to a spool file (never the heap), at most one byte more than declared, to
	// tell "too long" from "exact".
	file, n, err := s.spool(io.LimitReader(r.Body, st.Size+1))
	violation := ""
	switch {
	case err != nil:
		violation = "the upload was interrupted: " + err.Error()
	case !sameMediaType(r.Header.Get("Content-Type"), st.ContentType):
		violation = fmt.Sprintf("the PUT declared Content-Type %q, the reservation %q", r.Header.Get("Content-Type"), st.ContentType)
	case n != st.Size:
		violation = fmt.Sprintf("the PUT sent %s bytes, the reservation declared exactly %d", sizeWord(n, st.Size), st.Size)
	}
	now := s.clock.Now()
	s.mu.Lock()
	st.PutAt = now
	var old *Object
	if violation != "" {
		st.Violation = violation
	} else if cur, live := s.slots[assetID]; live && cur == st {
		st.Received = true
		old = s.objs[assetID]
		s.objs[assetID] = &Object{AssetID: assetID, WorkspaceID: st.WorkspaceID, ContentType: st.ContentType,
			FileName: st.FileName, File: file, Size: n, StoredAt: now}
		file = ""
	}
	s.mu.Unlock()
	removeSpool(old)
	if file != "" {
		_ = os.Remove(file) // refused, or the slot was forgotten while the bytes arrived
	}
	if violation != "" {
		writeLinkError(w, r, apierr.CodeInvalidConfig, "The upload broke its reservation: "+violation+". Finalize will refuse it; reserve again.")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

func sizeWord(got, want int64) string {
	if got > want {
		return "more than " + strconv.FormatInt(want, 10)
	}
	return strconv.FormatInt(got, 10)
}

// spool copies r to a new spool file and returns its name ("" on an error: nothing is left
// behind) and the bytes written.
func (s *Store) spool(r io.Reader) (string, int64, error) {
	f, err := s.spoolFile()
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", n, err
	}
	return f.Name(), n, nil
}

// sameMediaType compares two content types with parameters stripped and case folded.
func sameMediaType(a, b string) bool {
	pa, _, errA := mime.ParseMediaType(a)
	pb, _, errB := mime.ParseMediaType(b)
	return errA == nil && errB == nil && strings.EqualFold(pa, pb)
}

// ParseLink returns the asset id a download or upload link names, for tests and diagnostics. It
// does not verify the signature.
func ParseLink(link string) (assetID string, err error) {
	u, err := url.Parse(link)
	if err != nil {
		return "", err
	}
	switch {
	case strings.HasPrefix(u.Path, FilesPath):
		id, _, _ := strings.Cut(strings.TrimPrefix(u.Path, FilesPath), "/")
		return id, nil
	case strings.HasPrefix(u.Path, UploadPath):
		return strings.TrimPrefix(u.Path, UploadPath), nil
	}
	return "", errors.New("blob: not a file or upload link")
}
