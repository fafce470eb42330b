package wrongservers

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mediaspec/mediaspec/report"
)

// A legal variant is the mirror of a wrong server: the reference mock behind a proxy that rewrites
// its answers (or deliveries) into another form the interface text allows. The suite must pass
// every variant, alone and all combined, with no failed spec: a failure is an assertion stricter
// than the text (fix the spec), unless the variant itself breaks the text (then it does not belong
// in the table).

// Variant is one legal server.
type Variant struct {
	// Name is short and unique.
	Name string
	// Change says what the proxy does; Allows quotes the text that makes it legal.
	Change, Allows string
	// API and Hooks wrap the proxies as for a wrong server (nil: unchanged).
	API, Hooks Wrap
	// Args are the check flags a target of this form is run with (it names its key header or its
	// paths, which the text leaves open).
	Args []string
	// Shapes are --shape NAME=VALUE settings (where an open shape's value sits in the target's
	// answers), passed when the binary's check knows --shape.
	Shapes []string
	// Filter is the label filter of the specs that can see the change (rule ids); "" is the
	// whole suite.
	Filter string
	// Outsider checks the variant as any server, not as the reference mock: without --reference,
	// so the mock's own choices of the shapes the text leaves open are not assumed, and a state
	// the suite cannot find skips instead of failing (the scrambled variant).
	Outsider bool
	// Apart keeps the variant out of the combination: it conflicts with another one (two names
	// for the same header, a description both moved and gone).
	Apart bool
}

// chain is the wraps in order, the first outermost (nil ones left out).
func chain(ws ...Wrap) Wrap {
	var some []Wrap
	for _, w := range ws {
		if w != nil {
			some = append(some, w)
		}
	}
	if len(some) == 0 {
		return nil
	}
	return chainWraps(some...)
}

// Combined is every variant not kept apart, at once: their API and hook wraps chained in table
// order (the first outermost) and their flags together, checked on the whole suite.
func Combined(vs []Variant) Variant {
	c := Variant{Name: "all-combined", Change: "every variant not kept apart, at once"}
	var api, hooks []Wrap
	var names []string
	for _, v := range vs {
		if v.Apart {
			continue
		}
		names = append(names, v.Name)
		api, hooks = append(api, v.API), append(hooks, v.Hooks)
		c.Args = append(c.Args, v.Args...)
		c.Shapes = append(c.Shapes, v.Shapes...)
	}
	c.API, c.Hooks = chain(api...), chain(hooks...)
	c.Allows = strings.Join(names, ", ")
	return c
}

// server is the variant as a Server the wrong-server harness runs.
func (v Variant) server() Server {
	return Server{Name: v.Name, API: v.API, Hooks: v.Hooks, checkArgs: v.Args, filter: v.Filter, shapes: v.Shapes, outsider: v.Outsider}
}

// plainVariant is the mock unchanged, run in a mode to compare the rules a variant judges with.
var plainVariant = Variant{Name: "plain-mock", Change: "the mock unchanged (the same mode's measure of rules judged)"}

// LegalResult is one variant's run.
type LegalResult struct {
	Variant Variant // the legal variant that ran
	// Whole says the run covered the whole suite (else the specs of Variant.Filter).
	Whole bool
	// Mode is the target mode the run checked (b: control API, manual clock; c: keys only).
	Mode                             string
	Passed, Failed, Blocked, Skipped int // specs by state
	// Judged are the rules a passed spec decided and no spec failed: verdict passed, or partly
	// judged (some of its specs passed, the others did not run); a rule all of whose specs
	// skipped is not judged. Fully counts those of verdict passed (every spec ran).
	Judged []string
	Fully  int
	// PlainJudged and PlainFully are the plain mock's in the same mode (0: not run).
	PlainJudged, PlainFully int
	// Failures are the failed specs: text, location and the first line of the reason.
	Failures []string
	Err      error         // why the run could not be judged; nil when it could
	Duration time.Duration // how long the check ran
}

// OK reports a run that could be judged and failed nothing (a blocked spec is a failure of the
// run too: it stopped on a rule it does not check).
func (r LegalResult) OK() bool { return r.Err == nil && r.Failed == 0 && r.Blocked == 0 }

// JudgedShare is the share (percent) of the plain mock's judged rules that the run judged too; -1
// when there is no plain run to compare with.
func (r LegalResult) JudgedShare() float64 {
	if r.PlainJudged == 0 {
		return -1
	}
	return 100 * float64(len(r.Judged)) / float64(r.PlainJudged)
}

