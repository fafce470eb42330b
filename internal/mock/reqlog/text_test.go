package reqlog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"
)

// TestTextHandlerWritesSlogsLines holds NewTextHandler to slog.NewTextHandler byte for byte: on
// the request lines it writes itself, on the records it leaves to slog (values slog quotes, other
// kinds, attributes added with WithAttrs and groups) and on random strings.
func TestTextHandlerWritesSlogsLines(t *testing.T) {
	at := time.Date(2026, 1, 5, 9, 0, 0, 987654321, time.FixedZone("X", 3600))
	lines := [][]slog.Attr{
		{slog.String("method", "GET"), slog.String("path", "/api/v1/generations/gen_1"), slog.Int("status", 200), slog.Duration("duration", 12*time.Microsecond), slog.String("key_id", "key_abc")},
		{slog.String("method", "POST"), slog.String("path", "/api/v1/generations"), slog.Int("status", 403), slog.Duration("duration", 1500*time.Millisecond), slog.String("error", "insufficient_scope")},
		{slog.String("path", "/api/v1/a b=\"c\"")},
		{slog.String("path", "")},
		{slog.String("path", "/ünï/\x00\\")},
		{slog.Int("status", -1), slog.Duration("d", 0)},
		{slog.Any("err", errors.New("boom")), slog.Bool("ok", true), slog.Float64("f", 1.5), slog.Time("t", at)},
		{slog.Group("g", slog.String("a", "b"))},
		{{}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aZ09/-_.~:+,@% =\"\\\n\tü\u00a0\u2028{}<>&'")
	for range 300 {
		s := make([]rune, rng.IntN(8))
		for i := range s {
			s[i] = alphabet[rng.IntN(len(alphabet))]
		}
		lines = append(lines, []slog.Attr{slog.String("path", string(s)), slog.String(string(s), "v")})
	}
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelWarn} {
		for _, msg := range []string{"request", "mock: request cut", ""} {
			for _, attrs := range lines {
				var got, want bytes.Buffer
				r := slog.NewRecord(at, level, msg, 0)
				r.AddAttrs(attrs...)
				if err := NewTextHandler(&got, nil).Handle(context.Background(), r); err != nil {
					t.Fatal(err)
				}
				_ = slog.NewTextHandler(&want, nil).Handle(context.Background(), r)
				if got.String() != want.String() {
					t.Fatalf("got  %q\nwant %q", got.String(), want.String())
				}
			}
		}
	}
	// Derived handlers and a record without a time are slog's.
	var got, want bytes.Buffer
	r := slog.NewRecord(time.Time{}, slog.LevelError, "x", 0)
	r.AddAttrs(slog.String("a", "b"))
	_ = NewTextHandler(&got, nil).WithAttrs([]slog.Attr{slog.Int("n", 1)}).WithGroup("g").Handle(context.Background(), r)
	_ = slog.NewTextHandler(&want, nil).WithAttrs([]slog.Attr{slog.Int("n", 1)}).WithGroup("g").Handle(context.Background(), r)
	if got.String() != want.String() {
		t.Fatalf("derived: got %q, want %q", got.String(), want.String())
	}
	// The level option holds.
	got.Reset()
	h := NewTextHandler(&got, &slog.HandlerOptions{Level: slog.LevelWarn})
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelWarn) {
		t.Fatal("the level option is not held")
	}
}

// BenchmarkRequestLine is the request line through slog's TextHandler and through NewTextHandler.
func BenchmarkRequestLine(b *testing.B) {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("method", "GET"), slog.String("path", "/api/v1/generations/gen_815402746dc2edf64dc1200b15d265c1"),
		slog.Int("status", 200), slog.Duration("duration", 12*time.Microsecond), slog.String("key_id", "key_9d261a55ee0138c21db1a14c4fc31e56"))
	for _, tc := range []struct {
		name string
		h    slog.Handler
	}{{"slog", slog.NewTextHandler(discard{}, nil)}, {"reqlog", NewTextHandler(discard{}, nil)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = tc.h.Handle(context.Background(), r)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
