package reqlog

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// NewTextHandler returns a handler that writes exactly what slog.NewTextHandler(w, opts) writes,
// and writes the records the mock logs most (the request line: a message and attributes that are
// words, numbers and durations, with no groups) without slog's general formatter, which cost
// about as much as the rest of a logged read. Every other record (a value that would be quoted or
// is of another kind, attributes or groups added with WithAttrs/WithGroup, opts with ReplaceAttr
// or AddSource) goes to slog's own handler. Writes are whole lines, one Write each, serialised.
func NewTextHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	lw := &lockedWriter{w: w}
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	h := &textHandler{out: lw, slow: slog.NewTextHandler(lw, opts)}
	h.fast = opts.ReplaceAttr == nil && !opts.AddSource
	return h
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type textHandler struct {
	out  *lockedWriter
	slow slog.Handler // slog's TextHandler over the same writer
	fast bool         // the options allow the fast path
}

var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

func (h *textHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.slow.Enabled(ctx, l) }

func (h *textHandler) WithAttrs(as []slog.Attr) slog.Handler { return h.slow.WithAttrs(as) }
func (h *textHandler) WithGroup(name string) slog.Handler    { return h.slow.WithGroup(name) }

func (h *textHandler) Handle(ctx context.Context, r slog.Record) error {
	if !h.fast {
		return h.slow.Handle(ctx, r)
	}
	bp := lineBufs.Get().(*[]byte)
	defer lineBufs.Put(bp)
	b, ok := appendLine((*bp)[:0], r)
	*bp = b[:0]
	if !ok {
		return h.slow.Handle(ctx, r)
	}
	_, err := h.out.Write(b)
	return err
}

// appendLine appends r as slog's TextHandler writes it, or reports false when r holds something
// the fast path leaves to slog.
func appendLine(b []byte, r slog.Record) ([]byte, bool) {
	if !r.Time.IsZero() {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, r.Time.Round(0))
		b = append(b, ' ')
	}
	b = append(b, "level="...)
	b = append(b, r.Level.String()...)
	if !plain(r.Message) {
		return b, false
	}
	b = append(b, " msg="...)
	b = append(b, r.Message...)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		if !plain(a.Key) {
			ok = false
			return false
		}
		v := a.Value
		switch v.Kind() {
		case slog.KindString:
			if !plain(v.String()) {
				ok = false
				return false
			}
			b = append(append(append(append(b, ' '), a.Key...), '='), v.String()...)
		case slog.KindInt64:
			b = strconv.AppendInt(append(append(append(b, ' '), a.Key...), '='), v.Int64(), 10)
		case slog.KindDuration:
			b = append(append(append(append(b, ' '), a.Key...), '='), v.Duration().String()...)
		default:
			ok = false
			return false
		}
		return true
	})
	return append(b, '\n'), ok
}

// plain reports whether slog writes s as it is (not quoted): a non-empty run of ASCII letters,
// digits and the punctuation of paths and ids. Anything else (which slog may or may not quote) is
// left to slog.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '/' || c == '-' || c == '_' || c == '.' || c == '~' || c == ':' || c == '+' || c == ',' || c == '@' || c == '%':
		default:
			return false
		}
	}
	return true
}

// appendRFC3339Millis is slog's own time format: RFC 3339 with exactly three digits of
// milliseconds, truncated.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the fourth digit
}
