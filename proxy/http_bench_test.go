package proxy

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/httpbench"
)

// The proxy's side-by-side load: the connections the owners measured the added latency
// at, and rounds long enough for steady rates on a shared machine.
const (
	proxyConns   = 32
	proxyThreads = 2
	proxyRound   = 5 * time.Second // each side's load in one round
	proxyWarm    = 2 * time.Second // each side's load before the rounds, not counted
)

// BenchmarkHTTPProxy measures `mediaspec proxy` as a client's load test sees it (make bench, make
// bench-http): wrk in its own process, 32 connections, GET /api/v1/generations/{id} straight to the
// built `mediaspec mock` (default options, a completed generation, a read key whose bucket never
// runs out: see httpbench.HotGeneration) and through the built `mediaspec proxy` in front of that
// same mock, each in its own process. Every side is warmed for 2 s; each b.N is one round, both
// sides in turn for 5 s, the order alternating. Reported: each side's rate, p50 and p99, the
// proxy/direct rate ratio, what the proxy adds at the median and at the 99th percentile, the
// proxy's own CPU per answer, and what it judged: the exchanges it counts and the share of them it
// left unjudged because its judge fell behind (it says so in its report: Report.Unjudged), and the
// distinct findings, each logged. The read key's raised bucket is set through the mock's control API
// around the proxy, so the proxy sees one key read far past 120 a minute unrefused and may say so
// (RATE-001): that is the only finding the traffic can give.
//
// PROXY_BASE=path/to/mediaspec (a build of the tree before a change, outside the repository)
// adds a third side, "base": that binary's proxy in front of the same mock, in the same rounds, so
// a change and its baseline are measured side by side in one run (base-* figures).
//
// Every answer must be a 200. Without wrk it skips, naming the package to install.
func BenchmarkHTTPProxy(b *testing.B) {
	httpbench.NeedWrk(b, "BenchmarkHTTPProxy")
	loadStart := httpbench.LoadAvg()
	dir := b.TempDir()
	bin := httpbench.GoBuild(b, dir, "../cmd/mediaspec")
	direct, key, genID, _ := httpbench.HotGeneration(b, dir, bin)
	direct.Name = "direct"
	upstream := strings.TrimSuffix(direct.URL, "/generations/"+genID)
	type proxyInfo struct {
		URL         string `json:"url"`
		BaseURL     string `json:"base_url"`
		FindingsURL string `json:"findings_url"`
	}
	startProxy := func(name, bin string) (*httpbench.Side, proxyInfo) {
		cmd := exec.Command(bin, "proxy", "--upstream", upstream, "--listen", "127.0.0.1:0", "--json", "--quiet", "--fail-on", "none")
		var info proxyInfo
		httpbench.Start(b, cmd, dir, name, &info)
		s := &httpbench.Side{Name: name, URL: info.BaseURL + "/generations/" + genID, PID: cmd.Process.Pid}
		s.Size, _ = httpbench.Probe(b, s.URL, key)
		return s, info
	}
	through, info := startProxy("proxy", bin)
	sides := []*httpbench.Side{direct, through}
	var base *httpbench.Side
	if bin := os.Getenv("PROXY_BASE"); bin != "" {
		base, _ = startProxy("base", bin)
		sides = append(sides, base)
	}
	load := httpbench.Load{Conns: proxyConns, Threads: proxyThreads, Script: httpbench.WriteScript(b, dir)}
	for _, s := range sides {
		s.Check(b, httpbench.Wrk(b, load, key, s.URL, proxyWarm))
	}
	round := 0
	for b.Loop() {
		httpbench.Round(b, load, key, sides, round, proxyRound)
		round++
	}
	var rep Report
	httpbench.Get(b, info.FindingsURL, key, &rep)
	ms := httpbench.MS
	b.ReportMetric(direct.Rate(), "direct-req/s")
	b.ReportMetric(through.Rate(), "proxy-req/s")
	b.ReportMetric(through.Rate()/direct.Rate(), "ratio")
	b.ReportMetric(ms(direct.Pct(50)), "direct-p50-ms")
	b.ReportMetric(ms(through.Pct(50)), "proxy-p50-ms")
	b.ReportMetric(ms(through.Pct(50)-direct.Pct(50)), "added-p50-ms")
	b.ReportMetric(ms(direct.Pct(99)), "direct-p99-ms")
	b.ReportMetric(ms(through.Pct(99)), "proxy-p99-ms")
	b.ReportMetric(httpbench.USPer(through.CPU, through.Answers), "proxy-cpu-us/req")
	if base != nil {
		b.ReportMetric(base.Rate()/direct.Rate(), "base-ratio")
		b.ReportMetric(ms(base.Pct(50)-direct.Pct(50)), "base-added-p50-ms")
		b.ReportMetric(ms(base.Pct(99)), "base-p99-ms")
		b.ReportMetric(httpbench.USPer(base.CPU, base.Answers), "base-cpu-us/req")
	}
	b.ReportMetric(float64(rep.Exchanges), "exchanges")
	if rep.Exchanges > 0 {
		b.ReportMetric(100*float64(rep.Unjudged)/float64(rep.Exchanges), "unjudged-%")
	}
	b.ReportMetric(float64(len(rep.Totals)), "findings")
	for _, t := range rep.Totals {
		b.Logf("finding %s (%s, %s side, advisory %v) %d times", t.RuleID, t.Level, t.Side, t.Advisory, t.Count)
	}
	httpbench.ReportLoad(b, loadStart, httpbench.LoadAvg())
}
