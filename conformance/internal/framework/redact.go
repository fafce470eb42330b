package framework

import (
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2/types"
)

// Redacted replaces every secret in a transcript or report.
const Redacted = "[REDACTED]"

var (
	apiKeyPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`sk_live_[A-Za-z0-9]+`) })
	secretPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`) })
)

// sensitiveHeaders are replaced whole, whatever their value.
var sensitiveHeaders = []string{"Authorization", "X-Api-Key", "Cookie", "Set-Cookie", "Proxy-Authorization"}

// Redactor removes secrets from text: API keys (sk_live_...), webhook secrets (whsec_...), and any
// literal registered with Add (the control token, keys of another shape). It is safe for
// concurrent use.
//
// Every exchange of a run passes through String (its URL, headers and bodies), and a run registers
// a key for each workspace it makes (hundreds), while few texts hold any of them: String first
// looks for all of them in one pass (a strings.Replacer) and replaces them one by one, longest
// first, only in a text that holds one.
type Redactor struct {
	mu sync.Mutex // guards secrets, find
	// secrets, longest first, so a secret containing another is replaced whole. Add replaces the
	// slice, never changes it in place: String reads it outside the lock.
	secrets []string
	find    *strings.Replacer // finds any of secrets in one pass; nil when there is none
}

// Add registers literal secrets; empty strings are ignored.
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := slices.Clone(r.secrets)
	for _, s := range secrets {
		if s != "" && !slices.Contains(next, s) {
			next = append(next, s)
		}
	}
	if len(next) == len(r.secrets) {
		return
	}
	sort.SliceStable(next, func(i, j int) bool { return len(next[i]) > len(next[j]) })
	pairs := make([]string, 0, 2*len(next))
	for _, s := range next {
		pairs = append(pairs, s, Redacted)
	}
	r.secrets, r.find = next, strings.NewReplacer(pairs...)
}

// String returns s with every secret replaced by Redacted.
func (r *Redactor) String(s string) string {
	r.mu.Lock()
	secrets, find := r.secrets, r.find
	r.mu.Unlock()
	if find != nil && find.Replace(s) != s {
		for _, sec := range secrets {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	if strings.Contains(s, "sk_live_") {
		s = apiKeyPattern().ReplaceAllString(s, "sk_live_"+Redacted)
	}
	if strings.Contains(s, "whsec_") {
		s = secretPattern().ReplaceAllString(s, "whsec_"+Redacted)
	}
	return s
}

// Header returns a copy of h with sensitive headers replaced whole and secrets removed from the
// others.
func (r *Redactor) Header(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vals := range h {
		ck := http.CanonicalHeaderKey(k)
		sensitive := false
		for _, s := range sensitiveHeaders {
			if ck == s {
				sensitive = true
			}
		}
		for _, v := range vals {
			if sensitive {
				out[ck] = append(out[ck], Redacted)
			} else {
				out[ck] = append(out[ck], r.String(v))
			}
		}
	}
	return out
}

// Report returns a copy of r with every failure message, captured output and report entry of its
// specs passed through the redactor, for reports written from it.
func (r *Redactor) Report(rep types.Report) types.Report {
	out := rep
	out.SpecReports = make(types.SpecReports, len(rep.SpecReports))
	for i, sr := range rep.SpecReports {
		sr.Failure = r.failure(sr.Failure)
		afs := make([]types.AdditionalFailure, len(sr.AdditionalFailures))
		for j, af := range sr.AdditionalFailures {
			af.Failure = r.failure(af.Failure)
			afs[j] = af
		}
		sr.AdditionalFailures = afs
		sr.CapturedGinkgoWriterOutput = r.String(sr.CapturedGinkgoWriterOutput)
		sr.CapturedStdOutErr = r.String(sr.CapturedStdOutErr)
		entries := make(types.ReportEntries, len(sr.ReportEntries))
		for j, e := range sr.ReportEntries {
			e.Value = types.WrapEntryValue(r.String(e.StringRepresentation()))
			entries[j] = e
		}
		sr.ReportEntries = entries
		out.SpecReports[i] = sr
	}
	reasons := make([]string, len(rep.SpecialSuiteFailureReasons))
	for i, s := range rep.SpecialSuiteFailureReasons {
		reasons[i] = r.String(s)
	}
	out.SpecialSuiteFailureReasons = reasons
	return out
}

func (r *Redactor) failure(f types.Failure) types.Failure {
	f.Message = r.String(f.Message)
	f.ForwardedPanic = r.String(f.ForwardedPanic)
	return f
}

// Writer returns a writer that redacts each write before passing it to w. A secret split across
// two writes is not caught; Ginkgo's reporter writes whole blocks.
func (r *Redactor) Writer(w io.Writer) io.Writer { return redactingWriter{r: r, w: w} }

type redactingWriter struct {
	r *Redactor
	w io.Writer
}

func (rw redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(rw.w, rw.r.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
