package proxy

import (
	"encoding/json"
	"fmt"
	"math"
)

// The credit arithmetic. Other keys, other clients of the same key and jobs started in the app
// move the same wallet unseen, so a balance read is never compared with a number the proxy
// expects it to be; what is judged is what holds whatever unseen traffic did:
//
//   - within one answer, the fields one defines by the others (balance_credits is available plus
//     held; daily_remaining_credits is the daily limit minus the daily spend, never below 0;
//     key_remaining_credits is the key budget minus the key's spend, null exactly without a
//     budget); the shortfall of insufficient_credits is above 0; max_credits_exceeded's
//     required_credits is above the max_credits it refused;
//   - a hold the proxy saw taken (an accepted submit, in one workspace) and proved still held (a
//     later read of the generation, still running): every balance read of that workspace in
//     between holds at least that hold in held_credits (unseen holds only add to it), LEDGER-001;
//   - the final charge of a generation whose submit the proxy saw is never more than the hold that
//     submit took (CORE-020).

// Bounds of the ledger memory.
const (
	// MaxBalanceReads is how many balance reads of one workspace are kept to compare with holds
	// proved later.
	MaxBalanceReads = 8
	// MaxHoldsPerRead is how many proved holds one balance read sums.
	MaxHoldsPerRead = 64
)

// balanceRead is one GET /credits/balance answer kept for the holds proved after it.
type balanceRead struct {
	c       *call
	held    int64
	holds   map[string]int64 // generation id -> hold proved open during the read
	sum     int64
	flagged bool
}

// integer reads a JSON integer.
func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// checkBalance judges one balance read's answer by the arithmetic its fields are defined by.
func (p *Proxy) checkBalance(c *call) {
	o := c.obj
	av, okA := integer(o["available_credits"])
	held, okH := integer(o["held_credits"])
	if bal, ok := integer(o["balance_credits"]); ok && okA && okH && bal != av+held {
		p.find(c, SideServer, "LEDGER-019", false, fmt.Sprintf("balance_credits %d is not available_credits %d plus held_credits %d.", bal, av, held))
	}
	lim, _ := o["limits"].(map[string]any)
	if lim == nil {
		return
	}
	daily, okD := integer(lim["daily_credits"])
	spent, okS := integer(lim["daily_spent_credits"])
	if rem, ok := integer(lim["daily_remaining_credits"]); ok && okD && okS && rem != max(daily-spent, 0) {
		p.find(c, SideServer, "LEDGER-021", false, fmt.Sprintf("daily_remaining_credits %d is not daily_credits %d minus daily_spent_credits %d (never below 0).", rem, daily, spent))
	}
	budgetV, hasBudget := lim["key_budget_credits"]
	remV, hasRem := lim["key_remaining_credits"]
	if !hasBudget || !hasRem {
		return
	}
	if (budgetV == nil) != (remV == nil) {
		p.find(c, SideServer, "LEDGER-011", false, fmt.Sprintf("key_budget_credits %v with key_remaining_credits %v: without a key budget both read null, with one both are numbers.", jsonText(budgetV), jsonText(remV)))
		return
	}
	budget, okB := integer(budgetV)
	kspent, okK := integer(lim["key_spent_credits"])
	if rem, ok := integer(remV); ok && okB && okK && rem != max(budget-kspent, 0) {
		p.find(c, SideServer, "LEDGER-022", false, fmt.Sprintf("key_remaining_credits %d is not key_budget_credits %d minus key_spent_credits %d.", rem, budget, kspent))
	}
}

func jsonText(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(v)
}

// checkSpendRefusal judges the numbers of a 402 spend refusal against its own request.
func (p *Proxy) checkSpendRefusal(c *call, code string, e map[string]any) {
	switch code {
	case "insufficient_credits":
		if v, present := e["shortfall"]; present {
			if n, ok := number(v); ok && (n <= 0 || n != math.Trunc(n)) {
				p.find(c, SideServer, "ERR-018", false, fmt.Sprintf("error.shortfall is %v: the padded hold minus the available credits of a refused hold is a whole number above 0.", v))
			}
		}
	case "max_credits_exceeded":
		lim, _ := e["limit"].(map[string]any)
		req, okR := integer(lim["required_credits"])
		sent, okS := integer(c.body["max_credits"])
		if okR && okS && req <= sent {
			p.find(c, SideServer, "ERR-012", false, fmt.Sprintf("max_credits %d was refused as too low, but error.limit.required_credits is %d: required_credits is the smallest max_credits that passes.", sent, req))
		}
	}
}

// seeBalance keeps a balance read of a workspace for the holds proved after it.
func (s *state) seeBalance(c *call) {
	held, ok := integer(c.obj["held_credits"])
	ws := s.workspaceOfLocked(c.ex.keyID)
	if !ok || ws == "" {
		return
	}
	// Only what a finding about the read names is kept, not its headers and bodies.
	ex := c.ex
	slim := &call{ex: &exchange{n: ex.n, start: ex.start, end: ex.end, method: ex.method, path: ex.path, keyID: ex.keyID},
		route: c.route, line: c.line, at: c.at, apiPath: c.apiPath}
	reads, _ := s.balances.get(ws)
	reads = append(reads, &balanceRead{c: slim, held: held, holds: map[string]int64{}})
	if len(reads) > MaxBalanceReads {
		reads = reads[len(reads)-MaxBalanceReads:]
	}
	s.balances.put(ws, reads)
}

// holdOpen: the generation g (whose submit the proxy saw) reads still running in c, so its hold
// was held from its submit's answer to c: every balance read of its workspace wholly in between
// shows at least the holds proved open during it in held_credits.
func (s *state) holdOpen(p *Proxy, c *call, id string, g *genSeen) {
	reads, _ := s.balances.get(g.workspace)
	for _, b := range reads {
		if b.flagged || b.c.ex.start.Before(g.submitEnd) || b.c.ex.end.After(c.ex.start) {
			continue
		}
		if _, dup := b.holds[id]; dup || len(b.holds) >= MaxHoldsPerRead {
			continue
		}
		b.holds[id] = g.held
		b.sum += g.held
		if b.held < b.sum {
			b.flagged = true
			p.find(b.c, SideServer, "LEDGER-001", false, fmt.Sprintf("held_credits is %d while this workspace's jobs held at least %d (%d hold(s) taken by accepted submits before the read and still running after it, e.g. %s holding %d, read running in exchange #%d): a submit's hold stays in held_credits until it settles.",
				b.held, b.sum, len(b.holds), id, g.held, c.ex.n))
		}
	}
}
