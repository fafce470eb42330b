package main

import (
	"bytes"
	"os"
	"testing"
)

// The committed table_gen.go is what the description generates: run `go generate ./spec/errtable`
// after changing the description's x-error-table.
func TestGeneratedTableMatchesTheDescription(t *testing.T) {
	doc, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../table_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("spec/errtable/table_gen.go is stale: run go generate ./spec/errtable")
	}
}

func TestGenerateRefusesADocumentWithoutTheTable(t *testing.T) {
	if _, err := generate([]byte("components: {schemas: {ErrorCode: {type: string}}}")); err == nil {
		t.Fatal("no error for a missing x-error-table")
	}
}
