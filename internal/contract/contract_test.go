package contract_test

import (
	"context"
	"testing"

	"github.com/mediaspec/mediaspec/internal/contract"
	"github.com/mediaspec/mediaspec/spec"
)

// The figures the REST description also writes agree with it: a figure named here and written
// there again cannot drift apart unnoticed.
func TestFiguresAgreeWithTheDescription(t *testing.T) {
	v, err := spec.NewEmbeddedValidator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	doc := v.Document()
	limit := doc.Components.Parameters["Limit"]
	if limit == nil || limit.Value.Schema.Value.Default != float64(contract.PageSizeDefault) {
		t.Errorf("parameter Limit: default %v, want PageSizeDefault %d", limit.Value.Schema.Value.Default, contract.PageSizeDefault)
	}
	maxLength := func(schema, prop string) uint64 {
		s := doc.Components.Schemas[schema]
		if s == nil || s.Value.Properties[prop] == nil || s.Value.Properties[prop].Value.MaxLength == nil {
			t.Fatalf("%s.%s has no maxLength", schema, prop)
		}
		return *s.Value.Properties[prop].Value.MaxLength
	}
	for _, c := range []struct {
		schema, prop string
		want         int
	}{
		{"WebhookCreateRequest", "url", contract.MaxWebhookURL},
		{"WebhookCreateRequest", "description", contract.MaxWebhookDescription},
		{"UploadReserveRequest", "filename", contract.MaxFilename},
	} {
		if got := maxLength(c.schema, c.prop); got != uint64(c.want) {
			t.Errorf("%s.%s: maxLength %d, want %d", c.schema, c.prop, got, c.want)
		}
	}
}

// contract.RetryWaits hands out a fresh slice: a caller that changes its copy changes nobody else's.
func TestRetryWaitsIsACopy(t *testing.T) {
	a := contract.RetryWaits()
	a[0] = 0
	if contract.RetryWaits()[0] == 0 || len(contract.RetryWaits()) != contract.DeliveryAttempts-1 {
		t.Fatalf("contract.RetryWaits: %v, want %d fresh waits", contract.RetryWaits(), contract.DeliveryAttempts-1)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.2.0", "1.2.0", 0}, {"1.1.9", "1.2.0", -1}, {"1.10.0", "1.9.0", 1}, {"2.0.0", "1.99.99", 1},
		{"1.2", "1.2.0", 0}, {"1.x.0", "1.0.0", 0}, {"", "0.0.1", -1},
	} {
		if got := contract.CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
