// Package specs holds the conformance specs: black-box checks of the media generation service over
// HTTP. Register adds them to Ginkgo's tree; each spec is declared through framework.Rule so that it
// carries the ids of the rules it checks and the labels of what it needs.
//
// Specs work against any implementation: they discover catalogue data (capability ids, actors,
// voices, presets) through the API and skip with the reason when the target has none of a kind.
//
// One file per area of the interface holds that area's specs (auth.go, submit.go, webhooks.go, …),
// or several when they are many, the area's name then an underscore and what they check
// (uploads_finalize.go: the report's area is the name up to the underscore); the helpers they
// share live in helpers_*.go, one file per concern.
package specs

import "github.com/mediaspec/mediaspec/conformance/internal/framework"

// Register adds every spec to Ginkgo's tree. Call it once, before RunSpecs.
func Register(f *framework.Framework) {
	basicsSpecs(f)
	authSpecs(f)
	errorSpecs(f)
	balanceFaultSpecs(f)
	bucketSpecs(f)
	capabilitySpecs(f)
	catalogueSpecs(f)
	presetSpecs(f)
	estimateSpecs(f)
	ledgerSpecs(f)
	uploadSpecs(f)
	uploadNameSpecs(f)
	assetSpecs(f)
	webhookSpecs(f)
	deliverySpecs(f)
	generationSpecs(f)
	listSpecs(f)
	submitSpecs(f)
	batchSpecs(f)
	talkingSpecs(f)
	workflowSpecs(f)
	versioningSpecs(f)
}
