package reqlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is an output that counts its writes.
type lockedBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.buf.Write(p)
}

func TestWriterKeepsLinesWholeAndInOrder(t *testing.T) {
	out := &lockedBuffer{}
	w := NewWriter(out)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				if _, err := fmt.Fprintf(w, "writer=%d line=%d %s\n", g, i, strings.Repeat("x", i%50)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(out.buf.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines out, want %d", len(got), writers*lines)
	}
	for _, l := range got {
		var g, i int
		var pad string
		if n, _ := fmt.Sscanf(l, "writer=%d line=%d %s", &g, &i, &pad); n < 2 || i != next[g] || len(pad) != i%50 && i%50 != 0 {
			t.Fatalf("line %q out of order or cut (want writer %d's line %d)", l, g, next[g])
		}
		next[g]++
	}
	if out.writes > writers*lines {
		t.Errorf("%d writes for %d lines", out.writes, writers*lines)
	}
	t.Logf("%d lines in %d writes", writers*lines, out.writes)
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterReportsTheOutputsErrorAndClose(t *testing.T) {
	w := NewWriter(failing{})
	_, _ = w.Write([]byte("one\n"))
	if err := w.Close(); err == nil || err.Error() != "disk full" {
		t.Errorf("Close = %v, want the output's error", err)
	}
	if _, err := w.Write([]byte("two\n")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("Write after Close = %v, want io.ErrClosedPipe", err)
	}
}
