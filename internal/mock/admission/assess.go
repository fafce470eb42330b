package admission

import (
	"errors"
	"strings"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
)

// Assessment is everything the catalog says about a submit request, worked out once before the
// submit checks run; each refusal in it is reported at its own step of submitOrder.
type Assessment struct {
	Viewer catalog.Viewer
	// Config is the request's config with every accepted deprecated alias renamed to its new name
	// (Versioning 6): what the submit prices, checks, stores and deduplicates. It is the config
	// as sent when the capability cannot run or sends an alias together with its new name.
	NormalConfig map[string]any
	// Cap is the capability when it can run; nil otherwise, and Unavailable says why.
	Cap         *fixtures.Capability
	Unavailable error
	// Config is the config schema, count and resource-field refusal (CheckConfig).
	Config error
	// Variants is the variants refusal: on a capability that makes one result, or above the
	// smaller of its ceiling and 4.
	Variants error
	// Resources are what the request names; ResourcesErr the first refusal of them
	// (CheckResources).
	Resources    catalog.Resources
	ResourcesErr error
	// Quote is the price when Priced; PriceErr why there is none. A request whose price cannot be
	// computed (unknown capability, a pricing field of the wrong type, variants out of range)
	// skips the price checks.
	Quote    catalog.Quote
	Priced   bool
	PriceErr error
}

// Assess asks everything a submit of req by v with variants (nil: absent) needs to know.
func (d Deps) Assess(v catalog.Viewer, req catalog.Request, variants *int) Assessment {
	c := d.Catalog
	a := Assessment{Viewer: v, NormalConfig: req.Config}
	a.Cap, a.Unavailable = c.RunnableFor(v, req.CapabilityID)
	if a.Cap == nil {
		return a
	}
	cp := a.Cap
	normal, aliasErr := c.Normalize(cp, req.Config)
	req.Config, a.NormalConfig = normal, normal
	a.Config = aliasErr
	if a.Config == nil {
		a.Config = c.CheckConfig(cp, req)
	}
	a.Variants = Variants(cp, variants)
	a.Resources, a.ResourcesErr = c.CheckResources(v, req)
	n := 0
	if variants != nil {
		n = *variants
	}
	switch {
	case aliasErr != nil:
		a.PriceErr = aliasErr // both names: no price to compare with max_credits
	case a.Variants != nil:
		a.PriceErr = a.Variants
	case onField(a.Config, pricingFields(cp)):
		a.PriceErr = a.Config
	case cp.Pricing.NotPriced:
		a.PriceErr = NotPriced(cp)
	default:
		a.Quote, a.PriceErr = catalog.Price(cp, req.Config, n, a.Resources)
		a.Priced = a.PriceErr == nil
	}
	return a
}

// pricingFields are the config fields the price reads: a schema failure on
// one of them leaves no computable price (rule CHECK-020).
func pricingFields(cp *fixtures.Capability) []string {
	var out []string
	for _, src := range []string{cp.Pricing.QuantityFrom, cp.Pricing.ExactQuantityFrom} {
		if q, err := fixtures.ParseQuantitySource(src); err == nil {
			for _, f := range q.Fields {
				out = append(out, "config."+f)
			}
		}
	}
	out = append(out, "config.count")
	if cp.FanOutField != "" {
		out = append(out, "config."+cp.FanOutField)
	}
	return out
}

func onField(err error, fields []string) bool {
	var e *apierr.Error
	if !errors.As(err, &e) {
		return false
	}
	for _, f := range fields {
		if e.Field == f || strings.HasPrefix(e.Field, f+"[") || strings.HasPrefix(e.Field, f+".") {
			return true
		}
	}
	return false
}
