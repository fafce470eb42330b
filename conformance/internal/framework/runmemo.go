package framework

// RunMemo returns what compute returned the first time the run asked for key, whatever the
// client's key and with or without control. It is for what every workspace of a target reads
// alike: a capability's config schema and example config, which the suite reads to learn config
// keys the interface text does not name. (Client.Memo recomputes with control, where a spec's
// workspace may see another catalogue; a capability's config shape does not depend on the
// workspace.) A compute that fails or skips the spec stores nothing.
func (c *Client) RunMemo(key string, compute func() any) any {
	return c.f.memoize("run\x00"+key, compute)
}

// memoize returns what compute returned the first time key was asked for, storing it; a compute
// that fails or skips the spec (panics through Ginkgo) stores nothing. Memo and RunMemo share it.
func (f *Framework) memoize(key string, compute func() any) any {
	f.memoMu.Lock()
	v, ok := f.memo[key]
	f.memoMu.Unlock()
	if ok {
		if r, isResponse := v.(*Response); isResponse && r.Exchange != nil {
			// An assertion of this spec may judge the answer: the reports then name that call.
			f.transcript.recall(r.Exchange)
		}
		return v
	}
	v = compute()
	f.memoMu.Lock()
	defer f.memoMu.Unlock()
	if f.memo == nil {
		f.memo = map[string]any{}
	}
	f.memo[key] = v
	return v
}
