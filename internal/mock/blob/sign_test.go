package blob

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/clock"
)

// TestSignIsTheEncodedQuery: a link is byte for byte what url.Values encodes over a fresh HMAC of
// "{path}\n{expires}", also from many goroutines at once (the signers are pooled), and for
// expiries before 1970; twice over, so the second pass reads kept signatures (more than the cache
// holds: slots are overwritten, and a path signed again with another expiry is signed afresh).
func TestSignIsTheEncodedQuery(t *testing.T) {
	key := []byte("test-signing-key")
	s := New(clock.NewManual(time.Unix(0, 0)), key, func() string { return "http://127.0.0.1:9" })
	want := func(path string, exp time.Time) string {
		e := strconv.FormatInt(exp.Unix(), 10)
		m := hmac.New(sha256.New, key)
		fmt.Fprintf(m, "%s\n%s", path, e)
		q := url.Values{"expires": {e}, "sig": {hex.EncodeToString(m.Sum(nil))}}
		return "http://127.0.0.1:9" + path + "?" + q.Encode()
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 400 {
				path := FilesPath + "asset_" + strconv.Itoa(g*1000+i%200) + "/" + url.PathEscape("take one é.wav")
				exp := time.Unix(int64(i%200*7919-500000+i/300), 0)
				if got, w := s.sign(path, exp), want(path, exp); got != w {
					t.Errorf("sign(%q, %d) = %q, want %q", path, exp.Unix(), got, w)
					return
				}
			}
		}()
	}
	wg.Wait()
	long := FilesPath + string(make([]byte, 10<<10))
	if got, w := s.mac(long, "1"), want(long, time.Unix(1, 0)); "http://127.0.0.1:9"+long+"?expires=1&sig="+got != w {
		t.Errorf("mac of a long path differs")
	}
}

// BenchmarkDownloadURL signs the link of one asset over and over, as reads of a finished
// generation do (the expiry is whole seconds: on a frozen clock every link is the same).
func BenchmarkDownloadURL(b *testing.B) {
	s := New(clock.NewManual(time.Unix(1_800_000_000, 0)), []byte("test-signing-key"), func() string { return "http://127.0.0.1:9" })
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = s.DownloadURL("asset_01HZX3K4Q5R6S7T8V9W0XYZABC", "take one.wav", time.Hour)
		}
	})
}
