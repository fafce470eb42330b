package diff_test

import (
	"fmt"

	"github.com/mediaspec/mediaspec/spec/diff"
)

// catalogue is a one-capability catalogue at version whose config has the given properties.
func catalogue(name, version, properties string) *diff.Catalogue {
	c, err := diff.ParseCatalogue(name, []byte(`version: `+version+`
capabilities:
  - capability_id: tts
    category: speech
    output_kind: audio
    status: available
    config_schema: {type: object, properties: {`+properties+`}}
`))
	if err != nil {
		panic(err)
	}
	return c
}

// Two capability catalogues compared by the versioning rules: a config field removed needs a minor
// version bump. Without one the change is breaking; with one it is allowed. Each finding names the
// rule (a VER id) and where the change is.
func ExampleCapabilities() {
	old := catalogue("old.yaml", "1.2.0", "text: {type: string}, speed: {type: number}")
	for _, version := range []string{"1.2.0", "1.3.0"} {
		r, err := diff.Capabilities(old, catalogue("new.yaml", version, "text: {type: string}"))
		if err != nil {
			panic(err)
		}
		fmt.Printf("1.2.0 -> %s: breaking %v\n", version, r.Breaking)
		for _, f := range r.Findings {
			fmt.Println(" ", f.Rule, f.Verdict, f.Change, f.Path)
		}
	}
	// Output:
	// 1.2.0 -> 1.2.0: breaking true
	//   VER-025 breaking version-not-bumped info.version
	//   VER-021 needs-minor-bump field-removed capabilities.tts.config.speed
	// 1.2.0 -> 1.3.0: breaking false
	//   VER-021 allowed field-removed capabilities.tts.config.speed
}
