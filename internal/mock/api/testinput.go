package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mediaspec/mediaspec/internal/contract"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/webhook"
)

// TestInputHeader is the request header that carries a test input (spec/testmode.yaml): a fault
// of the control API's table, forced for the one request that carries it. Its name is the
// reference's choice (the interface text has one environment and no test mode).
const TestInputHeader = contract.TestInputHeader

// testInputSeq numbers test inputs, so that each request's faults are its own.
var testInputSeq atomic.Uint64

// ParseTestInput reads a test input: a fault kind that a request can cause (faults.Kind.ForRequest),
// then optional parameters, each "; name=value": code (render_fail), seconds (slow_render,
// slow_scan; cancel, recover and webhook_test), count (1 to faults.MaxCount: how many of the
// request's events), capability_id and message (webhook_test's data.message, percent-encoded UTF-8).
// The fault's own checks (faults.Store.Add) judge the values. An unknown kind or parameter, or a
// malformed one, is 400 invalid_config naming the header.
func ParseTestInput(value string) (faults.Spec, error) {
	parts := strings.Split(value, ";")
	kind := faults.Kind(strings.TrimSpace(parts[0]))
	if !kind.ForRequest() {
		return faults.Spec{}, testInputRefusal(fmt.Sprintf("%q is not a test input; use one of %s, optionally followed by \"; code=…\", \"; seconds=…\", \"; count=…\" or \"; capability_id=…\"", string(kind), strings.Join(requestKinds(), ", ")))
	}
	sp := faults.Spec{Kind: kind}
	seen := map[string]bool{}
	for _, p := range parts[1:] {
		name, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		name, v = strings.TrimSpace(name), strings.TrimSpace(v)
		if !ok || v == "" {
			return faults.Spec{}, testInputRefusal(fmt.Sprintf("parameter %q is not name=value", strings.TrimSpace(p)))
		}
		if seen[name] {
			return faults.Spec{}, testInputRefusal("parameter " + name + " is given twice")
		}
		seen[name] = true
		switch name {
		case "code":
			sp.Code = v
		case "capability_id":
			sp.CapabilityID = v
		case "message":
			m, err := url.PathUnescape(v)
			if err != nil || !utf8.ValidString(m) {
				return faults.Spec{}, testInputRefusal(fmt.Sprintf("message %q is not percent-encoded UTF-8", v))
			}
			if n := utf8.RuneCountInString(m); n < 1 || n > webhook.MaxTestMessage {
				return faults.Spec{}, testInputRefusal(fmt.Sprintf("message is 1 to %d characters", webhook.MaxTestMessage))
			}
			sp.Message = m
		case "count":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return faults.Spec{}, testInputRefusal(fmt.Sprintf("count %q is not a whole number from 1 to %d", v, faults.MaxCount))
			}
			sp.Count = n
		case "seconds":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f != f {
				return faults.Spec{}, testInputRefusal(fmt.Sprintf("seconds %q is not a number", v))
			}
			sp.Seconds = f
		default:
			return faults.Spec{}, testInputRefusal(fmt.Sprintf("unknown parameter %q (known: code, seconds, count, capability_id, message)", name))
		}
	}
	return sp, nil
}

func requestKinds() []string {
	var out []string
	for _, k := range faults.Kinds {
		if k.ForRequest() {
			out = append(out, string(k))
		}
	}
	return out
}

func testInputRefusal(why string) *apierr.Error {
	return apierr.InvalidConfig(TestInputHeader, "The "+TestInputHeader+" header is not a test input this service honours: "+why+". Nothing was done.")
}

// testInput reads the request's test input for a caller whose key checks passed and queues its
// fault, scoped to the caller's workspace and to this request alone: it returns the request's
// test input ("" when the header is absent, test inputs are off, or the key is not a test key:
// the header is then ignored, as a production key must never see it), or 400 invalid_config.
func (rt *Router) testInput(r *http.Request, workspaceID, keyID string) (string, error) {
	values := r.Header.Values(TestInputHeader)
	if len(values) == 0 || rt.deps.TestKey == nil || rt.deps.Faults == nil || !rt.deps.TestKey(keyID) {
		return "", nil
	}
	if len(values) > 1 || strings.Contains(values[0], ",") {
		return "", testInputRefusal("a request carries one test input")
	}
	sp, err := ParseTestInput(values[0])
	if err != nil {
		return "", err
	}
	sp.WorkspaceID = workspaceID
	sp.Request = fmt.Sprintf("ti_%d", testInputSeq.Add(1))
	if _, err := rt.deps.Faults.Add(sp); err != nil {
		var e *apierr.Error
		if errors.As(err, &e) {
			return "", testInputRefusal(e.Field + ": " + strings.TrimSuffix(e.Message, "."))
		}
		return "", err
	}
	return sp.Request, nil
}
