package reqlog

import (
	"io"
	"sync"
	"time"
)

// maxPending is how many bytes a Writer holds before a Write waits for the output to take them.
const maxPending = 1 << 20

// Writer passes log lines on to an output (a terminal, a pipe, a file) from one goroutine of its
// own, so that a request does not wait for a write system call: what arrives while a write is under
// way goes out whole in the next one. An idle Writer writes a line at once; one under load lets
// lines gather for up to gatherFor after each write and writes them in one call (waking the
// goroutine for every line cost a request about a tenth of its CPU under load). A Write is never split, so lines stay whole and in order. When the output falls
// behind by maxPending bytes, Write waits for it rather than holding more.
//
// Close writes what is held and stops the goroutine; call it before writing to the same output
// directly (a summary at shutdown). A Writer is safe for concurrent use.
type Writer struct {
	out io.Writer

	mu      sync.Mutex // guards pending, closed, waiting, err
	cond    *sync.Cond // signals the loop (something pending, closed) and waiting writers (room)
	pending []byte     // what came in since the loop's last write
	closed  bool
	waiting bool  // the loop waits for a line: the next Write wakes it
	err     error // the output's first error; later writes report it
	done    chan struct{}
}

// NewWriter returns a Writer over out and starts its goroutine.
func NewWriter(out io.Writer) *Writer {
	w := &Writer{out: out, done: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.loop()
	return w
}

// Write holds a copy of p for the output and returns at once (unless the output is maxPending
// behind). It reports an error the output returned earlier, or io.ErrClosedPipe after Close.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.pending) >= maxPending && !w.closed && w.err == nil {
		w.cond.Wait()
	}
	if w.closed {
		return 0, io.ErrClosedPipe
	}
	if w.err != nil {
		return 0, w.err
	}
	w.pending = append(w.pending, p...)
	if w.waiting {
		w.waiting = false
		w.cond.Broadcast()
	}
	return len(p), nil
}

// Close writes what is held, stops the goroutine and returns the output's first error.
func (w *Writer) Close() error {
	w.mu.Lock()
	w.closed = true
	w.cond.Broadcast()
	w.mu.Unlock()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *Writer) loop() {
	defer close(w.done)
	var spare []byte
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for len(w.pending) == 0 && !w.closed {
			w.waiting = true
			w.cond.Wait()
		}
		w.waiting = false
		if len(w.pending) == 0 { // closed and drained
			return
		}
		batch := w.pending
		w.pending, spare = spare[:0], nil
		w.mu.Unlock()
		_, err := w.out.Write(batch)
		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = err
		}
		if cap(batch) <= maxPending {
			spare = batch
		}
		w.cond.Broadcast() // room for waiting writers
		if w.err != nil {
			w.pending = nil
			if w.closed {
				return
			}
		}
		if !w.closed && w.err == nil && len(w.pending) < maxPending/2 {
			// Let the lines of a busy server gather (their writers do not wake this goroutine
			// while it is not waiting); an idle server's next line finds it waiting.
			w.mu.Unlock()
			time.Sleep(gatherFor)
			w.mu.Lock()
		}
	}
}

// gatherFor is how long the Writer lets lines gather after a write before it writes again.
const gatherFor = 5 * time.Millisecond