// CheckLegal runs `mediaspec check` from bin against the mock behind v in the mode of opts, on v's
// specs (the whole suite when whole is set), keeping logs and the JSON report in dir.
func CheckLegal(ctx context.Context, opts LegalOptions, v Variant, whole bool, dir string) LegalResult {
	bin := opts.Bin
	start := time.Now()
	res := LegalResult{Variant: v, Whole: whole || v.Filter == "", Mode: opts.mode()}
	srv := v.server()
	srv.mode, srv.procs, srv.timeout = opts.Mode, opts.Procs, opts.Timeout
	srv.checkArgs = append(slices.Clone(srv.checkArgs), opts.CheckArgs...)
	if whole {
		srv.filter = ""
	}
	rep, err := check(ctx, bin, srv, dir)
	for try := 1; err == errPortTaken && try < 3; try++ {
		rep, err = check(ctx, bin, srv, dir)
	}
	res.Duration = time.Since(start)
	if err != nil {
		res.Err = err
		return res
	}
	for _, f := range rep.SuiteFailures {
		res.Failed++
		res.Failures = append(res.Failures, "the run's setup: "+report.Sentence(f))
	}
	for _, s := range rep.Specs {
		switch s.State {
		case "passed":
			res.Passed++
		case "failed", report.Blocked:
			if s.State == report.Blocked {
				res.Blocked++
			} else {
				res.Failed++
			}
			res.Failures = append(res.Failures, fmt.Sprintf("%s%s (%s): %s", map[bool]string{true: "[blocked] "}[s.State == report.Blocked],
				s.Text, s.FailureLocation, report.Sentence(s.Reason)))
		default:
			res.Skipped++
		}
	}
	for _, rv := range rep.Rules {
		switch rv.Verdict {
		case report.Passed:
			res.Fully++
			res.Judged = append(res.Judged, rv.Rule.ID)
		case report.PartlyJudged:
			res.Judged = append(res.Judged, rv.Rule.ID)
		}
	}
	if res.Passed == 0 && res.Failed == 0 && res.Blocked == 0 {
		res.Err = fmt.Errorf("no spec ran (%d skipped): the variant's filter selects nothing runnable", res.Skipped)
	}
	return res
}

// LegalOptions configure a pass over the legal table.
type LegalOptions struct {
	Bin      string         // the mediaspec binary that runs each check
	Only     *regexp.Regexp // variants whose name matches (nil: all)
	Parallel int            // variants run at once
	// Whole runs each variant on the whole suite instead of the specs that can see its change.
	Whole bool
	// Combined also runs every variant at once on the whole suite.
	Combined bool
	Dir      string // where each run's reports go
	// Mode is the target mode: "b" (the default: control API, manual clock) or "c" (keys only,
	// real time, Procs check processes, each with a key set of its own).
	Mode  string
	Procs int
	// Plain also runs the unchanged mock on the whole suite in the same mode, to compare the
	// rules each whole-suite run judged with.
	Plain bool
	// Timeout bounds each check run (0: checkTimeout).
	Timeout time.Duration
	// CheckArgs are more check flags for every run (a shape a variant's user might declare, to
	// see what it changes), after the variant's own.
	CheckArgs []string
}

func (o LegalOptions) mode() string {
	if o.Mode == "" {
		return "b"
	}
	return o.Mode
}

