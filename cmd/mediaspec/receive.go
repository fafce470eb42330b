package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/receiver"
)

// secretList is a repeatable --secret flag; one value may also hold several secrets separated by
// commas (base64 never contains a comma), which is how $MEDIASPEC_RECEIVE_SECRET lists several.
type secretList []string

func (s *secretList) String() string { return "" } // never print a secret in the usage text

func (s *secretList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*s = append(*s, part)
		}
	}
	return nil
}

// What receive reads of one delivery, beyond the body (receiver.DefaultMaxBody, 1 MiB): its header
// block (Go's own default is 1 MB) and the time to read it whole.
var (
	receiveMaxHeaderBytes = 64 << 10
	receiveReadTimeout    = 30 * time.Second
)

// runReceive runs a Standard Webhooks receiver until ctx ends, printing one line per attempt.
func runReceive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("receive", "--secret whsec_... [flags]", stderr)
	var secrets secretList
	fs.Var(&secrets, "secret", "signing secret whsec_... of the endpoint (repeat or separate with commas to accept several, e.g. during a rotation; required) [$MEDIASPEC_RECEIVE_SECRET]")
	addr := fs.String("addr", "127.0.0.1:9000", "listen address (127.0.0.1:0 picks a free port) [$MEDIASPEC_RECEIVE_ADDR]")
	forward := fs.String("forward", "", "loopback URL to re-post every verified delivery to, e.g. http://127.0.0.1:3000/webhooks [$MEDIASPEC_RECEIVE_FORWARD]")
	tolerance := fs.Duration("tolerance", receiver.DefaultTolerance, "how far webhook-timestamp may lie from now, past or future [$MEDIASPEC_RECEIVE_TOLERANCE]")
	asJSON := fs.Bool("json", false, "print one JSON object per line (the start information, then each attempt) [$MEDIASPEC_RECEIVE_JSON]")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := applyEnv(fs, "MEDIASPEC_RECEIVE_"); err != nil {
		return err
	}
	if len(secrets) == 0 {
		return usageError{msg: "--secret is required: the whsec_... signing secret shown once when the webhook endpoint was registered"}
	}
	if *tolerance <= 0 {
		return usageError{msg: "--tolerance must be above 0"}
	}

	out := &linePrinter{w: stdout, json: *asJSON}
	rcv, err := receiver.New(receiver.Config{
		Secrets:   secrets,
		Tolerance: *tolerance,
		Forward:   *forward,
		Logger:    slog.New(slog.NewTextHandler(stderr, nil)),
		OnAttempt: out.attempt,
	})
	switch {
	case errors.Is(err, receiver.ErrNoSecret), errors.Is(err, receiver.ErrBadSecret):
		return usageError{msg: "--secret: " + secretProblem(err)}
	case errors.Is(err, receiver.ErrBadForward):
		return usageError{msg: fmt.Sprintf("--forward %q: %v", *forward, err)}
	case err != nil:
		return setupError{err}
	}
	defer rcv.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return setupError{listenError(*addr, err)}
	}
	base := "http://" + ln.Addr().String()
	if err := out.start(base, *forward); err != nil {
		_ = ln.Close()
		return err
	}

	// A sender is a peer nobody here controls: the header block, the time to read a delivery and
	// (in the receiver) its body are capped.
	srv := &http.Server{Handler: rcv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: receiveReadTimeout, MaxHeaderBytes: receiveMaxHeaderBytes}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	_ = rcv.Close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// secretProblem says what is wrong with a --secret in one sentence: the receiver's error without
// its package prefix, and what a secret looks like unless the error says it already.
func secretProblem(err error) string {
	msg := strings.ReplaceAll(err.Error(), "receiver: ", "")
	if !strings.Contains(msg, "want ") {
		msg += fmt.Sprintf(" (want whsec_ followed by standard base64 of at least %d bytes)", receiver.MinSecretBytes)
	}
	return msg
}

// linePrinter writes the receive command's output; attempts arrive from many goroutines.
type linePrinter struct {
	mu   sync.Mutex // guards w: one line is written whole
	w    io.Writer
	json bool
}

// start prints the one start line.
func (p *linePrinter) start(base, forward string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		return json.NewEncoder(p.w).Encode(map[string]string{
			"url":          base + "/",
			"events_url":   base + receiver.APIPrefix + "events",
			"attempts_url": base + receiver.APIPrefix + "attempts",
			"forward":      forward,
		})
	}
	line := fmt.Sprintf("mediaspec receive: listening on %s/ - register that URL (any path) as the webhook endpoint; deliveries are listed at %s%sattempts",
		base, base, receiver.APIPrefix)
	if forward != "" {
		line += "; verified deliveries are forwarded to " + forward
	}
	_, err := fmt.Fprintln(p.w, line+". Ctrl-C stops it.")
	syncFile(p.w)
	return err
}

// attempt prints one attempt: `time  type  delivery-id  resource-id  verdict[  detail]`, or its
// JSON form.
func (p *linePrinter) attempt(a receiver.Attempt) {
	var line []byte
	if p.json {
		b, err := json.Marshal(a)
		if err != nil {
			return
		}
		line = append(b, '\n')
	} else {
		dash := func(s string) string {
			if s == "" {
				return "-"
			}
			return s
		}
		s := strings.Join([]string{a.Time.UTC().Format(time.RFC3339), dash(a.Type), dash(a.DeliveryID), dash(a.ResourceID), string(a.Verdict)}, "  ")
		if a.Detail != "" {
			s += "  (" + a.Detail + ")"
		}
		line = []byte(s + "\n")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = p.w.Write(line)
}

func syncFile(w io.Writer) {
	if f, ok := w.(*os.File); ok {
		_ = f.Sync()
	}
}
