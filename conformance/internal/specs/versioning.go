package specs

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/internal/contract"
)

// versioningSpecs registers the specs of schema versioning.
func versioningSpecs(f *framework.Framework) {
	Describe("versioning: deprecated schema fields", func() {
		f.Rule("VER-006").It("every property marked deprecated in a config_schema is optional, has no default and has a description", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, d := range catalogue.AvailableDetails(ctx, c, 40) {
				for _, p := range catalogue.DeprecatedProps(answer.ObjectAt(d, "config_schema"), d.String("capability_id")) {
					Expect(p.Required).To(BeFalse(), p.Path+" is deprecated: it is optional"+d.Describe())
					Expect(p.Schema).NotTo(HaveKey("default"), p.Path+" is deprecated: it has no default"+d.Describe())
					desc, _ := p.Schema["description"].(string)
					Expect(desc).NotTo(BeEmpty(), p.Path+" is deprecated: its description names the new field"+d.Describe())
				}
			}
		})
	})

	versioningAliasSpecs(f)
	versioningEnumSpecs(f)
}

// versioningEnumSpecs registers the spec of a removed enum value: removed through control during
// the run (a provider forces it, Versioning 5), or the removal the profile declares
// (removed_enum_*).
func versioningEnumSpecs(f *framework.Framework) {
	Describe("versioning: a removed enum value", func() {
		f.Rule(rules("VER-026", "ERR-024", "ERR-020")...).Needs(framework.Spends, framework.Profile).It("a removed enum value leaves config_schema and is refused naming the field, not mapped to another value", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			c := sp.c
			var capID, field, value string
			var cfg map[string]any
			if s.HasControl() {
				// Removed during the run: the value estimated before, so a refusal is the removal's.
				capID, field, value, cfg = removeEnumValue(ctx, s, c)
			} else {
				capID, field, value, cfg = declaredRemoval(ctx, s, c)
			}
			d := catalogue.ReadDetail(ctx, c, capID)
			p, _ := answer.SchemaProps(d)[field].(map[string]any)
			Expect(p["enum"]).NotTo(ContainElement(value), "config_schema no longer lists the removed value "+value+" of "+field+d.Describe())
			est := c.Post(ctx, "/estimates", map[string]any{"capability_id": capID, "config": cfg}, framework.Invalid()).ExpectError(http.StatusBadRequest, "invalid_config")
			refusal.ExpectField(est, "config."+field)
			base := catalogue.Clone(cfg)
			delete(base, field)
			_, need := estimateOf(ctx, c, capID, base, nil)
			sub := refuse(ctx, c, submitBody(capID, cfg, need*2, nil), http.StatusBadRequest, "invalid_config")
			refusal.ExpectField(sub, "config."+field)
		})
	})
}

// removeEnumValue removes, through control, a value of a string enum property that estimates now
// (removableEnumValue), put back when the spec ends, and answers a config sending it.
func removeEnumValue(ctx context.Context, s *framework.Spec, c *framework.Client) (capID, field, value string, cfg map[string]any) {
	GinkgoHelper()
	capID, field, value, cfg = removableEnumValue(ctx, c)
	if capID == "" {
		s.Lacks("no available capability (priced without an upload) has a string enum property with a value other than its default and example")
	}
	path := "/capabilities/" + capID + "/enum-removals/" + field + "/" + url.PathEscape(value)
	r, err := s.Control().Call(ctx, http.MethodPut, path, nil)
	Expect(err).NotTo(HaveOccurred())
	if r.Status == http.StatusNotFound || r.Status == http.StatusMethodNotAllowed {
		s.Lacks("the control API does not remove enum values (PUT %s answered %d)", path, r.Status)
	}
	Expect(r.Status).To(Equal(http.StatusOK), "control PUT "+path+r.Describe())
	DeferCleanup(func(ctx SpecContext) { _, _ = s.Control().Call(ctx, http.MethodDelete, path, nil) })
	return capID, field, value, cfg
}

// declaredRemoval is the profile's removed enum value (removed_enum_*) and a config sending it:
// the capability's example_config with the field set to the value.
func declaredRemoval(ctx context.Context, s *framework.Spec, c *framework.Client) (capID, field, value string, cfg map[string]any) {
	GinkgoHelper()
	re := s.RemovedEnum()
	d := catalogue.ReadDetail(ctx, c, re.CapabilityID)
	if _, ok := answer.SchemaProps(d)[re.Field].(map[string]any); !ok {
		framework.SkipFor(framework.NotDeclared("unsupported: removed_enum_field " + re.Field + " is not a config property of " +
			re.CapabilityID + ": declare the property whose enum lost removed_enum_value"))
	}
	cfg = catalogue.Clone(answer.ObjectAt(d, "example_config"))
	if catalogue.NamesUpload(cfg) {
		// Its estimate would judge an upload the spec does not make, in an order the text leaves
		// open: the control path picks a capability priced without one for the same reason.
		framework.SkipFor(framework.NotDeclared("unsupported: removed_enum_capability_id " + re.CapabilityID +
			"'s example_config names an upload: declare a capability priced without one"))
	}
	cfg[re.Field] = re.Value
	return re.CapabilityID, re.Field, re.Value, cfg
}