// LegalPass runs the selected variants (and the combination) and returns their results in table
// order, the combination last.
func LegalPass(ctx context.Context, opts LegalOptions, vs []Variant) []LegalResult {
	if opts.Parallel < 1 {
		opts.Parallel = 1
	}
	todo := slices.Clone(vs)
	if opts.Combined {
		todo = append(todo, Combined(vs))
	}
	plain := -1
	if opts.Plain {
		plain = len(todo)
		todo = append(todo, plainVariant)
	}
	results := make([]LegalResult, len(todo))
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range opts.Parallel {
		wg.Go(func() {
			for i := range jobs {
				whole := opts.Whole || todo[i].Name == "all-combined" || i == plain
				results[i] = CheckLegal(ctx, opts, todo[i], whole, filepath.Join(opts.Dir, todo[i].Name))
			}
		})
	}
	// The combination and the plain mock are the longest runs: they start first.
	order := make([]int, 0, len(todo))
	if plain >= 0 {
		order = append(order, plain)
	}
	if opts.Combined {
		order = append(order, len(vs))
	}
	for i := range vs {
		order = append(order, i)
	}
	for _, i := range order {
		select {
		case jobs <- i:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	if plain >= 0 && results[plain].OK() {
		for i := range results {
			if i != plain && results[i].Whole {
				results[i].PlainJudged, results[i].PlainFully = len(results[plain].Judged), results[plain].Fully
			}
		}
	}
	return results
}

// WriteLegalTable writes one row per variant: name, verdict, what ran, and the first failure.
func WriteLegalTable(w io.Writer, results []LegalResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LEGAL VARIANT\tMODE\tVERDICT\tSPECS\tRULES JUDGED\tRAN ON\tTIME\tFIRST FAILURE / WHAT CHANGES")
	for _, r := range results {
		verdict, why := "PASS", r.Variant.Change
		switch {
		case r.Err != nil:
			verdict, why = "ERROR", r.Err.Error()
		case r.Failed > 0 || r.Blocked > 0:
			verdict, why = "FAIL", r.Failures[0]
		}
		judged := fmt.Sprintf("%d (fully %d)", len(r.Judged), r.Fully)
		if share := r.JudgedShare(); share >= 0 {
			judged = fmt.Sprintf("%d of %d (%.1f%%), fully %d of %d", len(r.Judged), r.PlainJudged, share, r.Fully, r.PlainFully)
		}
		on := "whole suite"
		if !r.Whole {
			on = r.Variant.Filter
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d passed, %d failed, %d blocked, %d skipped\t%s\t%s\t%s\t%s\n", r.Variant.Name, r.Mode, verdict,
			r.Passed, r.Failed, r.Blocked, r.Skipped, judged, report.Clip(on, 40), r.Duration.Round(time.Second), report.Clip(why, 160))
	}
	_ = tw.Flush()
}

// RunLegal is the legal-variants command: flags, the pass, the table. It fails when a variant
// failed a spec or could not be judged.
func RunLegal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("wrongservers --legal", stderr)
	var opts LegalOptions
	only := fs.String("only", "", "run only the legal variants whose name matches this regular expression")
	skip := fs.String("skip", "", "leave out the legal variants whose name matches this regular expression")
	fs.StringVar(&opts.Bin, "bin", "bin/mediaspec", "the mediaspec binary to run the mock and the check with")
	fs.IntVar(&opts.Parallel, "parallel", 2, "variants checked at once")
	fs.BoolVar(&opts.Whole, "whole", false, "run each variant on the whole suite (default: on the specs that can see its change)")
	fs.BoolVar(&opts.Combined, "combined", true, "also run every variant at once, on the whole suite")
	fs.StringVar(&opts.Dir, "dir", "", "keep each run's logs and JSON report under this directory (default: a temporary one, removed)")
	failures := fs.String("failures", "", "write every failed spec of every variant to this file")
	fs.StringVar(&opts.Mode, "mode", "b", "target mode: b (control API, manual clock) or c (keys only: the mock with --no-control, real time, --procs check processes)")
	fs.IntVar(&opts.Procs, "procs", 4, "check processes in mode c, each with a key set of its own")
	minShare := fs.Float64("min-judged-share", 0, "with --plain, fail a run that judged under this percent of the rules the plain mock judged in the same mode (0: report only)")
	fs.BoolVar(&opts.Plain, "plain", false, "also run the unchanged mock on the whole suite in the same mode and give each whole-suite run's rules judged as a share of its")
	fs.DurationVar(&opts.Timeout, "timeout", checkTimeout, "longest one check run may take")
	fs.Func("check-arg", "one more flag for every check run, e.g. --check-arg=--shape=page:/x=y (repeat it)", func(v string) error {
		opts.CheckArgs = append(opts.CheckArgs, v)
		return nil
	})
	list := fs.Bool("list", false, "list the legal variants, run nothing")
	fs.Bool("legal", true, "run the legal variants (this table)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if opts.Mode != "b" && opts.Mode != "c" {
		return fmt.Errorf("--mode %q: want b or c", opts.Mode)
	}
	vs, err := LegalVariants()
	if err != nil {
		return err
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return fmt.Errorf("--only: %w", err)
		}
		vs = slices.DeleteFunc(vs, func(v Variant) bool { return !re.MatchString(v.Name) })
	}
	if *skip != "" {
		re, err := regexp.Compile(*skip)
		if err != nil {
			return fmt.Errorf("--skip: %w", err)
		}
		vs = slices.DeleteFunc(vs, func(v Variant) bool { return re.MatchString(v.Name) })
	}
	if *list {
		for _, v := range vs {
			fmt.Fprintf(stdout, "%s: %s\n    allowed: %s\n", v.Name, v.Change, v.Allows)
		}
		return nil
	}
	if _, err := os.Stat(opts.Bin); err != nil {
		return fmt.Errorf("--bin: %w (make build)", err)
	}
	if opts.Dir == "" {
		d, err := os.MkdirTemp("", "legalvariants-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		opts.Dir = d
	}
	how := "each variant on the specs that can see its change (its filter)"
	if opts.Whole {
		how = "each variant on the whole suite"
	}
	if opts.Combined {
		how += ", and all of them combined on the whole suite"
	}
	if opts.Plain {
		how += ", and the unchanged mock on the whole suite (rules judged)"
	}
	fmt.Fprintf(stdout, "legal variants: %d in mode %s, %s, %d at once\n", len(vs), opts.Mode, how, opts.Parallel)
	start := time.Now()
	results := LegalPass(ctx, opts, vs)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	WriteLegalTable(stdout, results)
	bad := 0
	for _, r := range results {
		if !r.OK() {
			bad++
		}
	}
	fmt.Fprintf(stdout, "\n%d of %d legal runs passed with 0 failed specs (%s, %d at once)\n", len(results)-bad, len(results), time.Since(start).Round(time.Second), opts.Parallel)
	if *failures != "" {
		f, err := os.Create(*failures)
		if err != nil {
			return err
		}
		for _, r := range results {
			for _, x := range r.Failures {
				fmt.Fprintf(f, "%s: %s\n", r.Variant.Name, x)
			}
			if r.Err != nil {
				fmt.Fprintf(f, "%s: ERROR %v\n", r.Variant.Name, r.Err)
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d legal runs failed specs or could not be judged: the suite is stricter than the text there (see the table)", bad)
	}
	if short := belowShare(results, *minShare); len(short) > 0 {
		return fmt.Errorf("rules judged under the floor of %.0f%% of the plain mock's: %s (a pass made of skips does not count)", *minShare, strings.Join(short, "; "))
	}
	return nil
}

// belowShare names the runs with a plain mock to compare with whose rules judged are under min
// percent of the plain mock's (min 0: none).
func belowShare(results []LegalResult, min float64) []string {
	if min <= 0 {
		return nil
	}
	var out []string
	for _, r := range results {
		if share := r.JudgedShare(); share >= 0 && share < min {
			out = append(out, fmt.Sprintf("%s judged %d of %d (%.1f%%)", r.Variant.Name, len(r.Judged), r.PlainJudged, share))
		}
	}
	return out
}

// ---- the table ----

// Label filters of the specs that can see a change, by the rule ids they carry.
const (
	catalogueSpecs = `/^(CAP|PRESET|ACTOR|VOICE|CORE|ID)-/`
	listSpecs      = `/^(CAP|PRESET|ACTOR|VOICE|GEN|CORE|ASSET)-/`
	spendSpecs     = `/^(EST|SUBMIT|GEN|LEDGER|VAR|BATCH|CORE|TALK)-/`
	hookSpecs      = `/^(DLV|EVT|RECV|WH)-/`
	errorSpecs     = `/^(ERR|SUBMIT|UPLOAD|EST|RATE|AUTH)-/`
	uploadSpecs    = `/^(UPLOAD|FROMURL|ASSET)-/`
	describeSpecs  = `/^(VER|AUTH|ERR|RATE|CORE)-/`
	probeSpecs     = `/^(HEALTH|AUTH|RATE|CORE)-/`
	broadSpecs     = `/^(CORE|ERR|EST|SUBMIT|GEN|CAP|PRESET|WH|BATCH|UPLOAD|EVT|DLV)-/`
)

// rewrite is a variant that only rewrites the mock's answers (no hooks, no check flags, part of
// the combination): its name, what changes, the text that allows it, the rewrite, and the filter
// of the specs that can see it.
func rewrite(name, change, allows string, api Wrap, filter string) Variant {
	return Variant{Name: name, Change: change, Allows: allows, API: api, Filter: filter}
}

// legalTable is the legal variants written as rows: each names what it changes, the text that
// allows it (Allows) and the label filter of the specs that can see it (Filter, "" the whole
// suite). A variant is registered by adding its row here (or to a table LegalVariants appends).
var legalTable = []Variant{
	rewrite("extra-fields", "every object of every answer (and every error object) carries a key more",
		"Versioning 4: new response field ships without warning; clients ignore unknown response fields",
		addFields(), broadSpecs),
	{
		Name: "event-extra-fields", Change: "every delivery's envelope and every object of its data carry a key more",
		Allows: "Versioning 4 (new response fields); Events > Delivery lists the envelope's keys, not that there are no others",
		Hooks:  hookDocs(func(d map[string]any) { eachObject(d, func(o map[string]any) { o["legal_extra"] = "ignored" }) }, nil),
		Filter: hookSpecs,
	},
	{
		Name: "keys-reordered", Change: "every JSON answer and delivery with its object keys in reverse order",
		Allows: "Versioning 3: order of properties is detail",
		API:    reencode(anyAPI, keysReversed), Hooks: hookDocs(func(map[string]any) {}, keysReversed), Filter: spendSpecs,
	},
	{
		Name: "pretty-printed", Change: "every JSON answer and delivery indented over several lines",
		Allows: "the text fixes JSON, not its whitespace",
		API:    reencode(anyAPI, indented), Hooks: hookDocs(func(map[string]any) {}, indented), Filter: hookSpecs, Apart: true,
	},
	{
		Name: "extra-headers", Change: "every answer carries X-Request-Id, Server, X-Powered-By, Vary and Cache-Control: no-store; every delivery an X-Trace-Id",
		Allows: "no clause limits response headers (only: no CORS headers, no other signature header)",
		API:    extraHeaders(), Hooks: hookBytes(func(h http.Header, b []byte) []byte { h.Set("X-Trace-Id", "legal"); return b }),
		Filter: broadSpecs,
	},
	{
		Name: "json-charset", Change: "every JSON answer and delivery is application/json; charset=utf-8",
		Allows: "the media type stays application/json (Events > Delivery: content-type application/json)",
		API: answers(anyAPI, func(_ *Env, _ *http.Request, a *answer) {
			if isJSON(a.header.Get("Content-Type")) {
				a.header.Set("Content-Type", "application/json; charset=utf-8")
			}
		}),
		Hooks: hookBytes(func(h http.Header, b []byte) []byte {
			h.Set("Content-Type", "application/json; charset=utf-8")
			return b
		}),
		Filter: hookSpecs + " || " + errorSpecs,
	},
	{
		Name: "other-service-name", Change: "deliveries come with user-agent Acme-Webhooks/1.0",
		Allows: "Events > Delivery: user-agent <Service>-Webhooks/1.0",
		Hooks:  hookBytes(func(h http.Header, b []byte) []byte { h.Set("User-Agent", "Acme-Webhooks/1.0"); return b }),
		Filter: hookSpecs,
	},
	rewrite("fractional-credits", "an estimate's credits is fractional (x 0.99995) where the padded hold stays the same",
		"Estimate answer: credits is a number; max_credits_needed an integer",
		fractionalCredits(), spendSpecs),
	rewrite("short-pages", "every list page of two or more rows comes as two pages, the cursors kept coherent",
		"What the service does 8: a page can be shorter than limit; only next_cursor null means the end",
		splitPages(), listSpecs),
	rewrite("trailing-empty-page", "the page holding a list's last row has a next_cursor, which reads an empty page with next_cursor null (not presets)",
		"What the service does 8: only next_cursor null means the end (GET /presets alone says null on the last page)",
		trailingEmptyPage(), listSpecs),
	{
		Name: "no-description", Change: "no live REST description at /openapi.json (404); the target names none",
		Allows: "Versioning 1: read info.version of the live REST description (its path is never given)",
		API:    notFound(route(http.MethodGet, "/openapi.json")), Args: []string{"--description-path", "off"},
		Filter: describeSpecs, Apart: true,
	},
	{
		Name: "description-elsewhere", Change: "the live REST description at /meta/rest.json instead of /openapi.json",
		Allows: "the description's path is not given",
		API:    movePath("/meta/rest.json", "/openapi.json"), Args: []string{"--description-path", "/meta/rest.json"},
		Filter: describeSpecs,
	},
	{
		Name: "other-key-header", Change: "the API key header is X-Mediaspec-Key (X-API-Key means nothing)",
		Allows: "Authentication 1: an API key header; the name of that header: not shown",
		API:    renameKeyHeader("X-Mediaspec-Key"), Args: []string{"--key-header", "X-Mediaspec-Key"},
		Filter: `/^AUTH-/`,
	},
	{
		Name: "key-header-unnamed", Change: "the target does not say its key header's name (the mock unchanged)",
		Allows: "the name of that header: not shown, so a target need not be asked for it",
		Args:   []string{"--key-header", "off"}, Filter: `/^AUTH-/`, Apart: true,
	},
	{
		Name: "other-id-tails", Change: "every prefixed id shows another 32-hex tail (each digit XOR 5), mapped back on the way in",
		Allows: "Id prefixes: prefix, then 32 lowercase hex characters; pass ids back exactly",
		API:    otherTails(), Hooks: hookBytes(func(h http.Header, b []byte) []byte {
			h.Set("Webhook-Id", string(flipTails([]byte(h.Get("Webhook-Id")))))
			return flipTails(b)
		}),
		Filter: broadSpecs,
	},
	{
		Name: "probes-elsewhere", Change: "the probes at /livez and /readyz instead of /health/live and /health/ready",
		Allows: "Gaps in the endpoint shapes: health probe paths and answers: not shown",
		API:    chainWraps(movePath("/livez", "/health/live"), movePath("/readyz", "/health/ready")),
		Args:   []string{"--live-path", "/livez", "--ready-path", "/readyz"}, Filter: probeSpecs,
	},
	{
		Name: "body-before-scope-off-submit", Change: "uploads, from-url imports and webhook writes check a read-only key's body before its scope: malformed JSON answers 400 invalid_config, not 403",
		Allows: "Errors: the check order (scope before body) is given for the submit only; Authentication 3 names the scopes, not their order",
		API:    bodyBeforeScopeOffSubmit(), Filter: `/^(AUTH|CHECK|UPLOAD|FROMURL|WH)-/`,
	},
	rewrite("probes-other-answers", "the probes answer {\"alive\": true} and {\"ready\": bool}",
		"health probe answers: not shown",
		probeAnswers(), probeSpecs),
	rewrite("other-wording", "message, next_action, summary, charge_summary and note reworded (their names and numbers kept)",
		"Versioning 3: wording of message, next_action, charge_summary, note is detail; What the service does 6",
		reword(), broadSpecs),
	rewrite("retry-after-only-where-stated", "error.retry_after_seconds only on rate_limited, submission_in_flight and request_blocked; Retry-After only on rate limits that carry a wait",
		"Errors: retry_after_seconds: some codes only; a Retry-After header on some rate limits",
		retryAfterOnlyWhereStated(), errorSpecs),
	{
		Name: "settlement-released", Change: "a failed job's settled credits read settlement released instead of open",
		Allows: "Credits object: settlement string (values seen: open, captured)",
		API:    anySettled(), Hooks: hookDocs(func(d map[string]any) { releaseSettled(d) }, nil),
		Filter: `/^(LEDGER|GEN|EVT|BATCH|DLV)-/`,
	},
	{
		Name: "catalogue-listed-only", Change: "capabilities, presets, templates, actors and voices carry only the fields the text lists",
		Allows: "Capability: other fields of the list row and detail: not shown; Actor, Voice, Preset and template tables",
		API: chain(listedOnly(route(http.MethodGet, "/capabilities"), shape{"ok": nil, "capabilities": capabilityRow, "next_cursor": nil}),
			listedOnly(route(http.MethodGet, "/capabilities/[^/]+"), capabilityDetailShown),
			listedOnly(route(http.MethodGet, "/presets"), shape{"ok": nil, "presets": presetShown, "total": nil, "next_cursor": nil}),
			listedOnly(route(http.MethodGet, "/presets/[^/]+/templates"), presetTemplates),
			listedOnly(route(http.MethodGet, "/actors"), shape{"ok": nil, "actors": actorShown, "next_cursor": nil}),
			listedOnly(route(http.MethodGet, "/voices"), shape{"ok": nil, "voices": voiceShown, "total": nil, "next_cursor": nil})),
		Filter: catalogueSpecs,
	},
	{
		Name: "generations-listed-only", Change: "estimate, submit, read, wait and batch answers carry only the fields the text lists (fan_out_label only when set)",
		Allows: "Generation, Submit answer, Estimate answer and Batch tables; Batch: each sibling with at least generation_id, batch_index, status",
		API: chain(listedOnly(estimate, estimateShown), listedOnly(submitRoute, submitShow),
			docs(route(http.MethodGet, "/generations/[^/]+"), success, func(_ *http.Request, _ *answer, d map[string]any) { withoutNullFanOut(d); readShown.keep(d) }),
			docs(route(http.MethodGet, "/generations/[^/]+/wait"), success, func(_ *http.Request, _ *answer, d map[string]any) { withoutNullFanOut(d); waitShown.keep(d) }),
			listedOnly(batchRoute, batchShown)),
		Filter: spendSpecs,
	},
	{
		Name: "uploads-listed-only", Change: "reservation and finalize answers carry only the fields the text lists",
		Allows: "Upload reservation and Upload finalize answer",
		API: chain(listedOnly(route(http.MethodPost, "/uploads"), reservationShown),
			listedOnly(route(http.MethodPost, "/uploads/[^/]+/finalize"), finalizeShown)),
		Filter: uploadSpecs,
	},
	{
		Name: "webhooks-listed-only", Change: "endpoint answers and deliveries carry only the fields the text lists",
		Allows: "Webhook endpoint table; Webhook endpoints; Events > Payloads",
		API: chain(listedOnly(route(http.MethodPost, "/webhooks"), shape{"ok": nil, "webhook": endpointShown, "secret": nil}),
			listedOnly(route(http.MethodGet, "/webhooks"), shape{"ok": nil, "webhooks": endpointShown}),
			listedOnly(route(http.MethodDelete, "/webhooks/[^/]+"), keys("ok", "webhook_id", "deleted"))),
		Hooks: eventsListedOnly(), Filter: hookSpecs,
	},
	rewrite("errors-listed-only", "error objects carry only the fields the Errors table lists (no field, fields, accepted_content_types, asset_ids, limit amounts)",
		"Errors: every failure body; the refusal names the field or ids (in its message)",
		docs(anyAPI, failure, func(_ *http.Request, _ *answer, d map[string]any) { errorShown.keep(d) }), errorSpecs),
	{
		Name: "reference-fields-dropped", Change: "every property the document marks reference (x-provenance) is left out of answers and deliveries, but for what a generation list row carries by the text's meaning (what it cost, when it was made, its outputs' asset ids: kept under the reference's names)",
		Allows: "each dropped element's x-provenance: the text says not shown or is silent; GET /generations: a row carries what it cost, when it was made and the asset ids of outputs, under names not shown",
		API:    dropReferenceAnswers(), Hooks: hookDocs(dropReferenceEvent, nil), Filter: "",
	},
	rewrite("schema-price-words", "every config_schema offers two more optional settings named with price words: charge_level (low, standard, high) and cost_profile (a quality against speed knob), accepted and ignored",
		"Capability: the schema is strict and carries no price; a setting whose name holds a price word states no amount",
		priceWordSettings(), `/^(CAP|PRESET|EST|SUBMIT|TALK|ERR|VER)-/`),
	rewrite("invoke-accepted", "both workflow invokes answer 202 Accepted instead of 201, their Location and body kept",
		"Gaps in the endpoint shapes: workflow request and answer shapes: not shown; an invoke answers with a Location header naming the run (no status is given)",
		invokeAccepted(), `/^(WF|ID|EVT|AUTH)-/`),
	rewrite("options-answered", "OPTIONS answers 204 with Allow and no CORS header",
		"What the service does 9: the API sends no CORS headers (nothing about OPTIONS)",
		optionsAnswered(), `/^CORE-004$/`),
}

// keysReversed and indented encode a JSON value with its object keys in reverse order, or
// indented over several lines.
func keysReversed(v any) []byte { return encodeOrdered(v, false) }
func indented(v any) []byte     { return encodeOrdered(v, true) }

// LegalVariants is the table of legal variants: the written rows, the config-key renames
// (legal_configkeys.go), the scrambled outsider (legal_scrambled.go) and the wrong-server rows the
// text allows after all (Server.Legal, legal_moved.go), in that order (the combination chains them
// so). It fails when the REST description the reference-field rows read cannot be loaded.
func LegalVariants() ([]Variant, error) {
	if _, err := refDropperOnce(); err != nil {
		return nil, fmt.Errorf("the normative view: %w", err)
	}
	vs := append(slices.Clone(legalTable), configKeyVariants()...)
	scrambled, err := scrambledVariant()
	if err != nil {
		return nil, err
	}
	vs = append(vs, scrambled)
	return append(vs, movedVariants()...), nil
}

// addFields adds a key to every object of every JSON answer below /api/v1 and the control API's
// answers left alone; a failure's error object gets it, its envelope ({"error": ...}) does not.
func addFields() Wrap {
	return answers(anyAPI, func(_ *Env, r *http.Request, a *answer) {
		if !isJSON(a.header.Get("Content-Type")) || r.URL.Path == apiPrefix+"/openapi.json" {
			return
		}
		d, ok := a.doc()
		if !ok {
			return
		}
		if e, isErr := d["error"].(map[string]any); isErr && a.status >= 400 {
			eachObject(e, func(o map[string]any) { o["legal_extra"] = "ignored" })
		} else {
			eachObject(d, func(o map[string]any) { o["legal_extra"] = "ignored" })
		}
		a.setDoc(d)
	})
}

func extraHeaders() Wrap {
	return answers(anyAPI, func(_ *Env, _ *http.Request, a *answer) {
		a.header.Set("X-Request-Id", "req_legal")
		a.header.Set("Server", "legal-variant")
		a.header.Set("X-Powered-By", "mediaspec-legal")
		a.header.Add("Vary", "Accept-Encoding")
		if a.header.Get("Cache-Control") == "" {
			a.header.Set("Cache-Control", "no-store")
		}
	})
}

// fractionalCredits answers an estimate's whole credits p > 0 as p x 0.99995 when ceil(x 1.1) of
// both is the same hold, so max_credits_needed stays right.
func fractionalCredits() Wrap {
	return docs(estimate, success, func(_ *http.Request, _ *answer, d map[string]any) {
		p, ok := intOf(d["credits"])
		if !ok || p <= 0 {
			return
		}
		q := float64(p) * 0.99995
		if math.Ceil(q*1.1-1e-6) != math.Ceil(float64(p)*1.1-1e-6) {
			return
		}
		d["credits"] = json.Number(strconv.FormatFloat(q, 'f', -1, 64))
	})
}

// notFound answers matching calls 404 not_found.
func notFound(m matcher) Wrap {
	return func(_ *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !m(r) {
				next.ServeHTTP(w, r)
				return
			}
			refusal(http.StatusNotFound, "not_found", false, nil).send(w)
		})
	}
}

// movePath serves the mock's route at from (below /api/v1) at to instead; from answers 404.
func movePath(to, from string) Wrap {
	return func(_ *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case apiPrefix + from:
				refusal(http.StatusNotFound, "not_found", false, nil).send(w)
				return
			case apiPrefix + to:
				r.URL.Path = apiPrefix + from
				r.URL.RawPath = ""
				r.RequestURI = r.URL.RequestURI()
			}
			next.ServeHTTP(w, r)
		})
	}
}

