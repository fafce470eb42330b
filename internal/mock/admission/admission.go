// Package admission decides whether an estimate, a submit or a workflow invoke is accepted. It
// holds one function per rule, each with its one message (rules.go), and the three check orders
// side by side as ordered lists of named steps (estimateOrder, submitOrder, invokeOrder below):
// the first failing step alone answers. The orders are tested as data against spec/rules.yaml
// (order_test.go); a rule id leads to the function that decides it (its doc comment names it).
//
// What a check reads comes from the packages that own it: the catalogue (capabilities, config
// schemas, uploads and voices a request names, prices: package catalog), the fault queue (package
// faults), the wallet (package ledger), and, for the submit's in-flight and blocked steps, the
// jobs store's running jobs and failure counts (package jobs supplies them as functions, called
// with its lock held). Package jobs keeps acceptance and the job lifecycle, package workflows the
// graph resolution and the runs; neither decides a refusal itself.
//
// Every refusal is an *apierr.Error (returned as error); nothing here holds, charges or starts
// anything, except that the fault steps consume the queued fault they answer.
package admission

import (
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/internal/mock/faults"
)

// Deps are what the checks read. Catalog is required; Faults may be nil (no fault is ever queued).
type Deps struct {
	Catalog *catalog.Catalog
	Faults  *faults.Store
	// Request is the test input of the request being decided (faults.Fault.Request), "" for
	// none: the fault steps take that request's faults first (spec/testmode.yaml).
	Request string
}

// Step is one named check of a check order.
type Step[C any] struct {
	// Name is the interface's name for the step (interface spec "Errors" for the submit), or the
	// mock's own name for a step the text does not place.
	Name string
	// Rules are the rule ids of spec/rules.yaml that fix what the step answers or where it stands.
	Rules []string
	// Adapter is true for a step the HTTP adapter (package api) checks before the order runs here
	// (rate limit, scope); Check is then nil.
	Adapter bool
	// Own is true for a step the interface text does not place (the mock's own choice).
	Own   bool
	Check func(C) error
}

// run runs the steps of order on c in turn; the first refusal wins. stop, when not nil, ends the
// order early without a refusal (a submit replay).
func run[C any](order []Step[C], c C, stop func(C) bool) error {
	for _, st := range order {
		if st.Check == nil {
			continue
		}
		if err := st.Check(c); err != nil {
			return err
		}
		if stop != nil && stop(c) {
			return nil
		}
	}
	return nil
}

// take consumes a queued fault of kind for the workspace and capability; false when none (or no
// fault store).
func (d Deps) take(kind faults.Kind, workspaceID, capabilityID string) bool {
	if d.Faults == nil {
		return false
	}
	_, ok := d.Faults.TakeIn(kind, d.Request, workspaceID, capabilityID)
	return ok
}
