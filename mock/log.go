package mock

import (
	"io"
	"log/slog"

	"github.com/mediaspec/mediaspec/internal/mock/reqlog"
)

// NewLogWriter returns a writer that hands what is written to out from a goroutine of its own, so
// a request does not wait for a slow terminal (many lines go out in one write under load). Close
// drains it: every line written before is out when Close returns. Safe for concurrent use.
func NewLogWriter(out io.Writer) io.WriteCloser { return reqlog.NewWriter(out) }

// NewTextLogHandler returns a handler for Config.Logger that writes exactly what
// slog.NewTextHandler(w, opts) writes, and writes the request log's lines without slog's general
// formatter (which cost about as much as the rest of a logged read). Writes are whole lines, one
// Write each, serialised.
func NewTextLogHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	return reqlog.NewTextHandler(w, opts)
}