// renameKeyHeader makes name the API key header: its value reaches the mock as X-API-Key, and an
// X-API-Key the client sends is dropped (no longer a key header).
func renameKeyHeader(name string) Wrap {
	return requests(anyAPI, func(_ *Env, r *http.Request) {
		r.Header.Del("X-API-Key")
		if v := r.Header.Get(name); v != "" {
			r.Header.Set("X-API-Key", v)
			r.Header.Del(name)
		}
	})
}

// probeAnswers answers the probes with bodies of another shape.
func probeAnswers() Wrap {
	return answers(route(http.MethodGet, "/health/(live|ready)"), func(_ *Env, r *http.Request, a *answer) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/live"):
			a.setDoc(map[string]any{"alive": a.status < 300})
		default:
			a.setDoc(map[string]any{"ready": a.status < 300})
		}
		a.header.Set("Content-Type", "application/json")
	})
}

// reword rewrites the advice sentences of every answer, keeping what they name.
func reword() Wrap {
	prefix := map[string]string{"message": "As it stands: ", "next_action": "What to do next: ", "summary": "In short: ", "charge_summary": "About the charge: ", "note": "Please note: "}
	return answers(anyAPI, func(_ *Env, r *http.Request, a *answer) {
		if !isJSON(a.header.Get("Content-Type")) || r.URL.Path == apiPrefix+"/openapi.json" {
			return
		}
		d, ok := a.doc()
		if !ok {
			return
		}
		eachObject(d, func(o map[string]any) {
			for k, p := range prefix {
				if s, isStr := o[k].(string); isStr && s != "" {
					o[k] = p + strings.ToLower(s[:1]) + s[1:]
				}
			}
		})
		a.setDoc(d)
	})
}

