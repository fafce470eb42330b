package spec_test

import (
	"fmt"

	"github.com/mediaspec/mediaspec/spec"
)

// The rule catalogue is embedded: every rule has a stable id, a level and the section of the
// interface text it comes from.
func ExampleLoadRules() {
	rules, err := spec.LoadRules()
	if err != nil {
		panic(err)
	}
	r, ok := rules.Get("CHECK-001")
	fmt.Println(ok, r.Level, r.Section, r.Area())
	// Output: true MUST Errors CHECK
}
