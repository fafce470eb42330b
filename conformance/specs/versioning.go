package specs

import (
	"context"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// versioningSpecs registers the specs of schema versioning.
func versioningSpecs(f *framework.Framework) {
	Describe("versioning: deprecated schema fields", func() {
		f.Rule("VER-006").It("every property marked deprecated in a config_schema is optional, has no default and has a description", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, d := range availableDetails(ctx, c, 40) {
				for _, p := range deprecatedProps(objectAt(d, "config_schema"), d.String("capability_id")) {
					Expect(p.required).To(BeFalse(), p.path+" is deprecated: it is optional"+d.Describe())
					Expect(p.schema).NotTo(HaveKey("default"), p.path+" is deprecated: it has no default"+d.Describe())
					desc, _ := p.schema["description"].(string)
					Expect(desc).NotTo(BeEmpty(), p.path+" is deprecated: its description names the new field"+d.Describe())
				}
			}
		})
	})

}