// retryAfterOnlyWhereStated drops error.retry_after_seconds from every code but rate_limited,
// submission_in_flight and request_blocked, and Retry-After from every answer but a 429
// rate_limited that carries a wait.
func retryAfterOnlyWhereStated() Wrap {
	return answers(anyAPI, func(_ *Env, _ *http.Request, a *answer) {
		d, ok := a.doc()
		e, _ := d["error"].(map[string]any)
		code, _ := e["code"].(string)
		if ok && e != nil {
			if _, has := e["retry_after_seconds"]; has && code != "rate_limited" && code != "submission_in_flight" && code != "request_blocked" {
				delete(e, "retry_after_seconds")
				a.setDoc(d)
			}
		}
		if _, wait := e["retry_after_seconds"]; !(a.status == http.StatusTooManyRequests && code == "rate_limited" && wait) {
			a.header.Del("Retry-After")
		}
	})
}

// releaseSettled renames settlement open to released on every settled (terminal) credits object
// that charged nothing.
func releaseSettled(v any) bool {
	changed := false
	eachObject(v, func(o map[string]any) {
		if o["settlement"] == "open" && o["terminal"] == true {
			if n, ok := intOf(o["credits_charged"]); ok && n == 0 {
				o["settlement"] = "released"
				changed = true
			}
		}
	})
	return changed
}