// removableEnumValue finds an available capability priced without an upload and a string enum
// property of its config_schema with a value that is neither the property's default nor the one
// example_config uses, and answers the example config with that value set (checked to estimate).
func removableEnumValue(ctx context.Context, c *framework.Client) (capID, field, value string, cfg map[string]any) {
	GinkgoHelper()
	for _, d := range catalogue.AvailableDetails(ctx, c, 40) {
		ex := answer.ObjectAt(d, "example_config")
		if catalogue.NamesUpload(ex) {
			continue
		}
		for name, p := range answer.SchemaProps(d) {
			pm, _ := p.(map[string]any)
			enum, _ := pm["enum"].([]any)
			if pm["type"] != "string" || len(enum) < 3 {
				continue
			}
			for _, v := range enum {
				sv, ok := v.(string)
				if !ok || sv == pm["default"] || sv == ex[name] {
					continue
				}
				try := catalogue.Clone(ex)
				try[name] = sv
				if c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": try}).Status == http.StatusOK {
					return d.String("capability_id"), name, sv, try
				}
			}
		}
	}
	return "", "", "", nil
}

// aliasBecause says why the renamed-field specs need control: the old name is installed with the
// window they need (a price-bearing field, a window that stops at a given version).
// versioningAliasSpecs registers the specs of a renamed config field's old name: installed through
// control with a window of the spec's choosing (no capability has one at present, Versioning 6),
// or the renamed fields the profile declares (renamed_field_*, ended_field_*).
func versioningAliasSpecs(f *framework.Framework) {
	Describe("versioning: a renamed config field's old name", func() {
		f.Rule("VER-006", "VER-007", "EST-015").Needs(framework.Profile, framework.Spends).It("an old name is listed deprecated and is priced, submitted and deduplicated as its new name", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			a := renamedAlias(ctx, s, c)

			s.Step("VER-006")
			d := catalogue.ReadDetail(ctx, c, a.capID)
			schema := answer.ObjectAt(d, "config_schema")
			props, _ := schema["properties"].(map[string]any)
			p, ok := props[a.alias].(map[string]any)
			Expect(ok).To(BeTrue(), "config_schema lists the old name "+a.alias+" while it is accepted"+d.Describe())
			Expect(p["deprecated"]).To(Equal(true), a.alias+" is marked deprecated: true"+d.Describe())
			Expect(p).NotTo(HaveKey("default"), a.alias+" has no default"+d.Describe())
			req, _ := schema["required"].([]any)
			Expect(req).NotTo(ContainElement(a.alias), a.alias+" is optional"+d.Describe())
			desc, _ := p["description"].(string)
			Expect(desc).To(ContainSubstring(a.field), a.alias+"'s description names the new field"+d.Describe())
			Expect(desc).To(ContainSubstring(a.stopsIn), a.alias+"'s description names the version that stops accepting it"+d.Describe())

			s.Step("EST-015")
			byNew := c.Post(ctx, "/estimates", map[string]any{"capability_id": a.capID, "config": a.with(a.field)}).ExpectOK(http.StatusOK)
			byOld := c.Post(ctx, "/estimates", map[string]any{"capability_id": a.capID, "config": a.with(a.alias)}).ExpectOK(http.StatusOK)
			Expect(byOld.Field("credits")).NotTo(Equal(a.base.Field("credits")), "the old name is read, not dropped: it prices like "+a.field+" set"+byOld.Describe())
			Expect(byOld.Field("credits")).To(Equal(byNew.Field("credits")), "the old name is priced as the new name"+byOld.Describe())
			Expect(byOld.Int("max_credits_needed")).To(Equal(byNew.Int("max_credits_needed")), byOld.Describe())
			Expect(byOld.Field("breakdown")).To(Equal(byNew.Field("breakdown")), byOld.Describe())

			s.Step("VER-007")
			need := byNew.Int("max_credits_needed")
			s.Spend(int(need))
			first := c.Post(ctx, "/generations", submitBody(a.capID, a.with(a.alias), need, nil)).ExpectOK(http.StatusCreated)
			id := first.String("generation_id")
			DeferCleanup(func(ctx SpecContext) { s.Finish(ctx, c, id) })
			Expect(first.Int("credits.credits_held")).To(Equal(need), "the old name is held as the new name's max_credits_needed"+first.Describe())
			if readGen(ctx, c, id).String("generation.status") == "completed" {
				s.Undecidable("the job ended before the same request under the new name could be sent", 0)
			}
			again := c.Post(ctx, "/generations", submitBody(a.capID, a.with(a.field), need, nil)).ExpectOK(http.StatusCreated)
			Expect(again.Bool("replay")).To(BeTrue(), "the new name while the old name's job runs is the same request: a replay"+again.Describe())
			Expect(again.String("generation_id")).To(Equal(id), "the replay answers the running job"+again.Describe())
		})

		f.Rule(rules("VER-008", "ERR-024")...).Needs(framework.Profile).It("a config sending both the old and the new name is refused with invalid_config naming both", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			a := renamedAlias(ctx, s, c)
			need := c.Post(ctx, "/estimates", map[string]any{"capability_id": a.capID, "config": a.with(a.field)}).ExpectOK(http.StatusOK).Int("max_credits_needed")
			both := a.with(a.alias, a.field)
			est := c.Post(ctx, "/estimates", map[string]any{"capability_id": a.capID, "config": both}).ExpectError(http.StatusBadRequest, "invalid_config")
			sub := refuse(ctx, c, submitBody(a.capID, both, need, nil), http.StatusBadRequest, "invalid_config")
			// "naming both": each name somewhere in the error object (ERR-020's reading).
			for _, r := range []*framework.Response{est, sub} {
				words := refusal.Words(r)
				Expect(refusal.Names(words, a.alias)).To(BeTrue(), "the refusal names the old name "+a.alias+r.Describe())
				Expect(refusal.Names(words, a.field)).To(BeTrue(), "the refusal names the new name "+a.field+r.Describe())
			}
		})

		f.Rule(rules("VER-009", "ERR-024")...).Needs(framework.Profile).It("an old name whose window ended at or before the service's version is neither listed nor accepted", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			version := c.Get(ctx, s.DescriptionPath()).ExpectStatus(http.StatusOK).String("info.version")
			if !s.HasControl() {
				ended := s.EndedField()
				if contract.CompareVersions(ended.StopsIn, version) > 0 {
					framework.SkipFor(framework.NotDeclared("unsupported: ended_field_stopped_in " + ended.StopsIn + " is after the service's version " +
						version + ": declare a renamed field whose window ended at or before it"))
				}
				expectEnded(ctx, s, c, declaredAlias(ctx, c, ended, false), version)
				return
			}
			// Versioning 6: "a name renamed in 1.1.0 is accepted in 1.1.x, and 1.2.0 stops accepting
			// it": a window that stops at this version, and one that stopped a minor version earlier
			// (a server comparing versions for equality keeps the older one).
			stops := []string{version}
			if older, ok := earlierMinor(version); ok {
				stops = append(stops, older)
			}
			for _, stopsIn := range stops {
				a := installAlias(ctx, s, c, stopsIn)
				expectEnded(ctx, s, c, a, version)
				_ = s.Control().RemoveAlias(ctx, a.capID, a.alias) // the next window renames the same field
			}
		})
	})
}

