// Package catalogue is the suite's driver of the catalogue: it finds the capabilities, models,
// actors, voices, presets and templates the specs run against (reading each list and detail once
// per run and key), builds configs from what a capability's detail offers (its schema and example,
// never the reference's key names), and judges the catalogue's rows and templates.
//
// Its functions that read the target fail the running spec (Gomega's Expect) when an answer breaks
// the text, and skip it (Client.Lacks) when the target lacks what the spec needs; they are called
// from inside a spec.
package catalogue