func anySettled() Wrap {
	return docs(anyAPI, success, func(_ *http.Request, _ *answer, d map[string]any) { releaseSettled(d) })
}

// optionsAnswered answers OPTIONS below /api/v1 itself: 204, an Allow header, nothing else.
func optionsAnswered() Wrap {
	return func(_ *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodOptions || !anyAPI(r) {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
		})
	}
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// invokeAccepted answers both workflow invokes 202 where the mock answers 201.
func invokeAccepted() Wrap {
	return answers(route(http.MethodPost, "/workflows/(templates/[^/]+|[^/]+)/invoke"), func(_ *Env, _ *http.Request, a *answer) {
		if a.status == http.StatusCreated {
			a.status = http.StatusAccepted
		}
	})
}

// bodyBeforeScopeOffSubmit refuses a read-only key's malformed JSON body with 400 invalid_config
// before the scope check on every generate endpoint but the submit, whose check order the text fixes.
func bodyBeforeScopeOffSubmit() Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := r.URL.Path
			offSubmit := strings.HasPrefix(p, apiPrefix+"/uploads") || strings.HasPrefix(p, apiPrefix+"/webhooks")
			if r.Method == http.MethodPost && offSubmit && env.readOnly(presented(r)) {
				var v any
				if b := requestBody(r); len(b) > 0 && json.Unmarshal(b, &v) != nil {
					writeError(w, http.StatusBadRequest, "invalid_config", "The body is not valid JSON.", "body")
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}