// expectEnded checks that an old name whose window stopped in a.stopsIn, at or before version, is
// neither listed nor accepted: estimate and submit refuse it with invalid_config naming it.
func expectEnded(ctx context.Context, s *framework.Spec, c *framework.Client, a aliasSetup, version string) {
	GinkgoHelper()
	d := catalogue.ReadDetail(ctx, c, a.capID)
	props, _ := answer.ObjectAt(d, "config_schema")["properties"].(map[string]any)
	Expect(props).NotTo(HaveKey(a.alias), "a name whose window stopped in "+a.stopsIn+" is no longer listed at "+version+d.Describe())
	r := c.Post(ctx, "/estimates", map[string]any{"capability_id": a.capID, "config": a.with(a.alias)}).
		ExpectError(http.StatusBadRequest, "invalid_config")
	refusal.ExpectField(r, "config."+a.alias)
	need := c.Post(ctx, "/estimates", map[string]any{"capability_id": a.capID, "config": a.with(a.field)}).
		ExpectOK(http.StatusOK).Int("max_credits_needed")
	r = refuse(ctx, c, submitBody(a.capID, a.with(a.alias), need, nil), http.StatusBadRequest, "invalid_config")
	refusal.ExpectField(r, "config."+a.alias)
}

// earlierMinor is the version one minor before v (1.2.0 -> 1.1.0), when v is major.minor.patch with
// a minor above 0.
func earlierMinor(v string) (string, bool) {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return "", false
	}
	minor, err := strconv.Atoi(parts[1])
	if err != nil || minor < 1 {
		return "", false
	}
	return parts[0] + "." + strconv.Itoa(minor-1) + ".0", true
}
