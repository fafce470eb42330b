package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A large answer seen again byte for byte gets the verdict it got (from the memo): a wrong one is
// found again each time, counted as a repeat, and only one verdict is remembered.
func TestMemoRepeatsTheVerdict(t *testing.T) {
	wrong := fmt.Sprintf(`{"ok":true,"actors":[{"actor_id":"act_%032d","name":%q,"tags":[],"is_platform":true}],"next_cursor":5}`, 1, strings.Repeat("a", 2*MemoMinBody))
	p, c := scriptedProxy(t, map[string][]string{"/api/v1/actors": {wrong}, "/api/v1/actors?limit=1": {wrong}})
	for range 3 {
		c.do("GET", "/actors", nil)
	}
	if err := p.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	var found int
	for _, f := range p.Report().Findings {
		if f.Side == SideServer && strings.Contains(f.Advice, "next_cursor") {
			found += f.Count
		}
	}
	if found != 3 {
		t.Errorf("the wrong answer three times gave %d findings: %+v", found, p.Report().Findings)
	}
	p.memo.mu.Lock()
	n := len(p.memo.m.m)
	p.memo.mu.Unlock()
	if n != 1 {
		t.Errorf("%d verdicts remembered for one answer seen three times", n)
	}
}
